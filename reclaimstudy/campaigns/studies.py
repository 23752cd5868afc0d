"""Studies (configs/studies/*.toml): experiments x policies x systems x repetitions, as data."""

import fnmatch
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field,
                      ValidationError, ValidationInfo, field_validator, model_validator)

from reclaimstudy.campaigns.runs import RunSpec
from reclaimstudy.config.policies import get_policy, load_policies
from reclaimstudy.config.systems import get_system, system_names
from reclaimstudy.config.tomlfile import config_error, load, number, whole_number
from reclaimstudy.config.verdict_rules import VerdictRules
from reclaimstudy.config.workloads import get_workload, workload_dirs
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.results.record import point_key

STUDIES_DIR = CONFIGS / "studies"


def _context(info: ValidationInfo) -> dict:
    """What parse_study knows beside the file: the names of policies, systems, workloads."""
    assert info.context is not None, "a study file is read with parse_study's context"
    return info.context


def _known(kind: str, what: str):
    """A list of names, each one of the context's `kind` (policies, systems)."""
    def check(names: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        allowed = _context(info)[kind]
        for name in names:
            if name not in allowed:
                raise ValueError(f"unknown {what} '{name}'; allowed: {', '.join(allowed)}")
        return names
    return AfterValidator(check)


def _sentence(why: str) -> str:
    if not why.strip():
        raise ValueError("allowed: a sentence saying why the experiment runs on its "
                         "systems' CPU model")
    return why


def _mechanism(why: str) -> str:
    if not why.strip():
        raise ValueError("allowed: a sentence saying why the seed's effect cannot occur on "
                         "Linux 6.1 (its mechanism) and which experiment carries the verdict")
    return why


Repetitions = Annotated[int, whole_number(1, 100)]
Names = Annotated[tuple[str, ...], Field(min_length=1)]


class Experiment(BaseModel):
    """An [[experiment]] of a study file; its policies and systems default to the
    study's own."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    workload: str
    seed: str | None = None
    policies: Annotated[Names, _known("policies", "policy")]
    systems: Annotated[Names, _known("systems", "system")]
    params: dict = {}
    # This experiment's own number of repetitions (None: the study's), so the costly
    # points can stop at fewer and the noisy ones go on to more.
    repetitions: Repetitions | None = None
    # Why the experiment runs on its systems' CPU model: the fidelity ladder's result
    # that let a cheaper CPU stand in for gem5's timing CPU (or kept the timing CPU), or
    # that the experiment is a functional check. The report prints it beside the CPU.
    cpu_why: Annotated[str, AfterValidator(_sentence)] | None = None
    # Why the seed's effect cannot occur on Linux 6.1, by its mechanism, and which
    # experiment carries the seed's verdict instead: an out-of-regime row says it beside
    # its verdict (analysis/verdicts.py, explained).
    on_6_1: Annotated[str, AfterValidator(_mechanism)] | None = None

    @field_validator("workload")
    @classmethod
    def known_workload(cls, workload: str, info: ValidationInfo) -> str:
        allowed = _context(info)["workloads"]
        if workload not in allowed:
            raise ValueError(f"unknown workload '{workload}'; allowed: {', '.join(allowed)}")
        return workload

    @field_validator("params")
    @classmethod
    def its_workloads_parameters(cls, params: dict, info: ValidationInfo) -> dict:
        """Checked now, not mid-sweep."""
        if "workload" in info.data:
            try:
                get_workload(info.data["workload"]).arguments(params)
            except StudyError as error:
                raise ValueError(str(error)) from None
        return params


def _patterns(value):
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise ValueError("allowed: a list of run patterns (experiment/policy/system/rN, "
                         "shell wildcards), as --only takes")
    return tuple(value)


Reason = Annotated[str, Field(min_length=1, pattern=r"\S")]


class OlderInstrumentGroup(BaseModel):
    """Experiments kept on an older instrument for one reason (`[[older_instrument]]`)."""
    model_config = ConfigDict(extra="forbid")
    experiments: Names
    why: Reason


def _older_instrument(value):
    """`[older_instrument]` names each experiment with its reason; `[[older_instrument]]`
    groups experiments under one reason, so a reason shared by many is written once. An
    experiment in several groups is kept for all their reasons, joined in the file's
    order."""
    if not isinstance(value, list):
        return value
    reasons: dict[str, str] = {}
    for index, group in enumerate(value, 1):
        try:
            group = OlderInstrumentGroup.model_validate(group)
        except ValidationError as error:  # worded as every config error is
            raise ValueError(str(config_error(f"[[older_instrument]] #{index}", error,
                                              OlderInstrumentGroup))) from None
        for name in group.experiments:
            reasons[name] = f"{reasons[name]}; {group.why}" if name in reasons else group.why
    return reasons


def _every(value: float) -> float:
    if value <= 0:
        raise ValueError("allowed: simulated seconds > 0 between a gem5 run's checkpoints "
                         "(or leave it out: none)")
    return value


class StudyFile(BaseModel):
    """A study file (configs/studies/NAME.toml)."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    baseline: str
    repetitions: Repetitions = 1
    # What an experiment that names none runs: filled into its table before it is read.
    systems: tuple[str, ...] | None = None
    policies: tuple[str, ...] | None = None
    experiment: list[Experiment] = Field(min_length=1)
    checkpoint_every_s: Annotated[float, number(), AfterValidator(_every)] | None = None
    order: Annotated[tuple[str, ...], BeforeValidator(_patterns)] = ()
    verdicts: VerdictRules = VerdictRules()
    # Another study whose published rows this study's report sets beside its own (the
    # same experiments on other hardware: analysis/beside.py).
    beside: str | None = None
    # Experiments whose published runs stay on an older kernel or simulator while others
    # run on a newer one, each with why the difference cannot move its rows (the report
    # prints it); every other experiment's older runs are superseded (analysis/table.py).
    # Written either per experiment or in groups sharing a reason (_older_instrument).
    older_instrument: Annotated[dict[str, Reason], BeforeValidator(_older_instrument)] = {}

    @field_validator("beside")
    @classmethod
    def beside_is_a_study(cls, name: str | None) -> str | None:
        if name is not None and name not in study_names():
            raise ValueError(f"not a study; allowed: {', '.join(study_names())}")
        return name

    @model_validator(mode="before")
    @classmethod
    def experiments_inherit(cls, data):
        if isinstance(data, dict) and isinstance(data.get("experiment"), list):
            defaults = {k: data[k] for k in ("policies", "systems") if k in data}
            data = {**data, "experiment": [{**defaults, **e} if isinstance(e, dict) else e
                                           for e in data["experiment"]]}
        return data

    @field_validator("baseline")
    @classmethod
    def baseline_is_a_policy(cls, baseline: str, info: ValidationInfo) -> str:
        if baseline not in _context(info)["policies"]:
            raise ValueError(f"not a policy; allowed: {', '.join(_context(info)['policies'])}")
        return baseline

    @model_validator(mode="after")
    def experiments_compare_with_the_baseline(self):
        seen = set()
        for index, experiment in enumerate(self.experiment, 1):
            at = f"[[experiment]] #{index}"
            if experiment.name in seen:
                raise ValueError(f"{at}: experiment name '{experiment.name}' is used twice")
            seen.add(experiment.name)
            if self.baseline not in experiment.policies:
                raise ValueError(f"{at}: the baseline policy '{self.baseline}' is missing from "
                                 f"its policies {', '.join(experiment.policies)}; every "
                                 f"comparison needs it")
        for name in self.older_instrument:
            if name not in seen:
                raise ValueError(f"[older_instrument] names '{name}', not an experiment of this "
                                 f"study; allowed: {', '.join(e.name for e in self.experiment)}")
        return self


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    baseline: str
    repetitions: int
    experiments: tuple[Experiment, ...]
    path: Path
    # gem5 runs save a checkpoint at every phase boundary and every this many simulated
    # seconds, and restore it to go on (None: one uninterrupted simulation per run).
    checkpoint_every_s: float | None = None
    # Patterns (fnmatch) over "experiment/policy/system/rN": only the runs they match
    # (sweep --only); empty: every run.
    only: tuple[str, ...] = ()
    # The study file's own `order`: patterns like `only`'s, but every run is made; those
    # they name first, in the order of the first pattern each matches. So a sweep of the
    # bare study name, on any machine, goes on in the order its authors chose.
    order: tuple[str, ...] = ()
    # How the report judges the study's rows ([verdicts]: reclaimstudy/config/verdict_rules.py).
    verdicts: VerdictRules = VerdictRules()
    # The study whose published rows the report sets beside this one's (StudyFile.beside).
    beside: str | None = None
    # (experiment, why) for each experiment whose runs may stay on an older kernel or
    # simulator (StudyFile.older_instrument), in the file's order.
    older_instrument: tuple[tuple[str, str], ...] = ()

    def select(self, patterns: list[str]) -> "Study":
        """This study narrowed to the runs some pattern matches; a pattern that matches
        none is an error naming what the labels look like."""
        self.check_patterns("--only", patterns)
        return replace(self, only=tuple(patterns))

    def check_patterns(self, what: str, patterns) -> None:
        labels = [_only_label(e, spec) for e, spec in self.all_runs("any")]
        for pattern in patterns:
            if not fnmatch.filter(labels, pattern):
                raise StudyError(f"{what} {pattern!r} matches no run of study {self.name}; "
                                 f"runs are named experiment/policy/system/rN, e.g. {labels[0]}")

    def runs(self, backend: str) -> list[tuple[Experiment, RunSpec]]:
        """The runs to make: every run of the study, or those `only` selects, in the
        order of the first pattern each matches (so one sweep can put some runs first
        without a second sweep waiting on the first's last run); without `only`, every
        run in the study's `order`, the runs it does not name last; else the study's order."""
        out = self.all_runs(backend)
        patterns = self.only or self.order
        if patterns:
            unnamed = None if self.only else len(patterns)
            ranked = [(_first_pattern(patterns, e, spec, unnamed), (e, spec)) for e, spec in out]
            # sorted() is stable: within a pattern, runs keep the study's order
            out = [run for rank, run in sorted((r for r in ranked if r[0] is not None),
                                               key=lambda r: r[0])]
        return out

    def all_runs(self, backend: str) -> list[tuple[Experiment, RunSpec]]:
        """Every run of the study, experiment by experiment, repetition by repetition.
        Repetitions vary the workload's `seed` parameter where it has one (see `varied`)."""
        out = []
        for experiment in self.experiments:
            workload = get_workload(experiment.workload)
            for system in experiment.systems:
                # Repetition by repetition, each with all its policies: a sweep cut
                # short leaves whole pairs (what a paired verdict needs).
                for repetition in range(self.repetitions_of(experiment)):
                    for policy in experiment.policies:
                        values = dict(experiment.params)
                        if "seed" in workload.parameters and "seed" not in experiment.params:
                            values["seed"] = int(workload.parameters["seed"].default) + repetition
                        where = f"{self.path} experiment '{experiment.name}'"
                        out.append((experiment, RunSpec(
                            study=self.name, system=get_system(system), policy=get_policy(policy),
                            workload=workload, arguments=workload.arguments(values, where),
                            repetition=repetition, backend=backend,
                            experiment=experiment.name,
                            checkpoint_every_s=self.checkpoint_every_s)))
        return out

    def repetitions_of(self, experiment: Experiment) -> int:
        return experiment.repetitions or self.repetitions

    def points(self) -> set[str]:
        """The point keys (record.point_key) of every run the study asks for, on any backend."""
        return {point_key(spec.identity()) for _, spec in self.all_runs("any")}

    def varied(self, experiment: Experiment) -> str:
        """What differs between repetitions of an experiment, for the report."""
        workload = get_workload(experiment.workload)
        if self.repetitions_of(experiment) < 2:
            return "nothing: one repetition"
        parts = ["the repetition's seed: a start delay of 0-50 ms, 0-2% of memory read into "
                 "the page cache and 0-2% held as anonymous memory before the workload "
                 "(perturb), and on gem5 the modelled disk's rotational positions"]
        if "seed" in workload.parameters and "seed" not in experiment.params:
            parts.append("the workload's own random seed")
        return "; ".join(parts)


def _first_pattern(patterns, experiment: Experiment, spec: RunSpec, unnamed: int | None):
    """The index of the first pattern naming this run; `unnamed` if none does."""
    label = _only_label(experiment, spec)
    return next((n for n, p in enumerate(patterns) if fnmatch.fnmatchcase(label, p)), unnamed)


def _only_label(experiment: Experiment, spec: RunSpec) -> str:
    return replace(spec, experiment=experiment.name).point()


def parse_study(name: str, table: dict, path: Path) -> Study:
    context = {"policies": list(load_policies()), "systems": system_names(),
               "workloads": [d.name for d in workload_dirs()]}
    try:
        parsed = StudyFile.model_validate(table, context=context)
    except ValidationError as error:
        raise config_error(path, error, StudyFile) from None
    study = Study(name, parsed.description, parsed.baseline, parsed.repetitions,
                  tuple(parsed.experiment), path, parsed.checkpoint_every_s,
                  verdicts=parsed.verdicts, beside=parsed.beside,
                  older_instrument=tuple(parsed.older_instrument.items()))
    study.check_patterns(f"{path}: order pattern", parsed.order)
    return replace(study, order=parsed.order)


def study_names() -> list[str]:
    return sorted(p.stem for p in STUDIES_DIR.glob("*.toml"))


def load_study(name_or_path: str) -> Study:
    path = Path(name_or_path)
    if not path.suffix:
        path = STUDIES_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise StudyError(f"unknown study '{name_or_path}'; allowed: {', '.join(study_names())} "
                         f"(or a path to a study .toml file)")
    return parse_study(path.stem, load(path), path)
