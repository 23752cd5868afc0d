"""Read a guest console log: the protocol's events, and whether the run failed and why.

Every event is a line "@@reclaim {json}" (workloads/lib/guest.h). Kernel messages may
share a line with an event, so the marker is searched anywhere in a line. A run is
good only if the job ended with status 0 and nothing went wrong on the way: a
kernel panic, an OOM kill, an error event, a non-zero exit or a missing end marker
make it failed, with the first such reason.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "@@reclaim "
PANIC = re.compile(r"Kernel panic - not syncing: ?(.*)")
OOM = re.compile(r"Out of memory: Killed process (\d+) \(([^)]*)\)|(\S+) invoked oom-killer")


@dataclass
class ConsoleResult:
    events: list[dict] = field(default_factory=list)
    status: str = "ok"
    reason: str | None = None
    garbled: list[str] = field(default_factory=list)  # marker lines whose JSON was unreadable

    def fail(self, reason: str):
        if self.status == "ok":
            self.status, self.reason = "failed", reason

    def of(self, event: str) -> list[dict]:
        return [e for e in self.events if e.get("event") == event]

    @property
    def phases(self) -> list[dict]:
        return self.of("phase")

    def phase_marks(self) -> list[tuple[float, str]]:
        """(t, name) of each phase's start, and (t, "after") where the last one ended."""
        return [(event["t"], event.get("name") or "after")
                for event in self.of("phase") + self.of("phases_done")]

    @property
    def records(self) -> list[dict]:
        return self.of("record")

    @property
    def policy(self) -> dict | None:
        found = self.of("policy")
        return found[0] if found else None


def parse_console(text: str) -> ConsoleResult:
    result = ConsoleResult()
    for line in text.splitlines():
        if panic := PANIC.search(line):
            result.fail(f"kernel panic: {panic[1].strip() or 'no message'}")
        if oom := OOM.search(line):
            victim = f"{oom[2]} (pid {oom[1]})" if oom[1] else f"invoked by {oom[3]}"
            result.fail(f"OOM kill: {victim}")
        where = line.find(MARKER)
        if where < 0:
            continue
        payload = line[where + len(MARKER):].strip()
        try:
            event = json.loads(payload)
        except json.JSONDecodeError:
            result.garbled.append(payload[:200])
            continue
        if not isinstance(event, dict) or "event" not in event:
            result.garbled.append(payload[:200])
            continue
        result.events.append(event)
        if event["event"] == "error":
            result.fail(f"{event.get('workload', '?')} failed (status {event.get('status')}): "
                        f"{event.get('message', '')}")
    ends = result.of("job_end")
    if not ends:
        last = result.events[-1]["event"] if result.events else "none"
        result.fail(f"truncated log: no job_end marker (last event: {last})")
    elif ends[-1].get("status") != 0:
        result.fail(f"workload exited with status {ends[-1].get('status')}")
    return result


def parse_console_file(path: Path) -> ConsoleResult:
    return parse_console(path.read_text(errors="replace"))
