"""What a metric is, declared where it is made: each workload's meta.toml ([metrics]),
the guest counters and the gem5 statistics (analysis/metrics.py).

The kind decides how repetitions are averaged (as mmtests does per data type): times,
counts and ratios by the arithmetic mean, rates by the harmonic mean. `better` says
which direction of a significant change is an improvement. A gauge is a reading of a
level at one moment (pages on a list at a mark): shown as read, never judged, so its
`better` is "none".
"""

from dataclasses import dataclass

from reclaimstudy.errors import StudyError

KINDS = ("time", "rate", "count", "ratio", "gauge")
BETTER = ("lower", "higher", "none")


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: str
    kind: str
    better: str
    help: str = ""


def parse_metric(name: str, table: dict, where: str) -> MetricSpec:
    """One [metrics] entry: {unit, kind, better, help}."""
    allowed = {"unit", "kind", "better", "help"}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise StudyError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(sorted(allowed))}")
    missing = sorted({"unit", "kind", "better"} - set(table))
    if missing:
        raise StudyError(f"{where}: missing key(s) {', '.join(missing)}")
    if table["kind"] not in KINDS:
        raise StudyError(f"{where}: kind = {table['kind']!r}; allowed: {', '.join(KINDS)}")
    if table["better"] not in BETTER:
        raise StudyError(f"{where}: better = {table['better']!r}; allowed: {', '.join(BETTER)}")
    if (table["kind"] == "gauge") != (table["better"] == "none"):
        raise StudyError(f"{where}: better = {table['better']!r} with kind = {table['kind']!r}; "
                         f"a gauge (and only a gauge) has better = 'none'")
    return MetricSpec(name, str(table["unit"]), table["kind"], table["better"],
                      str(table.get("help", "")))
