"""gem5's `stats.txt`, read: every dump block, with scalars, vectors and distributions;
and how a run's blocks map onto its workload phases.

A block sits between "---------- Begin Simulation Statistics ----------" and the
matching "End" line; each stat line is `name[::sub] value [pdf% cdf%] # description (unit)`.
Vectors and distributions come out as one row per `::sub` entry (`::samples`, `::mean`,
`::0-4`, `::total`, ...). `nan` and `inf` are kept as floats. A block without its End
line (a simulation killed mid-dump) is an error, never data. A segmented gem5 run
(backends/gem5/segments.py) dumps a partial block at each checkpoint inside a phase and
lists them in PARTIAL_FILE; such a block joins the next whole one. The gem5 backend
checks a finished run has one block, or one group of blocks, per phase (blocks_problem);
the tidy table reads the values.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

# One block per dump, between these two lines (gem5 v24.0's spelling).
BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"
LINE = re.compile(
    r"^(?P<name>[^\s:]+(?:::(?P<sub>\S+))?)\s+(?P<value>\S+)"
    r"(?:\s+(?P<pdf>-?[\d.]+|nan)%\s+(?P<cdf>-?[\d.]+|nan)%)?\s*(?:#\s*(?P<desc>.*))?$")
UNIT = re.compile(r"\((\([^()]*\)|[^()]*)\)\s*$")


class StatsError(ValueError):
    """A stats.txt that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Stat:
    name: str          # the base name, e.g. board.memory.mem_ctrl.readPktSize
    sub: str | None    # the part after '::' for vectors and distributions
    value: float
    pdf: float | None
    cdf: float | None
    unit: str | None
    description: str

    @property
    def key(self) -> str:
        return f"{self.name}::{self.sub}" if self.sub else self.name


def _number(text: str, where: str) -> float:
    try:
        return float(text)  # accepts nan, inf, -inf
    except ValueError:
        raise StatsError(f"{where}: value {text!r} is not a number") from None


def parse_stats_text(text: str, source: str = "stats.txt") -> list[list[Stat]]:
    """The blocks of a stats.txt, each a list of Stat in file order."""
    blocks: list[list[Stat]] = []
    current: list[Stat] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{source}:{number}"
        if not line:
            continue
        if line == BEGIN:
            if current is not None:
                raise StatsError(f"{where}: a block begins before the previous one ended")
            current = []
            continue
        if line == END.strip() or re.fullmatch(r"-+ End Simulation Statistics\s+-+", line):
            if current is None:
                raise StatsError(f"{where}: 'End' without 'Begin'")
            blocks.append(current)
            current = None
            continue
        if current is None:
            raise StatsError(f"{where}: a stat line outside any Begin/End block")
        match = LINE.match(line)
        if not match:
            raise StatsError(f"{where}: not a stat line: {line[:120]!r}")
        description = (match["desc"] or "").strip()
        unit = UNIT.search(description)
        full = match["name"]
        name, _, sub = full.partition("::")
        current.append(Stat(
            name=name, sub=sub or None, value=_number(match["value"], where),
            pdf=float(match["pdf"]) if match["pdf"] else None,
            cdf=float(match["cdf"]) if match["cdf"] else None,
            unit=unit[1].strip("()") if unit else None,
            description=UNIT.sub("", description).strip() if unit else description))
    if current is not None:
        raise StatsError(f"{source}: the last block has no End line (truncated file?)")
    return blocks


def parse_stats(path: Path) -> list[list[Stat]]:
    return parse_stats_text(Path(path).read_text(errors="replace"), str(path))


def stats_frame(path: Path):
    """One row per (block, stat) as a pandas DataFrame: block, key, name, sub, value, pdf,
    cdf, unit."""
    import pandas as pd  # only here: the gem5 backend reads this module without pandas

    rows = [{"block": index, "key": s.key, "name": s.name, "sub": s.sub, "value": s.value,
             "pdf": s.pdf, "cdf": s.cdf, "unit": s.unit}
            for index, block in enumerate(parse_stats(path)) for s in block]
    return pd.DataFrame(rows, columns=["block", "key", "name", "sub", "value", "pdf", "cdf",
                                       "unit"])


STAT_LINE = re.compile(r"^([^\s#-]\S*)[ \t]+(\S+)", re.M)


def select_values(path: Path, patterns: list[str]) -> list[dict[str, float]]:
    """Per block, the values of the stats whose full name (`name::sub`) matches one of
    `patterns`: the table's fast path, which reads only what it uses. Every block must
    be whole (Begin and End), as for parse_stats."""
    text = Path(path).read_text(errors="replace")
    wanted = re.compile("|".join(f"(?:{p})" for p in patterns))
    blocks, position = [], 0
    while (begin := text.find(BEGIN, position)) != -1:
        end = text.find(END, begin)
        following = text.find(BEGIN, begin + len(BEGIN))
        if end == -1 or (following != -1 and following < end):
            raise StatsError(f"{path}: a block has no End line (truncated file?)")
        values = {}
        for match in STAT_LINE.finditer(text, begin + len(BEGIN), end):
            if wanted.search(match[1]):
                values[match[1]] = _number(match[2], str(path))
        blocks.append(values)
        position = end + len(END)
    return blocks


def block_values(block: list[Stat]) -> dict[str, float]:
    return {s.key: s.value for s in block}


# gem5's host figures (time, rates, memory) and simFreq, a constant: what differs
# between two runs of one simulation.
HOST_STATS = ("host", "simFreq")


def simulated_values(path: Path) -> list[dict]:
    """Every block's simulated statistics, to compare two runs of one simulation (nan,
    which equals nothing, as text)."""
    return [{k: "nan" if v != v else v for k, v in block_values(b).items()
             if not k.startswith(HOST_STATS)} for b in parse_stats(path)]


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


PARTIAL_FILE = "stats-partial.json"  # a segmented run's partial blocks (backends/gem5/segments.py)


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
