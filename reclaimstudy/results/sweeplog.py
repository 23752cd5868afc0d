"""A study's sweep log, `results/<study>/sweeps.jsonl`, read: a line when a sweep starts,
one per run it finishes and one when it ends (a Slurm submission writes one line), each
a JSON object. A study that spans days of sweeping on several machines then says how
often it was started, which sweeps were cut short, and where and when each ran. Written
by reclaimstudy/campaigns/sweeplog_writer.py.
"""

import json
from pathlib import Path

LOG = "sweeps.jsonl"
STAMP = "%Y-%m-%dT%H:%M:%SZ"  # UTC, to the second: the log's `at`


def as_line(entry: dict) -> str:
    return json.dumps(entry, sort_keys=True) + "\n"


def oldest_first(log: list[dict]) -> list[dict]:
    """By time; at one second, a sweep's start before its runs and end."""
    return sorted(log, key=lambda e: (e.get("at", ""), e.get("event") != "start"))


def entries(path: Path) -> list[dict]:
    """The log's lines, oldest first; a line cut by a crash mid-write is skipped."""
    out = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return oldest_first(out)


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
