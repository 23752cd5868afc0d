"""A run's directory while it is made: assembled in the study's hidden .partial folder,
named after the process and machine writing it, and renamed into place only once its
run.json is written, so an interrupted run can never look complete. Runs are read back
by reclaimstudy/results/record.py."""

import json
import os
import shutil
from pathlib import Path

from reclaimstudy.results.record import PARTIAL


def partial_name(identifier: str, pid: int | None = None, host: str | None = None) -> str:
    """A run being written: by which process on which machine (results folders are
    shared by the nodes of a cluster, and a pid means nothing on another node)."""
    return f"{identifier}-{pid or os.getpid()}@{host or this_host()}"


def partial_owner(name: str) -> tuple[int | None, str]:
    """(pid, host) of a partial directory's name; host "" for names without one."""
    tail = name.rsplit("-", 1)[-1]
    pid, _, host = tail.partition("@")
    return (int(pid) if pid.isdigit() else None), host


def partial_in_progress(name: str) -> bool | None:
    """Whether another process on this machine is still writing this partial directory;
    None when it belongs to another machine (only that machine can tell)."""
    pid, host = partial_owner(name)
    if host and host != this_host():
        return None
    if pid is None or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def this_host() -> str:
    return os.uname().nodename


def partials_of(study_path: Path, identifier: str) -> list[Path]:
    return sorted((study_path / PARTIAL).glob(f"{identifier}-*"), key=lambda p: p.stat().st_mtime)


def discard_partials(study_path: Path, identifier: str) -> None:
    """Throw away what earlier attempts at a run left half-written (a cluster task does
    this first: its submission made it the run's only attempt)."""
    for path in partials_of(study_path, identifier):
        shutil.rmtree(path, ignore_errors=True)


def publish_leftover(study_path: Path, identifier: str, record: dict) -> Path:
    """Publish a run that died unpublished (a cluster task Slurm ended) with `record`,
    keeping what it had written: its newest partial directory, or an empty one."""
    leftovers = partials_of(study_path, identifier)
    for older in leftovers[:-1]:
        shutil.rmtree(older, ignore_errors=True)
    return RunDirectory(study_path, identifier, leftovers[-1] if leftovers else None).publish(record)


class RunDirectory:
    """Where a run is assembled, then published atomically with its run.json.
    `leftover`: a partial directory an earlier process left, taken over as it is."""

    def __init__(self, study_path: Path, identifier: str, leftover: Path | None = None):
        self.final = study_path / identifier
        self.path = leftover or study_path / PARTIAL / partial_name(identifier)
        if leftover is None:
            shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)

    def publish(self, record: dict) -> Path:
        (self.path / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        if self.final.exists():
            shutil.rmtree(self.final)  # a failed earlier attempt being redone
        self.path.rename(self.final)
        return self.final
