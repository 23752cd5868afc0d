"""One metric of one experiment, repetition by repetition: each policy's value in every
repetition, its range, and its paired ratio to a baseline (analysis/paired.py). What a
findings section quotes ("1.949-1.964 s", "0.923 [0.916, 0.931]") comes from this view of
the table, so a reader can check any such number with `./study pairs`.

A metric is named as the table names it: `metric`, `phase:metric` or
`source:phase:metric` (an empty phase, `source::metric`, is the run as a whole); the
shorter forms are accepted when only one of the table's metrics fits them. A phase `*`
sums a count or a time over each run's phases (`gem5:*:disk_reads`, `vmstat:*:pswpin`),
for the metrics the table keeps per phase alone; a run missing one of the phases the
others have shows no sum.
"""

import difflib
import math
from dataclasses import dataclass

import pandas as pd

from analysis.compare import policy_order
from analysis.numbers import amount
from analysis.paired import Paired, paired
from reclaimstudy.errors import StudyError


@dataclass(frozen=True)
class MetricPairs:
    label: str                   # source:phase:metric, as resolved
    unit: str
    values: pd.DataFrame         # repetition x policy
    ratios: dict[str, Paired]    # policy -> paired against the baseline
    baseline: str


def _label(source: str, phase, metric: str) -> str:
    return f"{source}:{'' if phase is None or pd.isna(phase) else phase}:{metric}"


def _select(rows: pd.DataFrame, spec: str) -> pd.DataFrame:
    parts = spec.split(":")
    if len(parts) > 3 or not parts[-1]:
        raise StudyError(f"metric {spec!r}: write it as metric, phase:metric or "
                         "source:phase:metric")
    metric = parts[-1]
    phase = parts[-2] if len(parts) >= 2 else None
    source = parts[0] if len(parts) == 3 else None
    chosen = rows[rows["metric"] == metric]
    if source is not None:
        chosen = chosen[chosen["source"] == source]
    if phase is not None and phase != "*":
        chosen = chosen[chosen["phase"].isna() if phase == "" else chosen["phase"] == phase]
    if chosen.empty:
        known = sorted({_label(s, p, m) for s, p, m in
                        rows[["source", "phase", "metric"]].itertuples(index=False)})
        near = difflib.get_close_matches(spec, known, n=5, cutoff=0.5) or known[:10]
        raise StudyError(f"metric {spec!r}: not in this experiment's table; close: "
                         + ", ".join(near))
    if phase == "*":
        return _summed_over_phases(chosen, spec)
    found = sorted({_label(s, p, metric) for s, p in
                    chosen[["source", "phase"]].itertuples(index=False)})
    if len(found) > 1:
        raise StudyError(f"metric {spec!r} fits {len(found)} of the table's metrics; name "
                         "one: " + ", ".join(found))
    return chosen


# Kinds whose phases add up to the run's: a ratio or a rate does not.
SUMMABLE = {"count", "time"}


def _summed_over_phases(chosen: pd.DataFrame, spec: str) -> pd.DataFrame:
    """Each run's rows of one metric summed over its phases, as rows of phase `*`."""
    chosen = chosen[chosen["phase"].notna()]
    kinds = sorted(set(chosen["kind"]))
    if kinds and not set(kinds) <= SUMMABLE:
        raise StudyError(f"metric {spec!r}: a {', '.join(kinds)} does not add up over phases; "
                         f"only a count or a time does")
    sources = sorted(set(chosen["source"]))
    if len(sources) > 1:
        raise StudyError(f"metric {spec!r} is in {len(sources)} sources; name one: "
                         + ", ".join(f"{s}:*:{spec.split(':')[-1]}" for s in sources))
    if chosen.empty:
        raise StudyError(f"metric {spec!r}: no phase of this experiment has it")
    keys = ["run_id", "policy", "repetition", "source", "metric", "unit", "kind"]
    grouped = chosen.groupby(keys, as_index=False)
    summed = grouped["value"].sum(min_count=1)
    # a run that lacks a phase the others have would sum to less for want of a row, not
    # of work: its sum is missing ("-"), not small
    phases = grouped["phase"].nunique()["phase"]
    summed.loc[phases < phases.max(), "value"] = float("nan")
    return summed.assign(phase="*")


