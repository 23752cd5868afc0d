"""Compare policies, mmtests-style: one column per policy, the baseline first.

Each cell: the mean over repetitions (by the metric's declared kind: arithmetic for
times, counts and ratios, harmonic for rates), the standard deviation, the change
against the baseline, and where the paired t-test (runs paired by repetition, on log
ratios: analysis/paired.py) finds the difference significant (p < ALPHA) a mark with its
reading, better or worse, by the metric's declared direction. Sections: the
workload's own numbers, the guest's vmstat, gem5's hardware statistics.
"""

import math
from statistics import harmonic_mean, mean

import numpy as np
import pandas as pd

from analysis.paired import paired
from reclaimstudy.errors import StudyError

ALPHA = 0.05
SECTIONS = ("workload", "vmstat", "gem5")
# "setup" (record.setup_key): runs differing in anything but policy and repetition are
# never pooled, even under one experiment and system name.
GROUP = ["experiment", "setup", "backend", "system", "source", "phase", "metric", "unit",
         "kind", "better"]


def summarize(values: list[float], rate: bool) -> tuple[float, float]:
    """(mean, standard deviation): harmonic mean for rates (a metric's declared kind),
    arithmetic for times, counts and ratios."""
    if not values:
        return math.nan, math.nan
    if rate and all(v > 0 for v in values):
        centre = harmonic_mean(values)
    else:
        centre = mean(values)
    # numpy's: the statistics module's stdev raises on a NaN or an infinity (a gem5
    # statistic the atomic CPU leaves undefined) where the spread is simply undefined
    return centre, float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def verdict(change_pct: float, better: str) -> str:
    """A significant change read by the metric's declared direction; a gauge (better
    "none": a size, a share of time, a bandwidth) has none, so it is neither."""
    if better == "none":
        return ""
    return "better" if (change_pct < 0) == (better == "lower") else "worse"


def compare(table: pd.DataFrame, baseline: str, sections=SECTIONS) -> pd.DataFrame:
    """One row per (experiment, system, metric, phase, policy) with its statistics."""
    ok = table[(table["status"] == "ok") & table["source"].isin(sections) & table["index"].isna()]
    if ok.empty:
        return pd.DataFrame()
    if baseline not in set(ok["policy"]):
        raise StudyError(f"no completed run of the baseline policy '{baseline}' to compare against "
                         f"(policies with runs: {', '.join(sorted(set(ok['policy'])))})")
    rows = []
    keys = ok.fillna({"phase": ""}).groupby(GROUP, dropna=False, sort=False)
    for key, group in keys:
        info = dict(zip(GROUP, key))
        by_policy = {}
        for policy, runs in group.groupby("policy", sort=False):
            if "cell" in runs and runs["cell"].nunique() > 1:
                raise StudyError(
                    f"policy '{policy}' of {info['experiment']} on {info['system']} has runs of "
                    f"{runs['cell'].nunique()} different settings under one name (runs "
                    f"{', '.join(sorted(set(runs['run_id'])))}): they are not repetitions of "
                    f"each other; compare with the study file, which sets outdated runs aside")
            by_policy[policy] = dict(zip(runs["repetition"], runs["value"]))
        all_zero = not any(any(v.values()) for v in by_policy.values())
        # A guest counter that stayed zero everywhere says nothing; a workload's own
        # metric at zero is a result (e.g. no major faults with the seed's change).
        if baseline not in by_policy or (all_zero and info["source"] != "workload"):
            continue
        rate = info["kind"] == "rate"
        base_mean, _ = summarize(list(by_policy[baseline].values()), rate)
        for policy, by_repetition in by_policy.items():
            values = list(by_repetition.values())
            centre, spread = summarize(values, rate)
            change = (centre - base_mean) / base_mean * 100 if base_mean else math.nan
            # Runs of one repetition share its seed: compare them as pairs.
            p = math.nan if policy == baseline else \
                paired(by_repetition, by_policy[baseline]).p_value
            significant = bool(p == p and p < ALPHA)
            rows.append({**info, "policy": policy, "n": len(values), "mean": centre,
                         "std": spread, "change_pct": change, "p_value": p,
                         "significant": significant,
                         "verdict": verdict(change, info["better"]) if significant else ""})
    return pd.DataFrame(rows)


def policy_order(policies, baseline: str) -> list[str]:
    others = [p for p in dict.fromkeys(policies) if p != baseline]
    return [baseline] + others


def _cell(row, baseline_row: bool, runs: int) -> str:
    """A policy's cell; runs: how many of its runs the block's best-covered metric has,
    so that a metric only some runs have (a counter added later) says over how many."""
    if row is None:
        return "-"
    value = f"{row['mean']:.4g}"
    if row["std"] == row["std"]:
        value += f" ±{row['std']:.2g}"
    if row["n"] < runs:
        value += f" [n={row['n']}]"
    if not baseline_row and row["change_pct"] == row["change_pct"]:
        value += f" ({row['change_pct']:+.1f}%)"
        if row["significant"]:
            value += f"* {row['verdict']}".rstrip()
    return value


def format_text(comparison: pd.DataFrame, baseline: str) -> str:
    """The comparison as fixed-width text, one block per experiment and system."""
    if comparison.empty:
        return "no completed runs to compare\n"
    lines = []
    for (experiment, _, backend, system), block in comparison.groupby(
            ["experiment", "setup", "backend", "system"], sort=False):
        policies = policy_order(block["policy"], baseline)
        runs = block.groupby("policy")["n"].max()
        body: list[tuple[str, list[str] | None]] = []  # a section's name, or a metric's label and its cells
        for section in SECTIONS:
            part = block[block["source"] == section]
            if part.empty:
                continue
            body.append((section, None))
            for (phase, metric, unit), rows in part.groupby(["phase", "metric", "unit"], sort=False):
                label = f"  {metric}" + (f" [{phase}]" if phase else "") + (f" ({unit})" if unit else "")
                by_policy = {r["policy"]: r for _, r in rows.iterrows()}
                body.append((label, [_cell(by_policy.get(p), p == baseline, runs[p])
                                     for p in policies]))
        # wide enough for the widest cell, so columns never run together
        width = 2 + max(26, *(len(p) for p in policies),
                        *(len(c) for _, cells in body if cells for c in cells))
        lines.append(f"{experiment} on {system} [{backend}]   (mean ±sd (change vs {baseline}), "
                     f"* = paired p < {ALPHA}, better or worse; [n=..] where a metric has "
                     f"fewer of a policy's runs)")
        lines.append(f"{'':40}" + "".join(f"{p:>{width}}" for p in policies))
        for label, cells in body:
            lines.append(label if cells is None else
                         f"{label[:40]:40}" + "".join(f"{c:>{width}}" for c in cells))
        lines.append("")
    return "\n".join(lines)
