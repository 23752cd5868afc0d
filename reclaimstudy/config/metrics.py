"""What a metric is, declared where it is made: each workload's meta.toml ([metrics]),
the guest counters and the gem5 statistics (analysis/metrics.py).

The kind decides how repetitions are averaged (as mmtests does per data type): times,
counts and ratios by the arithmetic mean, rates by the harmonic mean. `better` says
which direction of a significant change is an improvement. A gauge is a reading of a
level at one moment (pages on a list at a mark): shown as read, never judged, so its
`better` is "none".
"""

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from reclaimstudy.config.tomlfile import config_error

Kind = Literal["time", "rate", "count", "ratio", "gauge"]
Better = Literal["lower", "higher", "none"]
KINDS = get_args(Kind)
BETTER = get_args(Better)


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class MetricSpec:
    """A metric: declared in a meta.toml's [metrics] (checked there with
    gauge_rule) or in analysis/metrics.py."""
    name: str
    unit: str
    kind: Kind
    better: Better
    help: str = ""


def gauge_rule(spec: MetricSpec) -> MetricSpec:
    """A declared metric is a gauge if and only if its better is "none" (analysis/'s
    own metrics may also leave a ratio unjudged)."""
    if (spec.kind == "gauge") != (spec.better == "none"):
        raise ValueError(f"better = {spec.better!r} with kind = {spec.kind!r}; a gauge (and "
                         f"only a gauge) has better = 'none'")
    return spec


# A [metrics] entry of a meta.toml: {unit, kind, better, help}, named by its key.
DeclaredMetric = Annotated[MetricSpec, AfterValidator(gauge_rule)]


def parse_metric(name: str, table: dict, where: str) -> MetricSpec:
    """One [metrics] entry on its own."""
    try:
        return TypeAdapter(DeclaredMetric).validate_python({**table, "name": name})
    except ValidationError as error:
        raise config_error(where, error, MetricSpec) from None
