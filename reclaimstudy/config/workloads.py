"""Workload descriptions: workloads/<name>/meta.toml beside each workload's driver and parser.

Each workload folder holds, LKP-style: `meta.toml` (what it is, the seed it reproduces,
its parameters, its data files), `run` (the guest driver), its C sources, and
`parse.py` (host-side summaries of its records).
"""

import math
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field,
                      StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError,
                      model_validator)

from reclaimstudy.config.metrics import DeclaredMetric, MetricSpec
from reclaimstudy.config.policies import load_policies
from reclaimstudy.config.tomlfile import config_error, load, number
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import WORKLOADS

GUEST_DATA = "/usr/share/reclaim/data"
NOT_WORKLOADS = {"lib", "tools", "build"}


class Table(BaseModel):
    """A table of meta.toml: only its own keys, values of their kinds."""
    model_config = ConfigDict(extra="forbid", frozen=True)


def _scalar(value):
    if not isinstance(value, (bool, int, float, str)):
        raise ValueError("allowed: a number, text, or true or false")
    return value


Bound = StrictInt | StrictFloat
Scalar = Annotated[StrictBool | StrictInt | StrictFloat | StrictStr, BeforeValidator(_scalar)]


class Parameter(Table):
    """[parameters.NAME]: the value a run gets unless a study gives another, and the
    values allowed (min..max, or choices): the one place a workload's bounds are kept
    (tests/test_workload_bounds.py holds the C programs' option tables to them)."""
    name: str
    default: Scalar
    help: str
    minimum: Bound | None = Field(None, alias="min")
    maximum: Bound | None = Field(None, alias="max")
    choices: tuple[StrictInt | StrictFloat | StrictStr, ...] | None = None

    @model_validator(mode="after")
    def default_is_allowed(self):
        numeric = isinstance(self.default, (int, float)) and not isinstance(self.default, bool)
        if (self.minimum is not None or self.maximum is not None) and not numeric:
            raise ValueError(f"min and max go with a number; default = {self.default!r}")
        if self.choices is not None and self.default not in self.choices or numeric and not (
                (self.minimum is None or self.minimum <= self.default)
                and (self.maximum is None or self.default <= self.maximum)):
            raise ValueError(f"default = {self.default!r} is not allowed; allowed: "
                             f"{self.allowed()}")
        return self

    def check(self, value, where: str):
        kind = type(self.default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind:
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; "
                             f"allowed: {self.allowed()}")
        if self.choices is not None and value not in self.choices:
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; allowed: {self.allowed()}")
        if isinstance(value, (int, float)) and (
                self.minimum is not None and value < self.minimum
                or self.maximum is not None and value > self.maximum):
            raise StudyError(f"{where}: parameter {self.name} = {value!r}; allowed: {self.allowed()}")
        return value

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        if isinstance(self.default, str):
            return "text"
        kind = "an integer" if isinstance(self.default, int) else "a number"
        return f"{kind} from {self.minimum} to {self.maximum}"


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("allowed: a number > 0")
    return value


Positive = Annotated[float, number(), AfterValidator(_positive)]


class DataFile(Table):
    """[[data]]: a file of real (pseudo-random, not sparse) data made at image build time."""
    name: str
    mib: Positive | None = None
    memory_fraction: Positive | None = None

    @model_validator(mode="after")
    def one_size(self):
        if (self.mib is None) == (self.memory_fraction is None):
            raise ValueError("give exactly one of mib, memory_fraction")
        return self

    def size_bytes(self, memory_mib: int) -> int:
        if self.mib is not None:
            mib = self.mib
        else:
            assert self.memory_fraction is not None  # one_size: one of the two is given
            mib = self.memory_fraction * memory_mib
        return int(math.ceil(mib * 1024 * 1024 / 4096)) * 4096


RegimeUnit = Literal["pages", "MiB"]
REGIME_UNITS = get_args(RegimeUnit)
PAGES_PER_MIB = 256  # 4 KiB pages


