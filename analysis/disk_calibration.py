"""A disk-calib run on gem5 beside what its profile's [disk.timing] predicts.

    python -m analysis.disk_calibration RUN_DIR[:NULL_RUN_DIR] ...   # a Markdown table

The prediction (reclaimstudy/config/disk_model.py) comes from the parameters recorded in the
run's identity; for swap-out it takes the write commands the swap disk received in
that phase (from the model's own statistics) and prices them with the parameters.
A run whose disk the analytic model does not time (DiskSim, SimpleSSD, gem5's fixed
delay) has no prediction: the table says so, and names the run's reference instead.
"""

import json
import sys
from pathlib import Path

from analysis.records import read_events, workload_metrics
from reclaimstudy.config import disk_model
from reclaimstudy.config.systems import FlashTiming, HddTiming
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.results.gem5_stats import select_values

PHASES = ("random", "sequential", "random-write", "sequential-write", "swap-out")
# Metrics whose guest work runs while the disk works: reclaim goes on unmapping and
# submitting pages while earlier ones are written. Their time lies between the longer
# of the two (all overlapped) and their sum (none).
OVERLAPPED = {"swap_out_s_per_mib"}
TIMING_STATS = r"ide\.disks\d*\.timing\.(writes|bytesWritten|serviceTicks)$"
TICKS_PER_S = 1e12
MIB = 1 << 20


