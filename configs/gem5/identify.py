"""Print what this gem5 binary is, as one JSON line (run by the study tool).

    $GEM5 --quiet --outdir=DIR configs/gem5/identify.py
gem5 v24.0.0.1's own `-B` fails (m5.defines has no gem5Version), so we ask the
embedded modules directly.
"""

import importlib
import json

from m5 import defines

import _m5.core

# gem5-patches/ names itself in the module it adds (absent from a stock gem5).
try:
    series = getattr(importlib.import_module("m5.objects.DiskTiming"), "RECLAIMSTUDY_SERIES", None)
except ImportError:
    series = None

# gem5-patches/0005 with DiskSim linked in (`./study gem5 --disksim DIR`): the DiskSim
# build and the model's version.
try:
    disksim = {**importlib.import_module("m5.objects.reclaimstudy_disksim").RECLAIMSTUDY_DISKSIM,
               "timing": importlib.import_module("m5.objects.DiskSimTiming")
               .RECLAIMSTUDY_DISKSIM_TIMING}
except ImportError:
    disksim = None

# gem5-patches/0006 with SimpleSSD linked in (`./study gem5 --simplessd DIR`): the SimpleSSD
# build and the model's version.
try:
    simplessd = {**importlib.import_module("m5.objects.reclaimstudy_simplessd")
                 .RECLAIMSTUDY_SIMPLESSD,
                 "timing": importlib.import_module("m5.objects.SimpleSSDTiming")
                 .RECLAIMSTUDY_SIMPLESSD_TIMING}
except ImportError:
    simplessd = None
# gem5-patches/0007 beside it: SimpleSSD's NVMe controller on the PCI bus (its version).
if simplessd is not None:
    try:
        simplessd["nvme"] = importlib.import_module(
            "m5.objects.SimpleSSDNVMe").RECLAIMSTUDY_SIMPLESSD_NVME
    except ImportError:
        simplessd["nvme"] = None
    # gem5-patches/0008: the IDE drive behind an eMMC bus (its version; None without it).
    simplessd["emmc"] = getattr(importlib.import_module("m5.objects.SimpleSSDTiming"),
                                "RECLAIMSTUDY_SIMPLESSD_EMMC", None)

# gem5-patches/0009: the page walkers' atomic flag updates (its version; None without it,
# and in a gem5 without x86, which the study tool refuses by its options).
try:
    pte_atomic = getattr(importlib.import_module("m5.objects.X86TLB"), "RECLAIMSTUDY_PTE_ATOMIC",
                         None)
except ImportError:
    pte_atomic = None

print("RECLAIM-GEM5-IDENTITY " + json.dumps({
    "version": _m5.core.gem5Version,
    "reclaimstudy_series": series,
    "disksim": disksim,
    "simplessd": simplessd,
    "pte_atomic": pte_atomic,
    "options": {key: str(value) for key, value in defines.buildEnv.items()},
}))
