"""Seed 000b's prediction drawn against our runs: the idle program's major faults during
the stream against its idle time T (hot-stream's period_us, one experiment per T), per
policy, with the inactive list's scan time I and I + A (the active list's) marked. The
seed expects faults without VM_EXEC protection once T passes I, and with it only past
I + A."""

import json

import matplotlib.pyplot as plt
import pandas as pd

WORKLOAD = "hot-stream"
FAULTS = ("interactive_majflt", "stream")
SCANS = ("inactive_scan_s", "active_scan_s")


def idle_sweeps(table: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (backend, system) with runs at two or more idle times: one row per run with its
    experiment, T (s), policy, repetition, faults in the stream, and I and A (NaN where not
    measured, as under MGLRU, whose lists are generations)."""
    rows = table[(table["workload"] == WORKLOAD) & (table["status"] == "ok")
                 & (table["phase"] == FAULTS[1])
                 & table["metric"].isin([FAULTS[0], *SCANS]) & table["index"].isna()]
    if rows.empty:
        return {}
    wide = rows.pivot_table(index=["backend", "system", "experiment", "run_id", "policy",
                                   "repetition", "arguments"], columns="metric",
                            values="value").reset_index()
    wide["T"] = [json.loads(a)["period_us"] / 1e6 for a in wide["arguments"]]
    out = {}
    for key, part in wide.groupby(["backend", "system"]):
        if part["T"].nunique() >= 2 and FAULTS[0] in part:
            out[key] = part.drop(columns="arguments").reindex(
                columns=["experiment", "run_id", "policy", "repetition", "T", FAULTS[0],
                         *SCANS])
    return out


def idle_sweep_figure(sweep: pd.DataFrame, policies: list[str]):
    """Faults against T (log scale): each run a dot, each policy's mean a line; I and I + A
    (means over the classic-LRU runs) as dashed and dotted lines. The caller titles and
    saves it."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for i, policy in enumerate(p for p in policies if p in set(sweep["policy"])):
        runs = sweep[sweep["policy"] == policy]
        ax.scatter(runs["T"], runs[FAULTS[0]], s=12, color=f"C{i}", alpha=0.6)
        means = runs.groupby("T")[FAULTS[0]].mean()
        ax.plot(means.index, means.values, marker="o", color=f"C{i}", label=policy)
    # MGLRU has no active list to scan: I and A come from the runs that measured both.
    classic = sweep.dropna(subset=list(SCANS))
    inactive, active = classic[SCANS[0]].mean(), classic[SCANS[1]].mean()
    if pd.notna(inactive):
        ax.axvline(inactive, color="grey", linestyle="--", label=f"I = {inactive:.3g} s")
        if pd.notna(active):
            ax.axvline(inactive + active, color="grey", linestyle=":",
                       label=f"I + A = {inactive + active:.3g} s")
    ax.set_xscale("log")
    ax.set_xlabel("idle time T between touches (s)")
    ax.set_ylabel("major faults in the stream")
    ax.legend(fontsize=7)
    return fig
