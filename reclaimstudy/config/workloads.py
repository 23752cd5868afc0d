"""Workload descriptions: workloads/<name>/meta.toml beside each workload's driver and parser.

Each workload folder holds, LKP-style: `meta.toml` (what it is, the seed it reproduces,
its parameters, its data files), `run` (the guest driver), its C sources, and
`parse.py` (host-side summaries of its records).
"""

import math
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.config.metrics import MetricSpec, parse_metric
from reclaimstudy.config.policies import load_policies
from reclaimstudy.config.tomlfile import check_keys, load
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import WORKLOADS

GUEST_DATA = "/usr/share/reclaim/data"
NOT_WORKLOADS = {"lib", "tools", "build"}


@dataclass(frozen=True)
class Parameter:
    name: str
    default: object
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None

    def check(self, value, where: str):
        kind = type(self.default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind:
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; "
                             f"allowed: {self.allowed()}")
        if self.choices is not None and value not in self.choices:
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; allowed: {self.allowed()}")
        if self.minimum is not None and value < self.minimum or \
                self.maximum is not None and value > self.maximum:
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; allowed: {self.allowed()}")
        return value

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        kind = "an integer" if isinstance(self.default, int) else "a number"
        return f"{kind} from {self.minimum} to {self.maximum}"


@dataclass(frozen=True)
class DataFile:
    """A file of real (pseudo-random, not sparse) data made at image build time."""
    name: str
    mib: float | None = None
    memory_fraction: float | None = None

    def size_bytes(self, memory_mib: int) -> int:
        mib = self.mib if self.mib is not None else self.memory_fraction * memory_mib
        return int(math.ceil(mib * 1024 * 1024 / 4096)) * 4096


REGIME_UNITS = ("pages", "MiB")
PAGES_PER_MIB = 256  # 4 KiB pages


@dataclass(frozen=True)
class Regime:
    """Where a seed saw its effect, as one of the workload's metrics: it must reach
    `at_least_memory` times the guest's memory (in `unit`), or, for a metric that is not
    a size, the plain number `at_least`; in the runs of `policies` (every policy when
    empty: several, when experiments name the seed's "before" differently). The report
    prints it for every run."""
    metric: str
    unit: str | None
    at_least_memory: float | None
    policies: tuple[str, ...]
    why: str
    at_least: float | None = None

    def applies_to(self, policy: str) -> bool:
        return not self.policies or policy in self.policies

    @property
    def per_memory(self) -> bool:
        return self.at_least_memory is not None

    @property
    def threshold(self) -> float:
        """What a run's value must reach, on the regime's scale (x memory, or plain)."""
        return self.at_least_memory if self.per_memory else self.at_least

    def required(self, memory_mib: float) -> float:
        """The smallest value in regime on a guest of `memory_mib`."""
        if not self.per_memory:
            return self.at_least
        per_mib = PAGES_PER_MIB if self.unit == "pages" else 1
        return self.at_least_memory * memory_mib * per_mib

    def scaled(self, value: float, memory_mib: float) -> float:
        """A run's value on the regime's scale: a multiple of memory, or the value itself."""
        return value / (self.required(memory_mib) / self.threshold)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    seed: str | None
    directory: Path
    parameters: dict
    data: tuple
    sources: tuple
    phases: tuple
    generate: str | None = None  # host program run at image build: GENERATE OUT MEMORY_MIB
    metrics: tuple[MetricSpec, ...] = ()  # what parse.py reports, declared in [metrics]
    regime: Regime | None = None  # where its seed saw the effect ([regime])
    # Phases that are a sleep by design: their quiet time (analysis QUIET) is the workload's
    # own, and the report does not flag it
    pauses: tuple = ()

    def metric(self, name: str) -> MetricSpec:
        """The declaration of a metric parse.py reports; an undeclared one is an error."""
        for spec in self.metrics:
            if spec.name == name:
                return spec
        raise StudyError(f"workload '{self.name}' reports metric '{name}', which its "
                         f"meta.toml does not declare; declared: "
                         f"{', '.join(s.name for s in self.metrics) or 'none'}")

    def arguments(self, values: dict | None = None, where: str = "") -> dict:
        """Every parameter's value: the defaults, overridden by `values` (checked)."""
        where = where or f"workload {self.name}"
        values = dict(values or {})
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            raise StudyError(f"{where}: unknown parameter(s) {', '.join(unknown)} for workload "
                             f"'{self.name}'; allowed: {', '.join(self.parameters) or 'none'}")
        return {name: p.check(values[name], where) if name in values else p.default
                for name, p in self.parameters.items()}

    @staticmethod
    def command_line(arguments: dict) -> str:
        """`--name=value` words for the guest driver (values never contain spaces)."""
        return " ".join(f"--{name.replace('_', '-')}={value}" for name, value in arguments.items())


