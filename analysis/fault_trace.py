"""Which pages a traced program faulted on, phase by phase: the console of a run made
with `--job-extra analysis/traces/hot-stream-faults.sh` holds the program's map
("TRACE-MAPS:"), its files' inode numbers ("TRACE: ino"), the trace ("TRACE-EV:") and
the workload's phase marks. Each fault is put in a region of the map (the program's
code, the rest of its binary, its data file, its heap) and counted major when the
program itself read its file into the page cache before its next fault: an upper bound
(a fault on a page still cached can start readahead, counted here), and a read another
task started is not seen (a fault that waited on it counts as minor). The streaming
program's faults are counted apart ("hot-stream faults", major when it read its own
binary before its next fault): its map is not printed, so they have no region.
A phase whose workload record gives its loop's "seconds" (hot-stream's stream) is split
in two: "stream" up to the loop's end and "stream, after the loop" for what the
workload's end-of-phase code (signal, program's reply, vmstat) caused. The loop's end is
taken as the phase mark's t plus those seconds (both CLOCK_MONOTONIC, the trace's clock
too), so it is early by the time the workload takes to read vmstat before its loop.

  .venv/bin/python -m analysis.fault_trace results/adhoc/RUN/console.log
"""

import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from reclaimstudy.results.console import parse_console

EVENT = re.compile(r"^TRACE-EV:\s+(\S+)\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")
HEAP_BYTES = 2 << 20  # hot-stream's interactive program: --app-heap-mib=2


@dataclass
class Trace:
    maps: list = field(default_factory=list)     # (low, high, perms, path)
    files: dict = field(default_factory=dict)    # inode -> "exe" / "dat"
    phases: list = field(default_factory=list)   # (start, name)
    loop_ends: dict = field(default_factory=dict)  # phase -> t its workload's loop ended
    events: list = field(default_factory=list)   # (t, task, kind, fields)


def read(console: str) -> Trace:
    """A console's trace lines, and its phase marks as the run's own parser reads them."""
    trace = Trace()
    parsed = parse_console(console)
    trace.phases = parsed.phase_marks()
    starts = {name: t for t, name in trace.phases}
    for rec in parsed.records:
        if rec.get("kind") == "phase" and "seconds" in rec and rec.get("phase") in starts:
            trace.loop_ends[rec["phase"]] = starts[rec["phase"]] + rec["seconds"]
    for line in console.splitlines():
        if line.startswith("TRACE-MAPS: "):
            parts = line.split()
            low, high = (int(x, 16) for x in parts[1].split("-"))
            trace.maps.append((low, high, parts[2], parts[6] if len(parts) > 6 else ""))
        elif line.startswith("TRACE: ino "):
            for pair in line.split()[2:]:
                name, inode = pair.split("=")
                trace.files[int(inode)] = name
        elif match := EVENT.match(line):
            task, t, kind, rest = match.groups()
            trace.events.append((float(t), task, kind, rest))
    return trace


def region(trace: Trace, address: int) -> str:
    for low, high, perms, path in trace.maps:
        if low <= address < high:
            if path.endswith(".dat"):
                return "data file"
            if path and not path.startswith("["):
                return "code" if "x" in perms else "binary, not code"
            if not path and high - low == HEAP_BYTES:
                return "heap"
            return path or "other anonymous"
    return "unmapped"


def phase_at(trace: Trace, t: float) -> str:
    name = "before"
    for start, phase in trace.phases:
        if t >= start:
            name = phase
    if name in trace.loop_ends and t >= trace.loop_ends[name]:
        return f"{name}, after the loop"
    return name


def summary(trace: Trace) -> dict[str, Counter]:
    """phase -> Counter of "REGION faults", "REGION major" and "FILE read/evicted", and
    "hot-stream faults" and "hot-stream major" for the streaming program."""
    counts: dict[str, Counter] = {}
    pending: dict[str, list] = {}  # program -> [phase, region, whether it read] of its last fault

    def close(program):
        if program in pending:
            phase, where, read = pending.pop(program)
            counts.setdefault(phase, Counter())[f"{where} major"] += read

    for t, task, kind, rest in trace.events:
        phase = phase_at(trace, t)
        here = counts.setdefault(phase, Counter())
        program = task.rsplit("-", 1)[0]
        if kind == "page_fault_user":
            close(program)
            address = int(re.search(r"address=0x([0-9a-f]+)", rest).group(1), 16)  # type: ignore[union-attr]
            # The map printed is the interactive program's; the other has none here.
            where = region(trace, address) if program == "interactive" else program
            here[f"{where} faults"] += 1
            pending[program] = [phase, where, 0]
        elif kind.startswith("mm_filemap_"):
            inode = int(re.search(r"ino ([0-9a-f]+)", rest).group(1), 16)  # type: ignore[union-attr]
            added = kind == "mm_filemap_add_to_page_cache"
            here[f"{trace.files.get(inode, inode)} {'read' if added else 'evicted'}"] += 1
            if added and program in pending:
                pending[program][2] = 1
    for program in list(pending):
        close(program)
    return counts


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    with open(argv[0], errors="replace") as handle:
        trace = read(handle.read())
    if not trace.maps:
        print(f"{argv[0]}: no TRACE-MAPS lines: not a run made with a --job-extra trace",
              file=sys.stderr)
        return 1
    for phase, counts in summary(trace).items():
        print(phase)
        for key, value in sorted(counts.items()):
            print(f"  {key:28s} {value:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
