"""ext4 file systems made from a directory with `mke2fs -d`: no loop mounts, no root needed."""

import os
import subprocess
import tempfile
from pathlib import Path

from reclaimstudy.artefacts.reproducible import ATIME, EPOCH
from reclaimstudy.errors import StudyError
from reclaimstudy.util import hostdeps


def _fixed_clock() -> dict:
    """e2fsprogs' environment with its clock at the epoch: the times mke2fs and debugfs
    stamp on the file system itself (creation, last write)."""
    return {**os.environ, "E2FSPROGS_FAKE_TIME": str(EPOCH)}


def make_ext4(tree: Path, image: Path, size_mib: int, label: str = "root") -> Path:
    """Write an ext4 image of `size_mib` MiB holding the contents of `tree`, the same
    bytes for the same contents whenever and wherever it is made: every inode's times
    and the file system's own are fixed (reproducible.py)."""
    mke2fs = hostdeps.require_tool("mke2fs")
    image.parent.mkdir(parents=True, exist_ok=True)
    image.unlink(missing_ok=True)
    paths = sorted(tree.rglob("*"))
    for path in [*paths, tree]:  # mke2fs copies modification times from the tree
        os.utime(path, (ATIME, EPOCH), follow_symlinks=False)
    # Fixed UUID and hash seed keep the image a function of its contents; the fake time
    # is the file system's creation and write times and every inode's creation time.
    result = subprocess.run(
        [mke2fs, "-q", "-F", "-t", "ext4", "-L", label, "-d", str(tree),
         "-U", "00000000-0000-4000-8000-000000000001",
         # Inode tables and journal zeroed now: left lazy, the guest's ext4lazyinit
         # zeroes them after every boot, writing in the background of every run
         # (~21 MiB on a 1.3 GiB root), as no long-installed desktop does.
         "-E", "hash_seed=00000000-0000-4000-8000-000000000002,"
               "lazy_itable_init=0,lazy_journal_init=0",
         str(image), f"{size_mib}M"],
        capture_output=True, text=True, env=_fixed_clock())
    if result.returncode != 0:
        raise StudyError(f"mke2fs could not make a {size_mib} MiB ext4 image of {tree} "
                         f"(too small for its contents?): {result.stderr.strip()}")
    names = ["/", "/lost+found", *(f"/{p.relative_to(tree)}" for p in paths)]
    _set_times(image, names)
    return image


def _set_times(image: Path, names: list[str]) -> None:
    """Every inode's change and access times, which mke2fs takes from the host's inode
    (change time: when the tree was made; access time: when it was last read)."""
    debugfs = hostdeps.require_tool("debugfs")
    odd = [n for n in names if '"' in n or "\n" in n]
    if odd:
        raise StudyError(f"cannot set the times of {odd[0]!r} in {image} with debugfs "
                         f"(a quote or newline in its name)")
    with tempfile.NamedTemporaryFile("w", suffix=".debugfs") as commands:
        for name in names:
            commands.write(f'sif "{name}" ctime @{EPOCH}\nsif "{name}" atime @{ATIME}\n')
        commands.flush()
        # debugfs stamps the superblock's last write time when it closes.
        result = subprocess.run([debugfs, "-w", "-f", commands.name, str(image)],
                                capture_output=True, text=True, env=_fixed_clock())
    # debugfs exits 0 whatever its commands did: each failure is a line on stderr.
    failures = [line for line in result.stderr.splitlines()
                if line.strip() and not line.startswith("debugfs ")]
    if result.returncode != 0 or failures:
        raise StudyError(f"debugfs could not set inode times in {image}: "
                         f"{(failures or [result.stderr.strip()])[0]}")
