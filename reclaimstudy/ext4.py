"""ext4 file systems made from a directory with `mke2fs -d`: no loop mounts, no root needed."""

import subprocess
from pathlib import Path

from reclaimstudy import hostdeps
from reclaimstudy.errors import StudyError


def make_ext4(tree: Path, image: Path, size_mib: int, label: str = "root") -> Path:
    """Write an ext4 image of `size_mib` MiB holding the contents of `tree`."""
    mke2fs = hostdeps.require_tool("mke2fs")
    image.parent.mkdir(parents=True, exist_ok=True)
    image.unlink(missing_ok=True)
    # Fixed UUID and hash seed keep the image a function of its contents.
    result = subprocess.run(
        [mke2fs, "-q", "-F", "-t", "ext4", "-L", label, "-d", str(tree),
         "-U", "00000000-0000-4000-8000-000000000001",
         # Inode tables and journal zeroed now: left lazy, the guest's ext4lazyinit
         # zeroes them after every boot, writing in the background of every run
         # (~21 MiB on a 1.3 GiB root), as no long-installed desktop does.
         "-E", "hash_seed=00000000-0000-4000-8000-000000000002,"
               "lazy_itable_init=0,lazy_journal_init=0",
         str(image), f"{size_mib}M"],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise StudyError(f"mke2fs could not make a {size_mib} MiB ext4 image of {tree} "
                         f"(too small for its contents?): {result.stderr.strip()}")
    return image
