"""The reproduction table's verdicts, row by row and as a family.

A row is one of four tests:
- out of regime: every run of its experiment falls short of the regime where the seed
  saw its effect, so the claim cannot be tested here; more runs would not change that;
- equivalence: the seed expects no effect (seed 000b's idle time outside its window),
  so the row is tested by TOST at the study's margin (analysis/paired.py);
- directional: the paired t-test against no effect, read against the seed's direction;
- none: fewer than two pairs, or pairs that do not differ (no spread).

The tested rows' p-values are adjusted for the rows they stand among, by the study's
declared method (Holm's step-down by default, or Benjamini-Hochberg), and each verdict
uses the adjusted p. Each directional row also gets the interval at the level its
adjusted verdict was made at (Holm: 1 - alpha / (m - k + 1) for the k-th smallest p;
Benjamini-Hochberg: Benjamini and Yekutieli's 1 - alpha R / m over R rejections), so
the interval shown beside a verdict excludes 1 whenever the verdict is not
inconclusive.
"""

import math
import numpy as np
from scipy import stats

from analysis.paired import EQUIVALENT, REPRODUCED, REVERSED, Paired
from reclaimstudy.config.verdict_rules import VerdictRules as Rules

OUT_OF_REGIME = "untestable here: every run out of the seed's regime"
METHODS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no adjustment"}


def adjust(p_values: list[float], method: str) -> list[float]:
    """Adjusted p-values (NaN stays NaN and is not counted among the rows)."""
    p = np.array(p_values, dtype=float)
    tested = ~np.isnan(p)
    out = np.full(len(p), math.nan)
    if not tested.any():
        return out.tolist()
    if method == "none":
        out[tested] = p[tested]
    elif method == "bh":
        out[tested] = stats.false_discovery_control(p[tested], method="bh")
    elif method == "holm":
        values = p[tested]
        m = len(values)
        order = np.argsort(values, kind="stable")
        stepped = np.minimum(1.0, (m - np.arange(m)) * values[order])
        adjusted = np.empty(m)
        adjusted[order] = np.maximum.accumulate(stepped)
        out[tested] = adjusted
    else:
        raise ValueError(f"multiplicity {method!r}; allowed: {', '.join(METHODS)}")
    return out.tolist()


def confidences(p_values: list[float], adjusted: list[float], method: str,
                alpha: float) -> list[float]:
    """The confidence of each row's interval that matches its adjusted verdict."""
    p = np.array(p_values, dtype=float)
    tested = ~np.isnan(p)
    m = int(tested.sum())
    out = [1 - alpha] * len(p)
    if method == "holm":
        ranks = np.argsort(np.argsort(np.where(tested, p, np.inf), kind="stable"), kind="stable")
        out = [1 - alpha / (m - int(rank)) if tested[i] else 1 - alpha
               for i, rank in enumerate(ranks)]
    elif method == "bh":
        rejected = sum(1 for a in adjusted if a == a and a < alpha)
        out = [1 - alpha * max(rejected, 1) / max(m, 1)] * len(p)
    return out


def untestable(regime_rows) -> str | None:
    """The out-of-regime verdict when every checked run falls short, else None."""
    if regime_rows is None or len(regime_rows) == 0:
        return None
    if any(bool(r) for r in regime_rows["in_regime"]):
        return None
    why = str(regime_rows["why"].iloc[0]).rstrip(".")
    return f"{OUT_OF_REGIME} ({len(regime_rows)} of {len(regime_rows)} short: {why})"


def judge(rows: list[dict], pairs: list[Paired], rules: Rules) -> list[dict]:
    """Each row (seeds.reproduction's, with `expects_none`, `seed_ratio` and, where its
    experiment declares a regime, `untestable`) given its test, raw and adjusted p,
    verdict and the interval at its verdict's level."""
    tests, raw = [], []
    for row, pair in zip(rows, pairs):
        if row.get("untestable"):
            test, p = "out of regime", math.nan
        elif pair.n < 2:
            test, p = "none", math.nan
        elif row["expects_none"]:
            test, p = f"equivalence (TOST, ±{rules.equivalence_margin:.0%})", \
                pair.equivalence_p(rules.equivalence_margin)
        elif not pair.spread or math.isnan(pair.p_value):
            test, p = "none", math.nan
        else:
            test, p = "paired t-test", pair.p_value
        tests.append(test)
        raw.append(p)
    adjusted = adjust(raw, rules.multiplicity)
    levels = confidences(raw, adjusted, rules.multiplicity, rules.alpha)
    out = []
    for row, pair, test, p, q, level in zip(rows, pairs, tests, raw, adjusted, levels):
        if test == "out of regime":
            verdict = row["untestable"]
        elif row["expects_none"]:
            verdict = pair.verdict_of_no_effect(rules.equivalence_margin, rules.alpha,
                                                p=q if q == q else None)
        else:
            verdict = pair.verdict(row["seed_ratio"], rules.alpha, p=q if q == q else None)
        low, high = pair.interval(level) if p == p else (math.nan, math.nan)
        out.append({**row, "test": test, "row_p": p, "adjusted_p": q,
                    "multiplicity": METHODS[rules.multiplicity], "family": sum(x == x for x in raw),
                    "verdict": verdict, "interval_method": pair.method,
                    "adjusted_confidence": level, "adjusted_low": low, "adjusted_high": high})
    return out


def explained(rows: list[dict], on_6_1: dict[str, str]) -> list[dict]:
    """Each row whose experiment the study says cannot show the seed's effect on 6.1
    (`on_6_1`: experiment -> the mechanism) with that reason in its verdict where it is
    out of regime; where a run is in regime after all, the verdict says the study's
    reason is contradicted, so neither is read alone."""
    out = []
    for row in rows:
        why = on_6_1.get(row["experiment"])
        if why and row["test"] == "out of regime":
            row = {**row, "verdict": f"{row['verdict']}; on Linux 6.1: {why.rstrip('.')}"}
        elif why:
            row = {**row, "verdict": f"{row['verdict']} (some runs are in the seed's regime, "
                                     f"against the study's reason it cannot occur on 6.1)"}
        out.append(row)
    return out


def short(verdict: str) -> str:
    """A verdict's kind: reproduced, reversed, equivalent, untestable or inconclusive."""
    for kind in (REPRODUCED, REVERSED, EQUIVALENT, "untestable", "inconclusive"):
        if verdict.startswith(kind):
            return kind.split(",")[0]
    return verdict.split(" (")[0]
