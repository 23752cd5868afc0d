"""The reproduction table as one picture: for each seed row, the seed's own ratio (with the
change / without it) beside ours, paired by repetition with its 95% interval (thick) and
the wider interval at the level its verdict was made at, adjusted for the rows it stands
among (thin), on a log axis around 1, coloured by verdict, the verdict's word at the
right margin. A reader sees at a glance which side of 1 each seed and each of our
intervals lies, and how far our effect is from the seed's. It heads the report's first
screen, so its rows are packed: eighteen rows come out under 600 pixels high."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from analysis.paired import (EFFECT_NOT_EXPECTED, EQUIVALENT, REPRODUCED,  # noqa: E402
                             REVERSED)
from analysis.verdicts import short  # noqa: E402

VERDICT_COLOURS = {REPRODUCED: "tab:green", REVERSED: "tab:red",
                   EQUIVALENT: "tab:green", EFFECT_NOT_EXPECTED: "tab:red"}
INCONCLUSIVE = "tab:grey"
# Inches per row, and for the axis labels, legend line and title around the rows: the
# figure is saved at 110 dpi (analysis/report.py), so 18 rows take about 570 pixels.
ROW_INCHES = 0.24
FRAME_INCHES = 0.95


def verdict_colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, INCONCLUSIVE)


def plottable(value) -> bool:
    """Whether a ratio can be drawn on a log axis: a finite number above 0."""
    return pd.notna(value) and math.isfinite(value) and value > 0


def reproduction_figure(seeds: pd.DataFrame):
    """One row per reproduction row (top to bottom in the table's order): the seed's ratio
    as a black diamond (an open one at 1 where the seed expects no effect: 000b's idle
    time outside its window), ours as a dot with its interval; rows whose paired ratio is
    undefined (n < 2, or a zero) show the seed's alone. None when no row has a ratio
    (or `seeds` is empty).
    The caller titles and saves it."""
    rows = [r for r in seeds.to_dict("records")
            if plottable(r["seed_ratio"]) or plottable(r["paired_ratio"])]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(11, FRAME_INCHES + ROW_INCHES * max(len(rows), 3)))
    labels = []
    for y, row in enumerate(reversed(rows)):
        labels.append(f"{row['seed']} {row['experiment']}: {row['metric']}"
                      + (f" [{row['phase']}]" if row["phase"] else "")
                      + (f" (control: {row['policies'][1]})" if row.get("control") else ""))
        expected = row.get("expected_ratio", row["seed_ratio"])
        if expected == 1.0 != row["seed_ratio"]:
            # outside the seed's window (000b's idle time): it expects no effect
            labels[-1] += " (seed: none here)"
            ax.plot(1.0, y, marker="D", markerfacecolor="none", color="black", markersize=6)
        elif plottable(row["seed_ratio"]):
            ax.plot(row["seed_ratio"], y, marker="D", color="black", markersize=6)
        if plottable(row["paired_ratio"]):
            colour = verdict_colour(row["verdict"])
            ratio = row["paired_ratio"]
            wide = (row.get("adjusted_low", math.nan), row.get("adjusted_high", math.nan))
            if plottable(wide[0]) and plottable(wide[1]):
                ax.errorbar(ratio, y, xerr=[[ratio - wide[0]], [wide[1] - ratio]], fmt="none",
                            color=colour, capsize=2, linewidth=0.8)
            low, high = row["interval_low"], row["interval_high"]
            if plottable(low) and plottable(high):
                ax.errorbar(ratio, y, xerr=[[ratio - low], [high - ratio]], fmt="o",
                            color=colour, capsize=4, linewidth=2.2)
            else:
                ax.plot(ratio, y, "o", color=colour)
            # the verdict's word in a column at the right margin, level with its row
            ax.annotate(short(row["verdict"]), (1.01, y), xycoords=("axes fraction", "data"),
                        ha="left", va="center", fontsize=8, color=colour)
    # Two claims of one metric in one experiment (seed 001's two refault distances, where
    # one experiment ran both pairs) would share a label: name each one's policies.
    shared = {label for label in labels if labels.count(label) > 1}
    for y, row in enumerate(reversed(rows)):
        if labels[y] in shared and row.get("policies"):
            labels[y] += f" ({row['policies'][0]} / {row['policies'][1]})"
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.5, 2: not 5x10^-1, 2x10^0
    ax.xaxis.set_major_formatter(plain)
    # Label the minor ticks (0.6, 0.7, ...) only on an axis of about a decade: over
    # several (a seed's 0.0003 beside ours near 1) their labels run into each other.
    low, high = ax.get_xlim()
    ax.xaxis.set_minor_formatter(plain if high / low <= 30 else NullFormatter())
    ax.tick_params(axis="x", which="both", labelsize=7)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.6)  # guides from each label to its row
    ax.set_axisbelow(True)
    ax.set_xlabel("ratio, change on / off (log)\nblack: the seed's; coloured: ours "
                  "(paired; thick: 95% interval, thin: at the verdict's adjusted level)", fontsize=8)
    return fig
