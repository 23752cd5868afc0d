"""The fidelity ladder: the same experiments, repetitions and policies on a cheaper gem5
CPU (a rung) beside the timing CPU's runs (the reference study), row by row of the
reproduction table.

A rung may stand in for the timing CPU in an experiment only where, in every row of
that experiment, its paired ratio lies inside the timing CPU's 95% interval and its
verdict is the same. Both sides are judged alone (no adjustment for other rows: the two
studies' families differ), by the reference study's other rules. The cost of each rung
is the simulator's CPU time per run (run.json's backend_info.cpu_seconds).
"""

import math

import pandas as pd

from analysis.beside import rows_alone, side_by_side
from reclaimstudy.config.verdict_rules import VerdictRules
from reclaimstudy.results.record import PublishedRun


def _cpu(runs: list[PublishedRun]) -> dict[str, list[float]]:
    """experiment -> the simulator's CPU-seconds of each of its runs that records them."""
    out: dict[str, list[float]] = {}
    for run in runs:
        seconds = (run.record.get("backend_info") or {}).get("cpu_seconds")
        if run.record.get("status") == "ok" and seconds is not None:
            out.setdefault(run.record.get("experiment", ""), []).append(float(seconds))
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def compare_rungs(reference: pd.DataFrame, reference_runs: list[PublishedRun],
                  rung: pd.DataFrame, rung_runs: list[PublishedRun], baseline: str,
                  rules: VerdictRules, regimes: tuple = (None, None)) -> pd.DataFrame:
    """One row per reproduction row the rung has: both rungs' systems, ratios,
    intervals and verdicts, whether the rung's ratio is inside the reference's interval
    (analysis/beside.py), and each rung's mean CPU-seconds per run of the experiment."""
    result = side_by_side(rows_alone(reference, regimes[0], baseline, rules),
                          rows_alone(rung, regimes[1], baseline, rules))
    if result.empty:
        return result
    cost_ref, cost_rung = _cpu(reference_runs), _cpu(rung_runs)
    result["reference_cpu_s"] = [_mean(cost_ref.get(e, [])) for e in result["experiment"]]
    result["cpu_s"] = [_mean(cost_rung.get(e, [])) for e in result["experiment"]]
    result["speed_up"] = [r / c if c else math.nan
                          for r, c in zip(result["reference_cpu_s"], result["cpu_s"])]
    # a rung stands in for an experiment only if every row of it agrees
    allowed = result.groupby("experiment")[["inside", "same_verdict"]].transform("all").all(axis=1)
    result["may_stand_in"] = allowed
    return result


def format_ladder(result: pd.DataFrame) -> str:
    if result.empty:
        return "no row of the rung has a finished pair in both studies yet"
    lines = []
    for row in result.to_dict("records"):
        lines.append(
            f"{row['experiment']}: {row['what'][:70]}\n"
            f"    {row['reference_system']}: {row['reference_ratio']:.4g} "
            f"[{row['reference_low']:.4g}, {row['reference_high']:.4g}] {row['reference_verdict']}\n"
            f"    {row['system']}: {row['ratio']:.4g} [{row['low']:.4g}, {row['high']:.4g}] "
            f"{row['verdict']} ({row['pairs']} pairs); inside: {'yes' if row['inside'] else 'no'}, "
            f"same verdict: {'yes' if row['same_verdict'] else 'no'}; CPU-s a run "
            f"{row['reference_cpu_s']:.0f} -> {row['cpu_s']:.0f} ({row['speed_up']:.2f}x)")
    lines.append("")
    for experiment, rows in result.groupby("experiment", sort=False):
        short_of = rows[rows["pairs"] < rows["reference_pairs"]]
        if rows["may_stand_in"].all():
            lines.append(f"{experiment}: the rung may stand in for the timing CPU")
        elif not short_of.empty and not (~rows["inside"]).any():
            # judged on fewer pairs than the timing CPU's, an interval is wider and a
            # verdict may still come: no decision yet, unless a ratio is already outside
            first = short_of.iloc[0]
            lines.append(f"{experiment}: no decision yet ({first['pairs']} of "
                         f"{first['reference_pairs']} pairs on the rung)")
        else:
            lines.append(f"{experiment}: the rung may not stand in for the timing CPU")
    return "\n".join(lines)
