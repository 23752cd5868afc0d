"""Writes a study's sweep log (its format and reading: reclaimstudy/results/sweeplog.py):
a sweep logs its start, each run it finishes and its end; a run a killed sweep published
but had no time to log is logged by the next sweep, marked `recovered`; publishing merges
the logs of every machine into the repository beside the runs.
"""

import os
import socket
import time
from datetime import datetime, timedelta, UTC
from pathlib import Path

from reclaimstudy.results.sweeplog import LOG, STAMP, as_line, entries, oldest_first


def _now() -> str:
    return time.strftime(STAMP, time.gmtime())


def _append(path: Path, entry: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as log:  # one short line per write: appends do not interleave
        log.write(as_line(entry))


def started(study_path: Path, **facts) -> str:
    """Log a sweep's start (`facts`: backend, jobs, only, planned, skipped, to_run); its id."""
    sweep = f"{socket.gethostname()}-{os.getpid()}-{time.time_ns()}"
    _append(study_path / LOG, {"sweep": sweep, "event": "start", "at": _now(),
                               "host": socket.gethostname(), **facts})
    return sweep


def finished(study_path: Path, sweep: str, run_id: str, status: str) -> None:
    """Log one run the sweep finished (ok or failed)."""
    _append(study_path / LOG, {"sweep": sweep, "event": "run", "at": _now(), "run_id": run_id,
                               "status": status})


def recover(study_path: Path, records: list[dict]) -> int:
    """Log the runs (their run.json `records`) that a sweep published but was killed
    before logging: the kill can fall between a run's publication and its log line. Each
    is given to the sweep that made it: the local sweep on its host that began last before
    it, if that sweep has no end; a run with no such sweep (a Slurm task's, or one older
    than the log) is left out. How many were logged."""
    log = entries(study_path / LOG)
    logged = {e.get("run_id") for e in log if e["event"] == "run"}
    ends = {e["sweep"] for e in log if e["event"] == "end"}
    starts = [e for e in log if e["event"] == "start"]
    count = 0
    for record in records:
        host = record.get("host", {})
        if record["run_id"] in logged or "slurm_job" in host:
            continue
        began = datetime.fromisoformat(record["started_at"]).astimezone(UTC)
        began_at = began.strftime(STAMP)  # the log's form, compared as text
        before = [e for e in starts if e.get("host") == host.get("node")
                  and e["at"] <= began_at]
        if not before or before[-1]["sweep"] in ends:
            continue
        done = began + timedelta(seconds=record["wall_seconds"])
        _append(study_path / LOG, {"sweep": before[-1]["sweep"], "event": "run",
                                   "at": done.strftime(STAMP),
                                   "run_id": record["run_id"], "status": record["status"],
                                   "recovered": True})
        count += 1
    return count


def ended(study_path: Path, sweep: str, **facts) -> None:
    """Log a sweep's end (`facts`: done, failed, wall_s, and `error` if it raised)."""
    _append(study_path / LOG, {"sweep": sweep, "event": "end", "at": _now(), **facts})


def submitted(study_path: Path, **facts) -> None:
    """Log a Slurm submission (`facts`: backend, runs, prepare_job, array_job)."""
    _append(study_path / LOG, {"sweep": f"slurm-{time.time_ns()}", "event": "submit",
                               "at": _now(), "host": socket.gethostname(), **facts})


def merge(sources: list[Path], target: Path) -> None:
    """Write into `target` every line of `sources` (and of target itself) once."""
    seen, merged = set(), []
    for entry in [e for path in [target, *sources] for e in entries(path)]:
        key = (entry.get("sweep"), entry.get("event"), entry.get("run_id"))
        if key not in seen:
            seen.add(key)
            merged.append(entry)
    merged = oldest_first(merged)
    if merged:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(target.name + ".new")
        staging.write_text("".join(map(as_line, merged)))
        staging.replace(target)