def _parameter(name: str, table: dict, where: str) -> Parameter:
    check_keys(where, table, {"default", "help", "min", "max", "choices"}, {"default", "help"})
    choices = tuple(table["choices"]) if "choices" in table else None
    return Parameter(name, table["default"], table["help"], table.get("min"), table.get("max"),
                     choices)


def _data_file(table: dict, where: str) -> DataFile:
    check_keys(where, table, {"name", "mib", "memory_fraction"}, {"name"})
    if ("mib" in table) == ("memory_fraction" in table):
        raise StudyError(f"{where}: give exactly one of mib, memory_fraction")
    return DataFile(table["name"], table.get("mib"), table.get("memory_fraction"))


def _positive(where: str, key: str, value) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise StudyError(f"{where}: {key} = {value!r}; allowed: a number > 0")
    return float(value)


def _regime(table: dict, metrics: tuple[MetricSpec, ...], where: str) -> Regime:
    check_keys(where, table, {"metric", "unit", "at_least_memory", "at_least", "policy", "why"},
               {"metric", "why"})
    if table["metric"] not in {m.name for m in metrics}:
        raise StudyError(f"{where}: metric = {table['metric']!r} is not declared in [metrics]; "
                         f"allowed: {', '.join(m.name for m in metrics)}")
    if ("at_least_memory" in table) == ("at_least" in table):
        raise StudyError(f"{where}: give exactly one of at_least_memory (a multiple of the "
                         f"guest's memory, with unit) and at_least (a plain number)")
    if "at_least" in table:
        if "unit" in table:
            raise StudyError(f"{where}: unit = {table['unit']!r} goes with at_least_memory; "
                             f"at_least is in the metric's own unit")
        return Regime(table["metric"], None, None, _regime_policies(where, table), table["why"],
                      _positive(where, "at_least", table["at_least"]))
    if table.get("unit") not in REGIME_UNITS:
        raise StudyError(f"{where}: unit = {table.get('unit')!r}; allowed: "
                         f"{', '.join(REGIME_UNITS)}")
    return Regime(table["metric"], table["unit"],
                  _positive(where, "at_least_memory", table["at_least_memory"]),
                  _regime_policies(where, table), table["why"])


def _regime_policies(where: str, table: dict) -> tuple[str, ...]:
    """[regime]'s policy: one name or a list of them, each in configs/policies.toml."""
    named = table.get("policy", [])
    names = [named] if isinstance(named, str) else named
    known = load_policies()
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StudyError(f"{where}: policy = {named!r}; allowed: a policy's name or a list "
                         f"of names")
    for name in names:
        if name not in known:
            raise StudyError(f"{where}: policy {name!r} is not a policy; allowed: "
                             f"{', '.join(known)}")
    return tuple(names)


def parse_workload(directory: Path) -> Workload:
    path = directory / "meta.toml"
    table = load(path)
    where = str(path)
    check_keys(where, table, {"description", "seed", "parameters", "data", "sources", "phases",
                              "generate", "metrics", "regime", "pauses"},
               {"description", "phases", "metrics"})
    if "generate" in table and not (directory / table["generate"]).is_file():
        raise StudyError(f"{where}: generate = {table['generate']!r} is not a file in {directory}")
    if not (directory / "run").is_file():
        raise StudyError(f"{directory}: a workload needs an executable driver named 'run'")
    parameters = {name: _parameter(name, spec, f"{where} [parameters.{name}]")
                  for name, spec in table.get("parameters", {}).items()}
    data = tuple(_data_file(spec, f"{where} [[data]]") for spec in table.get("data", []))
    metrics = tuple(parse_metric(name, spec, f"{where} [metrics.{name}]")
                    for name, spec in table["metrics"].items())
    regime = _regime(table["regime"], metrics, f"{where} [regime]") if "regime" in table else None
    pauses = tuple(table.get("pauses", []))
    unknown = [p for p in pauses if p not in table["phases"]]
    if unknown:
        raise StudyError(f"{where}: pauses names {', '.join(map(repr, unknown))}, not a phase; "
                         f"phases: {', '.join(table['phases'])}")
    return Workload(directory.name, table["description"], table.get("seed"), directory,
                    parameters, data, tuple(table.get("sources", [])), tuple(table["phases"]),
                    table.get("generate"), metrics, regime, pauses)


def workload_dirs(root: Path = WORKLOADS) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/meta.toml") if p.parent.name not in NOT_WORKLOADS)


def load_workloads(root: Path = WORKLOADS) -> dict[str, Workload]:
    return {d.name: parse_workload(d) for d in workload_dirs(root)}


def get_workload(name: str, root: Path = WORKLOADS) -> Workload:
    names = [d.name for d in workload_dirs(root)]
    if name not in names:
        raise StudyError(f"unknown workload '{name}'; allowed (from {root}): {', '.join(names)}")
    return parse_workload(root / name)
