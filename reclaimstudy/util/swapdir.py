"""Replace a folder by another in one step, so that no reader ever finds it missing.

Linux's renameat2(RENAME_EXCHANGE) swaps two paths atomically; where the file system
refuses it, two renames do the job with a moment in between without the folder.
"""

import ctypes
import errno
import os
import shutil
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` (both existing) atomically; False where the system cannot."""
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def replace_dir(new: Path, target: Path) -> Path | None:
    """Put `new` where `target` is. Returns where the old folder now is (to read what
    changed in it meanwhile, then remove), or None if there was none."""
    if not target.exists():
        new.rename(target)
        return None
    if exchange(new, target):
        return new  # the old folder is now at new's path
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    target.rename(old)
    new.rename(target)
    return old
