"""What each storage device costs the guest, from a study's disk-calib runs: one row per
system, the mean (and range over repetitions) of the device's measured costs, and the
ratio a reclaim heuristic trades on: a file refault costs about one random 4 KiB read,
an anonymous refault one swap-in (a major fault, its readahead included).

    python -m analysis.device_costs RESULTS_DIR/STUDY   # a Markdown table

The ratio is taken per repetition and then averaged, so each repetition's own device
luck (the rotational positions its seed gives) stays paired with itself.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.metrics import SWAP_ROTATIONAL, SWAP_SOLID_STATE  # noqa: E402
from analysis.numbers import amount  # noqa: E402
from reclaimstudy.config.systems import NON_ROTATING_MODELS  # noqa: E402

WORKLOAD = "disk-calib"
# (metric, phase, column, scale to the column's unit)
COSTS = [
    ("random_4k_latency_s", "random", "random_read_us", 1e6),
    ("sequential_mib_s", "sequential", "sequential_read_mib_s", 1.0),
    ("random_4k_write_latency_s", "random-write", "random_write_us", 1e6),
    ("sequential_write_mib_s", "sequential-write", "sequential_write_mib_s", 1.0),
    ("swap_out_s_per_mib", "swap-out", "swap_out_ms_per_mib", 1e3),
    ("swap_in_s_per_fault", "swap-in", "swap_in_us_per_fault", 1e6),
]
RATIO = "refault_ratio"  # random_read_us / swap_in_us_per_fault


def cost_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per backend and system of `table`'s successful disk-calib runs (QEMU's
    numbers never pooled with gem5's): each cost's mean and min/max over repetitions,
    the file-refault/swap-in ratio, the swap device's class as the guest took it, and
    the number of repetitions. Empty when there are none."""
    runs = table[(table["workload"] == WORKLOAD) & (table["status"] == "ok")]
    if runs.empty:
        return pd.DataFrame()
    wide = []
    for (backend, system, repetition), part in runs.groupby(
            ["backend", "system", "repetition"], sort=False):
        # a guest fact has no phase (None, or NaN once through parquet)
        values = {(r.source, r.metric, r.phase if isinstance(r.phase, str) else None): r.value
                  for r in part.itertuples()}
        one = {"backend": backend, "system": system, "repetition": repetition}
        for metric, phase, column, scale in COSTS:
            value = values.get(("workload", metric, phase))
            one[column] = None if value is None else value * scale
        for spec in (SWAP_ROTATIONAL, SWAP_SOLID_STATE):
            one[spec.name] = values.get(("guest", spec.name, None))
        one[RATIO] = one["random_read_us"] / one["swap_in_us_per_fault"] \
            if one["random_read_us"] and one["swap_in_us_per_fault"] else None
        wide.append(one)
    frame = pd.DataFrame(wide)
    columns = [c for _, _, c, _ in COSTS] + [RATIO]
    rows = []
    for (backend, system), part in frame.groupby(["backend", "system"], sort=False):
        row = {"backend": backend, "system": system, "repetitions": len(part)}
        for column in columns:
            values = part[column].dropna()
            row[column] = values.mean() if len(values) else None
            row[column + "_min"] = values.min() if len(values) else None
            row[column + "_max"] = values.max() if len(values) else None
        for spec in (SWAP_ROTATIONAL, SWAP_SOLID_STATE):
            seen = set(part[spec.name].dropna())
            # one value for every repetition, or the disagreement shows as None
            row[spec.name] = seen.pop() if len(seen) == 1 else None
        rows.append(row)
    return pd.DataFrame(rows).sort_values(RATIO, ascending=False, na_position="last",
                                          ignore_index=True)


def devices(identities: dict[str, dict]) -> dict[str, dict]:
    """Per system, from a run identity's system: the drive holding its files, where it
    swaps (the same drive, or zram and its compressor), and the swap class the guest
    should see (swap_rotational, swap_solid_state): zram and a non-rotating drive's
    swap solid state, a rotating drive's (or gem5's delay, which reports no rate) not."""
    named = {}
    for system, profile in identities.items():
        disk = profile["disk"]
        timing = disk.get("timing") or {}
        drive = timing.get("drive") or timing.get("device") or \
            f"gem5's delay, {disk.get('delay_us')} us"
        zram = disk.get("swap") == "zram"
        swap = f"zram ({disk.get('compressor')})" if zram else "the same drive"
        solid = zram or timing.get("model") in NON_ROTATING_MODELS
        named[system] = {"drive": drive, "swap": swap,
                         "expected": (float(not solid), float(solid))}
    return named


