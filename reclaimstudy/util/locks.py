"""Inter-process locks, so parallel runs build a kernel, image or checkpoint only once,
and nothing deletes what another process is using."""

import fcntl
from contextlib import contextmanager
from pathlib import Path

from reclaimstudy.util.progress import console


@contextmanager
def _flock(lock_path: Path, operation: int, waiting: str | None = None):
    """Yield True holding `operation` (LOCK_EX or LOCK_SH) on `lock_path`. Without
    `waiting`, False at once when another process holds a conflicting lock; with it,
    say `waiting` and wait for the lock."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        try:
            fcntl.flock(handle, operation | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is None:
                yield False
                return
            console.print(waiting)
            fcntl.flock(handle, operation)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def exclusive(lock_path: Path, what: str):
    """Hold an exclusive flock on `lock_path`; say so when waiting for another process."""
    with _flock(lock_path, fcntl.LOCK_EX, f"waiting for another process building {what}"):
        yield


@contextmanager
def shared(lock_path: Path):
    """Hold a shared flock on `lock_path`: many holders at once, none while another
    process holds it exclusively (see unless_shared)."""
    with _flock(lock_path, fcntl.LOCK_SH, f"waiting for {lock_path.name} to be let go"):
        yield


def unless_shared(lock_path: Path):
    """Yield True holding an exclusive flock on `lock_path` when no process holds it
    (shared or not), False at once when one does: for deleting what others may use."""
    return _flock(lock_path, fcntl.LOCK_EX)
