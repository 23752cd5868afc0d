"""Inter-process locks, so parallel runs build a kernel, image or checkpoint only once."""

import fcntl
from contextlib import contextmanager
from pathlib import Path

from reclaimstudy.util.progress import console


@contextmanager
def exclusive(lock_path: Path, what: str):
    """Hold an exclusive flock on `lock_path`; say so when waiting for another process."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            console.print(f"waiting for another process building {what}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def shared(lock_path: Path):
    """Hold a shared flock on `lock_path`: many holders at once, none while another
    process holds it exclusively (see unless_shared)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def unless_shared(lock_path: Path):
    """Yield True holding an exclusive flock on `lock_path` when no process holds it
    (shared or not), False at once when one does: for deleting what others may use."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