def experiment_rows(table: pd.DataFrame, experiment: str, system: str | None) -> pd.DataFrame:
    """The table's rows of one experiment on one system (the only one, or `system`)."""
    rows = table[table["experiment"] == experiment]
    if rows.empty:
        raise StudyError(f"experiment {experiment!r}: not in the table; it has "
                         + ", ".join(sorted(table["experiment"].unique())))
    systems = sorted(rows["system"].unique())
    if system is not None:
        if system not in systems:
            raise StudyError(f"system {system!r}: {experiment} ran on " + ", ".join(systems))
        rows = rows[rows["system"] == system]
    elif len(systems) > 1:
        raise StudyError(f"{experiment} ran on {len(systems)} systems; choose one with "
                         "--system: " + ", ".join(systems))
    backends = sorted(rows["backend"].unique())
    if len(backends) > 1:  # never pooled: QEMU numbers are not gem5 timing
        raise StudyError(f"{experiment} has runs on {', '.join(backends)}; they are never "
                         "compared with each other")
    return rows[rows["status"] == "ok"]  # the table has a status column (table.py)


def metric_pairs(rows: pd.DataFrame, spec: str, baseline: str) -> MetricPairs:
    chosen = _select(rows, spec)
    policies = sorted(chosen["policy"].unique())
    if baseline not in policies:
        raise StudyError(f"baseline {baseline!r}: no run of it has {spec}; policies: "
                         + ", ".join(policies))
    values = chosen.pivot_table(index="repetition", columns="policy", values="value",
                                aggfunc="first")
    ordered = policy_order(policies, baseline)
    values = values[ordered]
    base = values[baseline].dropna().to_dict()
    ratios = {p: paired(values[p].dropna().to_dict(), base) for p in ordered[1:]}
    first = chosen.iloc[0]
    return MetricPairs(_label(first["source"], first["phase"], first["metric"]),
                       str(first["unit"]), values, ratios, baseline)


def _signed(value: float) -> str:
    return ("+" if value > 0 else "") + amount(value)


def format_pairs(result: MetricPairs) -> str:
    """Plain text: the values by repetition, each policy's range, and its paired ratio."""
    values = result.values
    rows = [(f"r{repetition}", [amount(v) for v in row]) for repetition, row in values.iterrows()]
    rows.append(("range", [f"{amount(values[p].min())}-{amount(values[p].max())}"
                           for p in values.columns]))
    # every column as wide as its widest cell, and two spaces between (disk ticks run to
    # 16 digits with their commas)
    width = 2 + max(12, *(len(p) for p in values.columns),
                    *(len(cell) for _, cells in rows for cell in cells))
    lines = [f"{result.label} ({result.unit})",
             "repetition".ljust(12) + "".join(p.rjust(width) for p in values.columns)]
    lines += [name.ljust(12) + "".join(cell.rjust(width) for cell in cells) for name, cells in rows]
    for policy, pair in result.ratios.items():
        tail = f"p {amount(pair.p_value)}, {pair.n} pairs (by {pair.by})"
        ratio = (f"  {policy} / {result.baseline}: {amount(pair.ratio)} "
                 f"[{amount(pair.low)}, {amount(pair.high)}], {tail}")
        if not pair.difference:
            lines.append(ratio)
            continue
        # a zero in some pair: the difference says how much
        paired = values[[policy, result.baseline]].dropna()
        if not paired.to_numpy().any():
            # nothing counted on either side: a ratio of 1 would only look like a result
            lines.append(f"  {policy}, {result.baseline}: 0 in every pair ({pair.n} pairs)")
            continue
        mean, low, high = pair.difference
        difference = f"mean difference {_signed(mean)} [{_signed(low)}, {_signed(high)}]"
        if math.isinf(pair.ratio):
            # the baseline counts nothing: a ratio would only repeat the difference's sign
            lines.append(f"  {policy} - {result.baseline}: {difference}, {tail}; "
                         f"no ratio, {result.baseline} is 0 in every pair")
        else:
            # an open interval: some resamples of the pairs drew only the baseline's zeros
            open_above = (f"; the ratio's interval is open above: {result.baseline} is 0 "
                          f"in some pairs" if math.isinf(pair.high) else "")
            lines.append(f"{ratio}; {difference}{open_above}")
    return "\n".join(lines)
