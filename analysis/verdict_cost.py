"""gem5 CPU-hours per decided verdict: a study as it was run (fixed pairs on the timing
CPU) against the same study run by a sequential rule (analysis/sequential_replay.py)
and, in each experiment where the fidelity ladder lets a cheaper CPU stand in
(analysis/ladder.py), on that CPU.

A decided verdict is any but "inconclusive" and "untestable": more pairs could still
move the first, and none can make the second testable. The cheaper CPU's cost is the
sequential runs' timing-CPU cost divided by the speed-up the ladder measured on the same
experiment (its mean CPU-seconds a run against the timing CPU's), so a rung measured on
fewer repetitions than the study makes is priced per run, not per pair.
"""

import pandas as pd

UNDECIDED = {"inconclusive", "untestable"}


def verdict_cost(rows: pd.DataFrame, experiments: pd.DataFrame,
                 ladder: pd.DataFrame) -> pd.DataFrame:
    """One row per experiment of a replay (`rows`, `experiments`: replay()'s), with the
    CPU-hours fixed, sequential, and sequential on the ladder's rung where it may stand
    in (`ladder`: compare_rungs()'s, possibly empty), and the decided verdicts each way."""
    allowed: dict[str, float] = {}
    if not ladder.empty:
        for experiment, rungs in ladder.groupby("experiment"):
            if rungs["may_stand_in"].all():
                allowed[str(experiment)] = float(rungs["speed_up"].iloc[0])
    out = []
    for e in experiments.to_dict("records"):
        name = e["experiment"]
        own = rows[rows["experiment"] == name]
        speed_up = allowed.get(name, 1.0)
        out.append({
            "experiment": name, "rows": len(own),
            "decided_fixed": int((~own["fixed_verdict"].isin(UNDECIDED)).sum()),
            "decided_after": int((~own["sequential_verdict"].isin(UNDECIDED)).sum()),
            "same_verdicts": bool(own["same"].all()),
            "runs_fixed": e["runs_fixed"], "runs_after": e["runs_sequential"],
            "cpu": "cheaper rung" if name in allowed else "timing",
            "speed_up": speed_up, "cpu_h_fixed": e["cpu_h_fixed"],
            "cpu_h_sequential": e["cpu_h_sequential"],
            "cpu_h_after": e["cpu_h_sequential"] / speed_up})
    return pd.DataFrame(out)


def totals(cost: pd.DataFrame) -> dict[str, float]:
    """The study's CPU-hours and decided verdicts before and after, per decided verdict,
    and the factor between them."""
    fixed, after = cost["cpu_h_fixed"].sum(), cost["cpu_h_after"].sum()
    decided_fixed, decided_after = cost["decided_fixed"].sum(), cost["decided_after"].sum()
    per_fixed = fixed / decided_fixed if decided_fixed else float("nan")
    per_after = after / decided_after if decided_after else float("nan")
    return {"cpu_h_fixed": fixed, "cpu_h_after": after, "decided_fixed": int(decided_fixed),
            "decided_after": int(decided_after), "per_verdict_fixed": per_fixed,
            "per_verdict_after": per_after, "factor": per_fixed / per_after,
            "same_verdicts": bool(cost["same_verdicts"].all())}


def format_cost(cost: pd.DataFrame) -> str:
    lines = [f"{'experiment':<20} {'CPU':<12} {'runs':>9} {'CPU-h fixed':>11} "
             f"{'sequential':>10} {'after':>7}  decided"]
    for c in cost.to_dict("records"):
        cpu = f"{c['cpu']}" + (f" {c['speed_up']:.2f}x" if c["cpu"] != "timing" else "")
        lines.append(f"{c['experiment']:<20} {cpu:<12} {c['runs_after']:>4}/{c['runs_fixed']:<4} "
                     f"{c['cpu_h_fixed']:>11.1f} {c['cpu_h_sequential']:>10.1f} "
                     f"{c['cpu_h_after']:>7.1f}  {c['decided_after']}/{c['decided_fixed']}"
                     + ("" if c["same_verdicts"] else "  (a verdict changed)"))
    t = totals(cost)
    lines.append(f"all: {t['cpu_h_fixed']:.1f} gem5 CPU-hours for {t['decided_fixed']} decided "
                 f"verdicts ({t['per_verdict_fixed']:.2f} each) before; {t['cpu_h_after']:.1f} for "
                 f"{t['decided_after']} ({t['per_verdict_after']:.2f} each) after: "
                 f"{t['factor']:.2f}x fewer CPU-hours per decided verdict; every verdict the "
                 f"same: {'yes' if t['same_verdicts'] else 'no'}")
    return "\n".join(lines)
