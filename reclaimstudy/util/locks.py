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
