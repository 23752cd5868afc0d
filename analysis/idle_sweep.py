"""Seed 000b's prediction drawn against our runs: the idle program's major faults during
the stream against its idle time T (hot-stream's period_us, one experiment per T), per
policy, with the inactive list's scan time I and I + A (the active list's) marked. The
seed expects faults without VM_EXEC protection once T passes I, and with it only past
I + A."""

import json
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd

WORKLOAD = "hot-stream"
FAULTS = ("interactive_majflt", "stream")
SCANS = ("inactive_scan_s", "active_scan_s")


def _stream_runs(table: pd.DataFrame) -> pd.DataFrame:
    """One row per hot-stream run: its experiment, T (s), policy, repetition, faults in
    the stream, and I and A (NaN where not measured, as under MGLRU, whose lists are
    generations)."""
    rows = table[(table["workload"] == WORKLOAD) & (table["status"] == "ok")
                 & (table["phase"] == FAULTS[1])
                 & table["metric"].isin([FAULTS[0], *SCANS]) & table["index"].isna()]
    if rows.empty:
        return pd.DataFrame()
    wide = rows.pivot_table(index=["backend", "system", "experiment", "run_id", "policy",
                                   "repetition", "arguments"], columns="metric",
                            values="value").reset_index()
    wide["T"] = [json.loads(a)["period_us"] / 1e6 for a in wide["arguments"]]
    return wide.drop(columns="arguments").reindex(
        columns=["backend", "system", "experiment", "run_id", "policy", "repetition", "T",
                 FAULTS[0], *SCANS])


def idle_sweeps(table: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Per (backend, system) with runs at two or more idle times, its runs (_stream_runs)."""
    wide = _stream_runs(table)
    out = {}
    for key, part in wide.groupby(["backend", "system"]) if not wide.empty else []:
        if part["T"].nunique() >= 2 and part[FAULTS[0]].notna().any():
            out[key] = part.drop(columns=["backend", "system"]).reset_index(drop=True)
    return out


@dataclass(frozen=True)
class Window:
    """Where one experiment's idle time T sits in seed 000b's window, by the I and A its
    own classic-LRU runs measured."""
    T: float
    inactive: float   # I (s)
    active: float     # A (s)

    @property
    def inside(self) -> bool:
        """Whether the seed expects VM_EXEC protection to matter: past I (without it the
        pages go) and short of I + A (with it they stay)."""
        return self.inactive <= self.T < self.inactive + self.active

    def describe(self) -> str:
        bounds = f"I {self.inactive:.2g} s, I + A {self.inactive + self.active:.2g} s"
        if self.T < self.inactive:
            where = "below I: kept either way, no effect expected"
        elif self.inside:
            where = "inside the window"
        else:
            where = "past I + A: lost either way, no effect expected"
        return f"T {self.T:g} s {where} ({bounds})"


def windows(table: pd.DataFrame) -> dict[tuple[str, str, str], Window]:
    """(experiment, backend, system) -> its Window, for every hot-stream experiment with
    a run that measured both I and A."""
    wide = _stream_runs(table)
    out: dict = {}
    if wide.empty:
        return out
    for (experiment, backend, system), part in wide.groupby(["experiment", "backend",
                                                             "system"]):
        classic = part.dropna(subset=list(SCANS))
        if not classic.empty:
            out[(experiment, backend, system)] = Window(
                float(part["T"].iloc[0]), float(classic[SCANS[0]].mean()),
                float(classic[SCANS[1]].mean()))
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