def _policy_names(value):
    """[regime]'s policy: one name or a list of them."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("allowed: a policy's name or a list of names")
    return tuple(names)


def _known_policies(names: tuple[str, ...]) -> tuple[str, ...]:
    known = load_policies()
    for name in names:
        if name not in known:
            raise ValueError(f"policy {name!r} is not a policy; allowed: {', '.join(known)}")
    return names


class Regime(Table):
    """Where a seed saw its effect, as one of the workload's metrics: it must reach
    `at_least_memory` times the guest's memory (in `unit`), or, for a metric that is not
    a size, the plain number `at_least`; in the runs of `policies` (every policy when
    empty: several, when experiments name the seed's "before" differently). The report
    prints it for every run."""
    metric: str
    unit: RegimeUnit | None = None
    at_least_memory: Positive | None = None
    policies: Annotated[tuple[str, ...], BeforeValidator(_policy_names),
                        AfterValidator(_known_policies)] = Field((), alias="policy")
    why: str
    at_least: Positive | None = None

    @model_validator(mode="after")
    def one_threshold(self):
        if (self.at_least_memory is None) == (self.at_least is None):
            raise ValueError("give exactly one of at_least_memory (a multiple of the guest's "
                             "memory, with unit) and at_least (a plain number)")
        if self.at_least is not None and self.unit is not None:
            raise ValueError(f"unit = {self.unit!r} goes with at_least_memory; at_least is in "
                             f"the metric's own unit")
        if self.at_least_memory is not None and self.unit is None:
            raise ValueError(f"unit = None; allowed: {', '.join(REGIME_UNITS)} (with "
                             f"at_least_memory)")
        return self

    def applies_to(self, policy: str) -> bool:
        return not self.policies or policy in self.policies

    @property
    def per_memory(self) -> bool:
        return self.at_least_memory is not None

    @property
    def threshold(self) -> float:
        """What a run's value must reach, on the regime's scale (x memory, or plain)."""
        threshold = self.at_least_memory if self.per_memory else self.at_least
        assert threshold is not None  # one_threshold: one of the two is given
        return threshold

    def required(self, memory_mib: float) -> float:
        """The smallest value in regime on a guest of `memory_mib`."""
        if not self.per_memory:
            return self.threshold
        per_mib = PAGES_PER_MIB if self.unit == "pages" else 1
        return self.threshold * memory_mib * per_mib

    def scaled(self, value: float, memory_mib: float) -> float:
        """A run's value on the regime's scale: a multiple of memory, or the value itself."""
        return value / (self.required(memory_mib) / self.threshold)


def _named(value):
    """A table of tables named by their keys ([metrics.NAME], [parameters.NAME]): each
    with its name, for the models of its entries."""
    if not isinstance(value, dict):
        return value
    return {name: {**entry, "name": name} if isinstance(entry, dict) else entry
            for name, entry in value.items()}


class Workload(Table):
    """A workload's meta.toml; `name` and `directory` are its folder's."""
    name: str
    directory: Path
    description: str
    seed: str | None = None
    parameters: Annotated[dict[str, Parameter], BeforeValidator(_named)] = {}
    data: tuple[DataFile, ...] = ()
    sources: tuple[str, ...] = ()
    phases: tuple[str, ...]
    generate: str | None = None  # host program run at image build: GENERATE OUT MEMORY_MIB
    # What parse.py reports, declared in [metrics]
    metrics: Annotated[dict[str, DeclaredMetric], BeforeValidator(_named)]
    regime: Regime | None = None  # where its seed saw the effect ([regime])
    # Phases that are a sleep by design: their quiet time (analysis QUIET) is the workload's
    # own, and the report does not flag it
    pauses: tuple[str, ...] = ()
    # The fewest CPUs it runs on. An image for a system of fewer cores leaves it out (and
    # out of its key: artefacts/image.py), so such a workload leaves those images as
    # they were; it may have no data files or generate hook (they would be left in).
    min_cores: Annotated[int, Field(ge=1)] = 1
    # Held only by the images of systems that name it in their opt_in_workloads (a
    # variant of an experiment that needs its own programs or data): every other image
    # leaves it out, with its data and generate hook, and out of its key, so adding or
    # changing one moves no other image or run id.
    opt_in: bool = False

    @model_validator(mode="after")
    def names_what_it_declares(self):
        if self.regime is not None and self.regime.metric not in self.metrics:
            raise ValueError(f"[regime] metric = {self.regime.metric!r} is not declared in "
                             f"[metrics]; allowed: {', '.join(self.metrics)}")
        unknown = [p for p in self.pauses if p not in self.phases]
        if unknown:
            raise ValueError(f"pauses names {', '.join(map(repr, unknown))}, not a phase; "
                             f"phases: {', '.join(self.phases)}")
        if self.generate is not None and not (self.directory / self.generate).is_file():
            raise ValueError(f"generate = {self.generate!r} is not a file in {self.directory}")
        if self.min_cores > 1 and (self.data or self.generate):
            raise ValueError("a workload with min_cores > 1 may have no [[data]] or generate "
                             "(an image for fewer cores would still hold them)")
        return self

    def metric(self, name: str) -> MetricSpec:
        """The declaration of a metric parse.py reports; an undeclared one is an error."""
        if name in self.metrics:
            return self.metrics[name]
        raise StudyError(f"workload '{self.name}' reports metric '{name}', which its "
                         f"meta.toml does not declare; declared: "
                         f"{', '.join(self.metrics) or 'none'}")

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


def parse_workload(directory: Path) -> Workload:
    path = directory / "meta.toml"
    table = load(path)
    if not (directory / "run").is_file():
        raise StudyError(f"{directory}: a workload needs an executable driver named 'run'")
    try:
        return Workload.model_validate({**table, "name": directory.name, "directory": directory})
    except ValidationError as error:
        raise config_error(path, error, Workload) from None


def workload_dirs(root: Path = WORKLOADS) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/meta.toml") if p.parent.name not in NOT_WORKLOADS)


def load_workloads(root: Path = WORKLOADS) -> dict[str, Workload]:
    return {d.name: parse_workload(d) for d in workload_dirs(root)}


def get_workload(name: str, root: Path = WORKLOADS) -> Workload:
    names = [d.name for d in workload_dirs(root)]
    if name not in names:
        raise StudyError(f"unknown workload '{name}'; allowed (from {root}): {', '.join(names)}")
    return parse_workload(root / name)