def _identity(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["identity"]


def no_prediction(run_dir: Path) -> str | None:
    """None when the run's recorded disk has an analytic prediction; otherwise the run
    and why not (what times its disk, and its reference)."""
    # A system identity leaves [disk.timing] out when there is none (gem5's delay).
    why = disk_model.why_no_prediction(_identity(run_dir)["system"]["disk"].get("timing"))
    return None if why is None else f"{Path(run_dir).name}: {why}"


def recorded_timing(run_dir: Path) -> tuple[HddTiming | FlashTiming, dict]:
    identity = _identity(run_dir)
    why = no_prediction(run_dir)
    if why is not None:
        raise disk_model.NoPrediction(why)
    timing = identity["system"]["disk"]["timing"]
    kind = HddTiming if timing["model"] == "hdd" else FlashTiming
    # Every parameter as recorded: one filled in from today's defaults would price the
    # run by a disk it may not have had.
    missing = sorted(set(kind.model_fields) - set(timing))
    if missing:
        raise StudyError(f"{run_dir}: the run's [disk.timing] (model = {timing['model']!r}) "
                         f"does not record {', '.join(missing)}; a prediction needs every "
                         f"parameter the run had, not a default")
    return kind.model_validate(timing, strict=False), identity


def swap_disk(run_dir: Path, swap: str) -> dict:
    """What the swap disk's model did during the swap-out phase: write commands, bytes,
    and the time it charged them (its own statistics)."""
    blocks = select_values(run_dir / "stats.txt", [TIMING_STATS])
    block = blocks[PHASES.index("swap-out")]
    # One disk (a swap partition) is `disks`; two are `disks0` (root) and `disks1`.
    disk = "disks" if swap == "partition" else "disks1"
    prefix = next(k for k in block if f".{disk}.timing." in k).rsplit(".", 1)[0]
    return {name: block[f"{prefix}.{name}"] for name in ("writes", "bytesWritten", "serviceTicks")}


def guest_measured(run_dir: Path) -> dict[str, float]:
    return {m.metric: m.value for m in workload_metrics("disk-calib", read_events(run_dir))}


def _as_time(metric: str, value: float) -> float:
    """Seconds per request, or per MiB for a rate."""
    return 1 / value if metric.endswith("_mib_s") else value


def calibration(run_dir: Path, null_dir: Path | None = None) -> list[dict]:
    """Per metric: measured in the guest, predicted from the parameters, and the error.

    The parameters predict the disk's own time. With `null_dir`, a run of the same
    system on a disk that takes no time (disk_model.null_disk), its measurements are the
    guest's own IO path, and they are added: the prediction is then what the guest
    should see. Swap-out's guest time also holds the kernel's reclaim work, which the
    null run measures too, and overlaps the disk's writes: its prediction is a range
    (`predicted_low` to `predicted`; see OVERLAPPED). Without a null run, swap-out is
    compared at the device (the time the model charged the swap disk for the commands
    the kernel issued)."""
    run_dir = Path(run_dir)
    timing, identity = recorded_timing(run_dir)
    workload = get_workload("disk-calib")
    file_bytes = next(d for d in workload.data if d.name == "calib.bin").size_bytes(
        identity["system"]["memory"]["size_mib"])
    # A system identity leaves the swap layout out at its default, "device".
    swap = swap_disk(run_dir, identity["system"]["disk"].get("swap", "device"))
    arguments = identity["workload"]["arguments"]
    predicted = disk_model.predicted_calibration(
        timing, file_bytes // 512, swap_commands=int(swap["writes"]),
        swap_bytes=int(swap["bytesWritten"]), read_bytes=arguments["seq_mib"] * MIB,
        write_bytes=arguments["seq_write_mib"] * MIB)
    measured = guest_measured(run_dir)
    guest_path = guest_measured(Path(null_dir)) if null_dir else {}
    rows = []
    for name, value in predicted.items():
        if name not in measured or (name == "swap_out_s_per_mib" and not guest_path):
            continue
        low = None
        if name in guest_path:
            disk_time, path_time = _as_time(name, value), _as_time(name, guest_path[name])
            value = _as_time(name, disk_time + path_time)
            if name in OVERLAPPED:
                low = _as_time(name, max(disk_time, path_time))
        rows.append({"metric": name, "measured": measured[name], "predicted": value,
                     "predicted_low": low, "guest_path": guest_path.get(name),
                     "error": range_error(measured[name], low if low is not None else value,
                                          value)})
    if "swap_out_s_per_mib" in measured:
        device = swap["serviceTicks"] / TICKS_PER_S / (swap["bytesWritten"] / MIB)
        if not guest_path:
            rows.append({"metric": "swap_out_s_per_mib", "measured": measured["swap_out_s_per_mib"],
                         "predicted": None, "predicted_low": None, "guest_path": None,
                         "error": None})
        rows.append({"metric": "swap_out_device_s_per_mib", "measured": device,
                     "predicted": predicted["swap_out_s_per_mib"], "predicted_low": None,
                     "guest_path": None, "error": device / predicted["swap_out_s_per_mib"] - 1})
    return rows


def range_error(measured: float, low: float, high: float) -> float:
    """Relative distance from the predicted range [low, high] (0 inside it); for a rate
    the bounds may come in either order."""
    low, high = min(low, high), max(low, high)
    if measured < low:
        return measured / low - 1
    if measured > high:
        return measured / high - 1
    return 0.0


def _shown(value, metric: str) -> str:
    if value is None:
        return "-"
    if metric.endswith("_mib_s"):
        return f"{value:.1f} MiB/s"
    if metric.endswith("_per_mib"):
        return f"{value * 1e3:.2f} ms/MiB"
    return f"{value * 1e3:.3f} ms"


def markdown(pairs: list[tuple[Path, Path | None]]) -> str:
    """The calibration table of the runs with a prediction, then, for any without one,
    what times its disk and its reference."""
    lines = ["| run | metric | measured | predicted | of which the guest's own path | error |",
             "|---|---|---|---|---|---|"]
    unpredicted = []
    for run_dir, null_dir in pairs:
        why = no_prediction(run_dir)
        if why is not None:
            unpredicted.append(why)
            continue
        for row in calibration(run_dir, null_dir):
            error = "-" if row["error"] is None else f"{row['error']:+.1%}"
            predicted = _shown(row["predicted"], row["metric"])
            if row["predicted_low"] is not None:
                predicted = f"{_shown(row['predicted_low'], row['metric'])} to {predicted}"
            lines.append(f"| {Path(run_dir).name[:40]} | {row['metric']} | "
                         f"{_shown(row['measured'], row['metric'])} | {predicted} | "
                         f"{_shown(row['guest_path'], row['metric'])} | {error} |")
    if len(unpredicted) == len(pairs):
        lines = []
    if unpredicted:
        lines += [""] if lines else []
        lines += ["No analytic prediction, so not calibrated here:", ""]
        lines += [f"- {why}" for why in unpredicted]
    return "\n".join(lines)


if __name__ == "__main__":
    # RUN_DIR[:NULL_RUN_DIR] ...
    try:
        print(markdown([(Path(a.split(":")[0]), Path(a.split(":")[1]) if ":" in a else None)
                        for a in sys.argv[1:]]))
    except StudyError as error:
        sys.exit(f"analysis.disk_calibration: {error}")
