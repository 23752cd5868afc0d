"""gem5's stats.txt layout, as far as a run's publication depends on it: one block per
dump, between these two lines (gem5 v24.0's spelling). analysis/gem5stats.py parses
the blocks; the gem5 backend checks a finished run has one whole block per phase."""

from pathlib import Path

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"


def blocks_problem(stats: Path, phases: int) -> str | None:
    """Why a gem5 stats.txt cannot be read phase by phase (one whole block per phase),
    or None. An extra block (e.g. gem5 dumped on SIGUSR1) or a missing one would shift
    every number onto the wrong phase."""
    if not stats.is_file():
        return "gem5 wrote no stats.txt"
    text = stats.read_text(errors="replace")
    begins, ends = text.count(BEGIN), text.count(END)
    if begins != ends:
        return f"stats.txt has {begins} blocks begun and {ends} ended: a dump was cut short"
    if begins != phases:
        return (f"stats.txt has {begins} blocks for the guest's {phases} phases: one block "
                f"per phase is expected, so the numbers cannot be attributed")
    return None
