"""A disk-calib run on gem5 beside what its profile's [disk.timing] predicts.

    python -m analysis.disk_calibration RUN_DIR [RUN_DIR ...]   # a Markdown table

The prediction (reclaimstudy/disk_model.py) comes from the parameters recorded in the
run's identity; for swap-out it takes the write commands the swap disk received in
that phase (from the model's own statistics) and prices them with the parameters.
"""

import json
import sys
from pathlib import Path

from pydantic import TypeAdapter

from analysis.gem5stats import select_values
from analysis.records import read_events, workload_metrics
from reclaimstudy import disk_model
from reclaimstudy.systems import DiskTiming
from reclaimstudy.workloads import get_workload

PHASES = ("random", "sequential", "random-write", "sequential-write", "swap-out")
TIMING_STATS = r"ide\.disks\d*\.timing\.(writes|bytesWritten)$"


def recorded_timing(run_dir: Path):
    identity = json.loads((run_dir / "run.json").read_text())["identity"]
    timing = identity["system"]["disk"]["timing"]
    if timing is None:
        raise ValueError(f"{run_dir}: the run's disk has no [disk.timing] model to predict from")
    return TypeAdapter(DiskTiming).validate_python(timing, strict=False), identity


def swap_writes(run_dir: Path, swap: str) -> tuple[int, int]:
    """Write commands and bytes the swap disk took during the swap-out phase."""
    blocks = select_values(run_dir / "stats.txt", [TIMING_STATS])
    block = blocks[PHASES.index("swap-out")]
    # One disk (a swap partition) is `disks`; two are `disks0` (root) and `disks1`.
    disk = "disks" if swap == "partition" else "disks1"
    prefix = next(k for k in block if f".{disk}.timing." in k).rsplit(".", 1)[0]
    return int(block[f"{prefix}.writes"]), int(block[f"{prefix}.bytesWritten"])


def calibration(run_dir: Path) -> list[dict]:
    """Per metric: measured in the guest, predicted from the parameters, and the error."""
    run_dir = Path(run_dir)
    timing, identity = recorded_timing(run_dir)
    workload = get_workload("disk-calib")
    file_bytes = next(d for d in workload.data if d.name == "calib.bin").size_bytes(
        identity["system"]["memory"]["size_mib"])
    commands, written = swap_writes(run_dir, identity["system"]["disk"]["swap"])
    predicted = disk_model.predicted_calibration(timing, file_bytes // 512,
                                                 swap_commands=commands, swap_bytes=written)
    measured = {m.name: m.value for m in workload_metrics("disk-calib", read_events(run_dir))}
    return [{"metric": name, "measured": measured[name], "predicted": value,
             "error": measured[name] / value - 1}
            for name, value in predicted.items() if name in measured]


def markdown(run_dirs: list[Path]) -> str:
    lines = ["| run | metric | measured | predicted | error |", "|---|---|---|---|---|"]
    for run_dir in run_dirs:
        for row in calibration(run_dir):
            scale, unit = (1e3, " ms") if row["metric"].endswith("_s") else (1, "")
            if row["metric"].endswith("per_mib"):
                scale, unit = 1e3, " ms/MiB"
            lines.append(f"| {Path(run_dir).name} | {row['metric']} | "
                         f"{row['measured'] * scale:.3f}{unit} | {row['predicted'] * scale:.3f}{unit} | "
                         f"{row['error']:+.1%} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown([Path(p) for p in sys.argv[1:]]))
