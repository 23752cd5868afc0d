"""gem5's stats.txt layout, as far as a run's publication depends on it: one block per
dump, between these two lines (gem5 v24.0's spelling). analysis/gem5stats.py parses
the blocks; the gem5 backend checks a finished run has one whole block per phase."""

import json
from pathlib import Path

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"


def blocks_problem(stats: Path, phases: int) -> str | None:
    """Why a gem5 stats.txt cannot be read phase by phase (one whole block per phase, or
    in a segmented run one group of blocks per phase), or None. An extra block (e.g.
    gem5 dumped on SIGUSR1) or a missing one would shift every number onto the wrong
    phase."""
    if not stats.is_file():
        return "gem5 wrote no stats.txt"
    text = stats.read_text(errors="replace")
    begins, ends = text.count(BEGIN), text.count(END)
    if begins != ends:
        return f"stats.txt has {begins} blocks begun and {ends} ended: a dump was cut short"
    partial = partial_blocks(stats.parent)
    groups = len(phase_groups(begins, partial))
    if groups != phases:
        joined = " (joining the blocks cut at checkpoints)" if partial else ""
        return (f"stats.txt has {groups} blocks{joined} for the guest's {phases} phases: one "
                f"block per phase is expected, so the numbers cannot be attributed")
    return None


PARTIAL_FILE = "stats-partial.json"  # a segmented run's partial blocks (gem5_segments.py)


def partial_blocks(run_dir: Path) -> set[int]:
    """Blocks a segmented run dumped at a checkpoint mid-phase: the rest of the phase
    follows in the next block. None in an uncut run."""
    path = run_dir / PARTIAL_FILE
    return set(json.loads(path.read_text())["partial_blocks"]) if path.is_file() else set()


def phase_groups(blocks: int, partial: set[int]) -> list[list[int]]:
    """The block indices that make up each phase, in order: partial blocks join the next
    whole one. A partial block with no whole one after it (a checkpoint after the last
    phase closed) belongs to no phase."""
    groups, pending = [], []
    for index in range(blocks):
        pending.append(index)
        if index not in partial:
            groups.append(pending)
            pending = []
    return groups
