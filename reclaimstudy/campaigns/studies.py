"""Studies (configs/studies/*.toml): experiments x policies x systems x repetitions, as data."""

import fnmatch
from dataclasses import dataclass, replace
from pathlib import Path

from reclaimstudy.campaigns.runs import RunSpec
from reclaimstudy.config.policies import get_policy, load_policies
from reclaimstudy.config.systems import get_system, system_names
from reclaimstudy.config.tomlfile import check_keys, load
from reclaimstudy.config.verdict_rules import VerdictRules, verdict_rules
from reclaimstudy.config.workloads import get_workload, workload_dirs
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.results.record import point_key

STUDIES_DIR = CONFIGS / "studies"


@dataclass(frozen=True)
class Experiment:
    name: str
    workload: str
    seed: str | None
    policies: tuple[str, ...]
    systems: tuple[str, ...]
    params: dict
    # This experiment's own number of repetitions (None: the study's), so the costly
    # points can stop at fewer and the noisy ones go on to more.
    repetitions: int | None = None
    # Why the experiment runs on its systems' CPU model: the fidelity ladder's result
    # that let a cheaper CPU stand in for gem5's timing CPU (or kept the timing CPU), or
    # that the experiment is a functional check. The report prints it beside the CPU.
    cpu_why: str | None = None


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
                            values["seed"] = workload.parameters["seed"].default + repetition
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


def _names(where: str, key: str, one: str, value, allowed: list[str]) -> tuple[str, ...]:
    """`key`: the list's key (policies); `one`: what each name is (policy)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise StudyError(f"{where}: {key} must be a non-empty list of names")
    for name in value:
        if name not in allowed:
            raise StudyError(f"{where}: unknown {one} '{name}'; allowed: {', '.join(allowed)}")
    return tuple(value)


def _repetitions(where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
        raise StudyError(f"{where}: repetitions = {value!r}; allowed: integers 1..100")
    return value


def _cpu_why(where: str, why) -> str | None:
    if why is not None and (not isinstance(why, str) or not why.strip()):
        raise StudyError(f"{where}: cpu_why = {why!r}; allowed: a sentence saying why the "
                         f"experiment runs on its systems' CPU model")
    return why


def parse_study(name: str, table: dict, path: Path) -> Study:
    where = str(path)
    check_keys(where, table, {"description", "baseline", "repetitions", "systems", "policies",
                              "experiment", "checkpoint_every_s", "order", "verdicts"},
               {"description", "baseline", "experiment"})
    policies, systems = list(load_policies()), system_names()
    workloads = [d.name for d in workload_dirs()]
    baseline = table["baseline"]
    if baseline not in policies:
        raise StudyError(f"{where}: baseline '{baseline}' is not a policy; allowed: {', '.join(policies)}")
    repetitions = _repetitions(where, table.get("repetitions", 1))
    every = table.get("checkpoint_every_s")
    if every is not None and (isinstance(every, bool) or not isinstance(every, (int, float))
                              or not every > 0):
        raise StudyError(f"{where}: checkpoint_every_s = {every!r}; allowed: simulated seconds "
                         f"> 0 between a gem5 run's checkpoints (or leave it out: none)")
    default_systems = table.get("systems")
    default_policies = table.get("policies")
    experiments, seen = [], set()
    for index, spec in enumerate(table["experiment"]):
        at = f"{where} [[experiment]] #{index + 1}"
        check_keys(at, spec, {"name", "workload", "seed", "policies", "systems", "params",
                              "repetitions", "cpu_why"},
                   {"name", "workload"})
        if spec["name"] in seen:
            raise StudyError(f"{at}: experiment name '{spec['name']}' is used twice")
        seen.add(spec["name"])
        if spec["workload"] not in workloads:
            raise StudyError(f"{at}: unknown workload '{spec['workload']}'; allowed: {', '.join(workloads)}")
        exp_policies = _names(at, "policies", "policy", spec.get("policies", default_policies),
                              policies)
        if baseline not in exp_policies:
            raise StudyError(f"{at}: the baseline policy '{baseline}' is missing from its policies "
                             f"{', '.join(exp_policies)}; every comparison needs it")
        exp_systems = _names(at, "systems", "system", spec.get("systems", default_systems), systems)
        params = spec.get("params", {})
        get_workload(spec["workload"]).arguments(params, at)  # checked now, not mid-sweep
        own = _repetitions(at, spec["repetitions"]) if "repetitions" in spec else None
        experiments.append(Experiment(spec["name"], spec["workload"], spec.get("seed"),
                                      exp_policies, exp_systems, params, own,
                                      _cpu_why(at, spec.get("cpu_why"))))
    if not experiments:
        raise StudyError(f"{where}: no [[experiment]]")
    study = Study(name, table["description"], baseline, repetitions, tuple(experiments), path,
                  float(every) if every is not None else None,
                  verdicts=verdict_rules(table.get("verdicts"), where))
    order = table.get("order", [])
    if not isinstance(order, list) or not all(isinstance(p, str) and p for p in order):
        raise StudyError(f"{where}: order = {order!r}; allowed: a list of run patterns "
                         f"(experiment/policy/system/rN, shell wildcards), as --only takes")
    study.check_patterns(f"{where}: order pattern", order)
    return replace(study, order=tuple(order))


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
