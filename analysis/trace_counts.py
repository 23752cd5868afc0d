"""A counting trace's numbers, phase by phase: the console of a run made with
`--job-extra analysis/traces/swap-write-requests.sh` holds the job's totals
("TRACE-COUNT: class n") and the same counts per 10 ms of CLOCK_MONOTONIC ("TRACE-AT:
start n..." in "TRACE-COLUMNS:" order). A 10-ms slice goes to the phase its start falls
in; the slices that straddle a phase's start are also counted apart ("boundary"), the
most that can sit in the wrong phase.

  .venv/bin/python -m analysis.trace_counts results/STUDY/RUN ...
"""

import re
import sys
from bisect import bisect_right
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.results.console import parse_console

SLICE_S = 0.01
# a class is one word, or two (make-grep-evictions.sh: "units added")
TOTAL = re.compile(r"^TRACE-COUNT: (\S+(?: \S+)?) (\d+)$", re.M)


def totals(console: str) -> dict[str, int]:
    """The job's counts: "TRACE-COUNT: class n" lines, from any counting trace."""
    return {name: int(n) for name, n in TOTAL.findall(console)}


def slices(console: str) -> list[tuple[float, dict[str, int]]]:
    """(start, counts) per 10-ms slice that saw an event."""
    columns = None
    found = []
    for line in console.splitlines():
        if line.startswith("TRACE-COLUMNS:"):
            columns = line.split()[1:]
        elif line.startswith("TRACE-AT:"):
            if columns is None:
                raise StudyError("a TRACE-AT line before TRACE-COLUMNS: not this trace's output")
            start, *values = line.split()[1:]
            if len(values) != len(columns):
                raise StudyError(f"TRACE-AT {start}: {len(values)} values for "
                                 f"{len(columns)} columns")
            found.append((float(start), dict(zip(columns, map(int, values)))))
    return found


def by_phase(console: str) -> dict[str, dict[str, int]]:
    """The slices summed per phase ("before" the first mark, the phases by name, "after"
    the last), and "boundary": the slices that hold a phase's start."""
    marks = parse_console(console).phase_marks()
    if not marks:
        raise StudyError("no phase marks in the console: cannot split the trace by phase")
    starts = [t for t, _ in marks]
    names = ["before"] + [name for _, name in marks]
    out: dict[str, dict[str, int]] = {}
    for start, counts in slices(console):
        keys = [names[bisect_right(starts, start)]]
        if any(start < t < start + SLICE_S for t in starts):
            keys.append("boundary")
        for key in keys:
            phase = out.setdefault(key, {})
            for name, n in counts.items():
                phase[name] = phase.get(name, 0) + n
    return out


def main(run_dirs: list[str]) -> None:
    for run_dir in map(Path, run_dirs):
        console = (run_dir / "console.log").read_text(errors="replace")
        print(run_dir.name)
        print("  job", totals(console))
        for phase, counts in by_phase(console).items():
            print(f"  {phase}", counts)


if __name__ == "__main__":
    main(sys.argv[1:])
