"""A study's sweep log, `results/<study>/sweeps.jsonl`: a line when a sweep starts, one per
run it finishes and one when it ends (a Slurm submission writes one line); a run a killed
sweep published but had no time to log is logged by the next sweep, marked `recovered`.
A study that spans days of sweeping on several machines then says how often it was
started, which sweeps were cut short, and where and when each ran; publishing carries
the log into the repository beside the runs.
"""

import json
import os
import socket
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

LOG = "sweeps.jsonl"
STAMP = "%Y-%m-%dT%H:%M:%SZ"  # UTC, to the second: the log's `at`


def _now() -> str:
    return time.strftime(STAMP, time.gmtime())


def _line(entry: dict) -> str:
    return json.dumps(entry, sort_keys=True) + "\n"


def _oldest_first(log: list[dict]) -> list[dict]:
    """By time; at one second, a sweep's start before its runs and end."""
    return sorted(log, key=lambda e: (e.get("at", ""), e.get("event") != "start"))


def _append(path: Path, entry: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as log:  # one short line per write: appends do not interleave
        log.write(_line(entry))


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
        began = datetime.fromisoformat(record["started_at"]).astimezone(timezone.utc)
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


def entries(path: Path) -> list[dict]:
    """The log's lines, oldest first; a line cut by a crash mid-write is skipped."""
    out = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return _oldest_first(out)


def merge(sources: list[Path], target: Path) -> None:
    """Write into `target` every line of `sources` (and of target itself) once."""
    seen, merged = set(), []
    for entry in [e for path in [target, *sources] for e in entries(path)]:
        key = (entry.get("sweep"), entry.get("event"), entry.get("run_id"))
        if key not in seen:
            seen.add(key)
            merged.append(entry)
    merged = _oldest_first(merged)
    if merged:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(target.name + ".new")
        staging.write_text("".join(map(_line, merged)))
        staging.replace(target)


def summary(path: Path, run_ids: set[str] | None = None) -> dict | None:
    """How the study was swept: local sweeps (and how many recorded no end: cut short, or
    still running), Slurm submissions, hosts, first and last dates, and the runs local
    sweeps finished, ok and failed. With `run_ids` (the runs a report holds) only from the
    first sweep that finished one of them on: sweeps before it made runs since set aside
    (an older simulator, a changed study) and would overstate how often these were swept;
    `runs_shown` is how many of `run_ids` a logged sweep finished."""
    log = entries(path)
    if run_ids is not None:
        makers = {e["sweep"] for e in log if e["event"] == "run" and e.get("run_id") in run_ids}
        begun = [e["at"] for e in log if e["event"] == "start" and e["sweep"] in makers]
        if begun:
            log = [e for e in log if e.get("at", "") >= min(begun)]
    if not log:
        return None
    starts = {e["sweep"]: e for e in log if e["event"] == "start"}
    ends = {e["sweep"]: e for e in log if e["event"] == "end"}
    submits = [e for e in log if e["event"] == "submit"]
    finished = [e for e in log if e["event"] == "run"]
    stamps = [e["at"] for e in log if e.get("at")]
    return {"sweeps": len(starts), "unfinished": len(set(starts) - set(ends)),
            "submissions": len(submits),
            "hosts": sorted({e["host"] for e in [*starts.values(), *submits] if e.get("host")}),
            "first": min(stamps)[:10], "last": max(stamps)[:10],
            "runs_ok": sum(1 for e in finished if e.get("status") == "ok"),
            "runs_failed": sum(1 for e in finished if e.get("status") != "ok"),
            "runs_shown": None if run_ids is None else len(
                {e["run_id"] for e in finished if e.get("run_id") in run_ids})}