def cost_figure(costs: pd.DataFrame, path: Path) -> Path | None:
    """Two panels, one bar per system: the random 4 KiB read and the swap-in's cost per
    fault (log scale: devices span decades), and their ratio, each with its range over
    repetitions."""
    shown = costs.dropna(subset=[RATIO])
    if shown.empty:
        return None
    shown = shown.assign(label=shown["system"] + " [" + shown["backend"] + "]")
    names = list(shown["label"])[::-1]
    part = shown.set_index("label").loc[names]  # bottom to top
    y = range(len(names))
    fig, (costs_ax, ratio_ax) = plt.subplots(1, 2, figsize=(11, 0.45 * len(names) + 1.6),
                                             sharey=True)
    for offset, column, label in ((-0.2, "random_read_us", "random 4 KiB read (a file refault)"),
                                  (0.2, "swap_in_us_per_fault", "swap-in, per major fault")):
        low, high = part[column] - part[column + "_min"], part[column + "_max"] - part[column]
        costs_ax.barh([i + offset for i in y], part[column], height=0.4, label=label,
                      xerr=[low, high], capsize=2)
    costs_ax.set_xscale("log")
    costs_ax.set_xlabel("microseconds (bar: mean; whisker: min-max over repetitions)")
    costs_ax.set_yticks(list(y), names)
    costs_ax.legend(fontsize=8, loc="lower right")
    ratio_ax.barh(list(y), part[RATIO], color="grey",
                  xerr=[part[RATIO] - part[RATIO + "_min"], part[RATIO + "_max"] - part[RATIO]],
                  capsize=2)
    ratio_ax.axvline(1.0, color="black", linewidth=0.8)
    ratio_ax.set_xscale("log")
    ratio_ax.set_xlabel("file refault / swap-in (1: equal cost)")
    fig.suptitle("What a refault costs the guest on each device (disk-calib)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _cell(row: pd.Series, column: str) -> str:
    value = row.get(column)
    if value is None or pd.isna(value):
        return "-"
    low, high = row.get(column + "_min"), row.get(column + "_max")
    text = amount(value)
    if row["repetitions"] > 1 and low is not None and not pd.isna(low):
        text += f" [{amount(low)}, {amount(high)}]"
    return text


def _flag(value) -> str:
    return "-" if value is None or pd.isna(value) else str(int(value))


def _swap_class(row: pd.Series, expected: tuple[float, float] | None) -> str:
    """What the guest took its swap for, in bold with the profile's class where the two
    differ (a drive that reports the wrong class, or runs from before it was fixed)."""
    seen = (row[SWAP_ROTATIONAL.name], row[SWAP_SOLID_STATE.name])
    text = f"{_flag(seen[0])} / {_flag(seen[1])}"
    if expected is None or any(v is None or pd.isna(v) for v in seen) or \
            tuple(seen) == expected:
        return text
    return f"**{text} (profile: {_flag(expected[0])} / {_flag(expected[1])})**"


def markdown(costs: pd.DataFrame, named: dict[str, dict] | None = None) -> str:
    """`costs` (cost_table) as a Markdown table, each cell its mean [min, max]."""
    named = named or {}
    lines = ["| system [backend] | drive | swap | swap rotational / SS | random 4 KiB read, us | "
             "sequential read, MiB/s | random 4 KiB write, us | sequential write, MiB/s | "
             "swap-out, ms/MiB | swap-in, us/fault | file refault / swap-in | reps |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, row in costs.iterrows():
        device = named.get(row["system"], {})
        lines.append(
            f"| {row['system']} [{row['backend']}] | {device.get('drive', '-')} | {device.get('swap', '-')} | "
            f"{_swap_class(row, device.get('expected'))} | "
            + " | ".join(_cell(row, c) for c in ("random_read_us", "sequential_read_mib_s",
                                                 "random_write_us", "sequential_write_mib_s",
                                                 "swap_out_ms_per_mib", "swap_in_us_per_fault",
                                                 RATIO))
            + f" | {row['repetitions']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    from analysis.table import build_table, study_runs

    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    study_path = Path(argv[0])
    table = build_table(study_path, study_path.name)
    named = devices({run.record["system_name"]: run.identity["system"]
                     for run in study_runs(study_path, study_path.name)})
    print(markdown(cost_table(table), named), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
