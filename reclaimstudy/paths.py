"""Where things live: the repository, the build cache, the results."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL_PATCHES = REPO / "kernel-patches"
GEM5_PATCHES = REPO / "gem5-patches"
DISKSIM_PATCHES = REPO / "disksim-patches"
DISK_IMAGES = REPO / "disk-images"
WORKLOADS = REPO / "workloads"
CONFIGS = REPO / "configs"
RESULTS = REPO / "results"


def cache_dir() -> Path:
    """Built kernels, images and checkpoints, keyed by content hash.

    Outside the work tree so that a fresh clone on the same machine reuses them.
    """
    root = os.environ.get("RECLAIMSTUDY_CACHE") or Path.home() / ".cache" / "reclaimstudy"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
