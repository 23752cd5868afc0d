"""The seed reproduction table: each seed's own numbers beside ours, per backend."""

import math
from typing import Annotated

import pandas as pd
from pydantic import (BaseModel, ConfigDict, Field, StrictBool, ValidationError,
                      ValidationInfo, model_validator)

from analysis.idle_sweep import windows
from analysis.metrics import vmstat_declarations
from analysis.paired import paired
from analysis.verdicts import Rules, judge, untestable
from reclaimstudy.config.tomlfile import config_error, load, number
from reclaimstudy.config.workloads import load_workloads
from reclaimstudy.paths import CONFIGS

SEEDS_FILE = CONFIGS / "seeds.toml"
# The comparison none of the seeds had: where an experiment also ran it, the table
# puts it beside the seed's "on" policy (the unpatched kernel's classic LRU).
MGLRU_POLICY = "mglru"


Ratio = Annotated[float, number()]
# Where a claim's seed_metric may come from (analysis/table.py's sources).
SEED_METRIC_SOURCES = ("workload", "vmstat")


class Claim(BaseModel):
    """A [[claim]] of seeds.toml: one of a seed's numbers, and our row that stands for it."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: str
    workload: str
    what: str
    metric: str
    phase: str = ""
    with_policy: str = Field(alias="with")
    without_policy: str = Field(alias="without")
    seed_with: Ratio
    seed_without: Ratio
    unit: str
    # A control beyond the seed (its `without` switches off more than the seed changed,
    # where 6.1 masks the seed's own change): judged against the seed's numbers all the
    # same, and labelled as such.
    control: StrictBool = False
    # What the seed itself counted, where `metric` is not it (source:phase:metric, as the
    # table names it: seed 000b read the whole system's pgmajfault, the row its program's
    # own count): paired beside the row and judged alone, never in the family, so the
    # verdict stays on `metric`. In the claim's unit: the seed's numbers are its.
    seed_metric: str = ""

    @property
    def seed_ratio(self) -> float:
        return self.seed_with / self.seed_without

    @model_validator(mode="after")
    def names_a_declared_metric(self, info: ValidationInfo):
        """A claim names a metric its workload declares, in one of the workload's phases
        (or none: a whole-run metric), in the declared unit: a typo must not drop a row."""
        workloads = (info.context or {})["workloads"]
        if self.workload not in workloads:
            raise ValueError(f"workload = {self.workload!r}; allowed: {', '.join(workloads)}")
        workload = workloads[self.workload]
        if self.metric not in workload.metrics:
            raise ValueError(f"metric = {self.metric!r} is not declared by workload "
                             f"'{workload.name}' (its meta.toml [metrics]); allowed: "
                             f"{', '.join(workload.metrics)}")
        if self.phase and self.phase not in workload.phases:
            raise ValueError(f"phase = {self.phase!r}; allowed: {', '.join(workload.phases)} "
                             f"(or no phase, for a whole-run metric)")
        unit = workload.metrics[self.metric].unit
        if self.unit != unit:
            raise ValueError(f"unit = {self.unit!r}, but workload '{workload.name}' declares "
                             f"{self.metric} in {unit!r}")
        if self.seed_metric:
            self.check_seed_metric(workload)
        return self

    def check_seed_metric(self, workload) -> None:
        """seed_metric names a metric of the workload's or of the vmstat source, in one
        of the workload's phases, in the claim's unit."""
        parts = self.seed_metric.split(":")
        if len(parts) != 3 or parts[0] not in SEED_METRIC_SOURCES:
            raise ValueError(f"seed_metric = {self.seed_metric!r}; write it as "
                             f"source:phase:metric, source one of "
                             f"{', '.join(SEED_METRIC_SOURCES)}")
        source, phase, metric = parts
        declared = workload.metrics if source == "workload" else vmstat_declarations()
        if metric not in declared:
            raise ValueError(f"seed_metric = {self.seed_metric!r}: no {source} metric "
                             f"{metric!r}; allowed: {', '.join(declared)}")
        if phase not in workload.phases:
            raise ValueError(f"seed_metric = {self.seed_metric!r}: phase {phase!r}; "
                             f"allowed: {', '.join(workload.phases)}")
        if declared[metric].unit != self.unit:
            raise ValueError(f"seed_metric = {self.seed_metric!r} is in "
                             f"{declared[metric].unit!r}, the claim's unit {self.unit!r}")


class Signature(BaseModel):
    """A [signature."SEED"] of seeds.toml: the metrics that show a seed's mechanism only
    together (seed 000a's rule saved time by cutting major faults and swap-ins), so its
    pair is judged on all of them at once (analysis/signatures.py)."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str = Field(min_length=1, pattern=r"\S")
    metrics: list[str] = Field(min_length=2)


class SeedsFile(BaseModel):
    """configs/seeds.toml: the seeds' claims, per seed what stops it reproducing on this
    kernel ([caveats]), and the seeds judged on several metrics together ([signature])."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: list[Claim] = Field(min_length=1)
    caveats: dict[str, Annotated[str, Field(min_length=1, pattern=r"\S")]] = {}
    signature: dict[str, Signature] = {}

    @model_validator(mode="after")
    def caveats_name_claimed_seeds(self):
        seeds = sorted({claim.seed for claim in self.claim})
        for table, named in (("caveats", self.caveats), ("signature", self.signature)):
            for seed in named:
                if seed not in seeds:
                    raise ValueError(f"[{table}] names seed '{seed}', which has no [[claim]]; "
                                     f"allowed: {', '.join(seeds)}")
        return self

    @model_validator(mode="after")
    def each_claim_is_one_row(self):
        """Two claims of one metric, phase and pair would be one row twice."""
        seen = set()
        for claim in self.claim:
            key = (claim.seed, claim.workload, claim.metric, claim.phase, claim.with_policy,
                   claim.without_policy)
            if key in seen:
                raise ValueError(f"seed {claim.seed}'s claim on {claim.metric} "
                                 f"[{claim.phase or 'whole run'}], {claim.with_policy} against "
                                 f"{claim.without_policy}, is given twice")
            seen.add(key)
        return self

    @model_validator(mode="after")
    def signatures_name_claimed_metrics(self):
        for seed, signature in self.signature.items():
            claimed = sorted({c.metric for c in self.claim if c.seed == seed})
            for metric in signature.metrics:
                if metric not in claimed:
                    raise ValueError(f"[signature.\"{seed}\"] metrics: {metric!r} is not a "
                                     f"metric of seed {seed}'s claims; allowed: "
                                     f"{', '.join(claimed)}")
        return self


def load_seeds(path=SEEDS_FILE) -> SeedsFile:
    try:
        return SeedsFile.model_validate(load(path), context={"workloads": load_workloads()})
    except ValidationError as error:
        raise config_error(path, error, SeedsFile) from None


def load_claims(path=SEEDS_FILE) -> list[Claim]:
    return load_seeds(path).claim


def load_caveats(path=SEEDS_FILE) -> dict[str, str]:
    """Per seed, what we found stops it reproducing on this kernel ([caveats] in seeds.toml)."""
    return dict(load_seeds(path).caveats)


def load_signatures(path=SEEDS_FILE) -> dict[str, Signature]:
    """Per seed, the metrics its pair is judged on together ([signature] in seeds.toml)."""
    return dict(load_seeds(path).signature)


def caveats_for(rows: pd.DataFrame, path=SEEDS_FILE) -> list[dict]:
    """The caveats of the seeds that have a row in the reproduction table, in seed order."""
    if rows.empty:
        return []
    caveats = load_caveats(path)
    return [{"seed": seed, "text": caveats[seed]}
            for seed in sorted(set(rows["seed"])) if seed in caveats]


def repetition_values(table: pd.DataFrame, experiment: str, setup: str, metric: str,
                      phase: str, policy: str, source: str = "workload") -> dict[int, float]:
    """repetition -> a claim's workload metric (or `source`'s; in `phase`, "" for the
    whole run), for one policy's runs of one experiment setup."""
    rows = table[(table["experiment"] == experiment) & (table["setup"] == setup)
                 & (table["policy"] == policy) & (table["metric"] == metric)
                 & (table["source"] == source) & table["index"].isna()
                 & (table["status"] == "ok")
                 & (table["phase"].fillna("") == phase)]
    return dict(zip(rows["repetition"].astype(int), rows["value"].astype(float)))


def seed_metric_beside(claim: Claim, table: pd.DataFrame, experiment: str, setup: str,
                       expects_none: bool, rules: Rules) -> dict | None:
    """The claim's seed_metric over the row's pairs: both policies' means, the paired
    ratio with its interval and p, and its verdict alone (at the study's alpha, not
    adjusted: it is not one of the family's rows). None where the claim names none."""
    if not claim.seed_metric:
        return None
    source, phase, metric = claim.seed_metric.split(":")
    values = [repetition_values(table, experiment, setup, metric, phase, policy, source)
              for policy in (claim.with_policy, claim.without_policy)]
    pair = paired(*values)
    verdict = (pair.verdict_of_no_effect(rules.equivalence_margin, rules.alpha) if expects_none
               else pair.verdict(claim.seed_ratio, rules.alpha))
    return {"metric": claim.seed_metric, "unit": claim.unit,
            "with": _mean(values[0]), "without": _mean(values[1]),
            "n_pairs": pair.n, "ratio": pair.ratio, "low": pair.low, "high": pair.high,
            "p": pair.p_value, "verdict": verdict}


def _mean(values: dict[int, float]) -> float:
    return sum(values.values()) / len(values) if values else math.nan


def reproduction(comparison: pd.DataFrame, table: pd.DataFrame,
                 regimes: pd.DataFrame | None = None, rules: Rules = Rules()) -> pd.DataFrame:
    """One row per (claim, experiment setup) with runs: the seed's ratio with/without,
    ours (means, and paired by repetition with its interval: analysis/paired.py), the
    verdict by the study's `rules` among all the rows (analysis/verdicts.py: against no
    effect where seed 000b's idle time is outside its window, analysis/idle_sweep.py;
    untestable where `regimes`, regime_checks' rows, put every run out of the seed's
    regime), whether the means' direction is the seed's, MGLRU's value and its ratio
    to the seed's "on" policy where the experiment ran MGLRU, and where the claim names
    what the seed itself counted, that metric paired beside (seed_metric_beside)."""
    rows: list[dict] = []
    pairs = []
    if comparison.empty:
        return pd.DataFrame(rows)
    experiments = table[["experiment", "workload"]].drop_duplicates()
    idle_windows = windows(table)
    for claim in load_claims():
        names = set(experiments[experiments["workload"] == claim.workload]["experiment"])
        found = comparison[comparison["experiment"].isin(names)
                           & (comparison["metric"] == claim.metric)
                           & (comparison["phase"] == claim.phase)
                           & (comparison["source"] == "workload")]
        for (experiment, setup, backend, system), part in found.groupby(
                ["experiment", "setup", "backend", "system"]):
            cells = {r["policy"]: r for _, r in part.iterrows()}
            if claim.with_policy not in cells or claim.without_policy not in cells:
                continue
            ours_with = cells[claim.with_policy]["mean"]
            ours_without = cells[claim.without_policy]["mean"]
            if ours_with == ours_without:
                ratio, direction = (1.0 if ours_with else math.nan), "no effect (equal)"
            elif ours_without == 0:
                # from zero: the change made it larger, whatever the ratio
                ratio, direction = math.inf, "yes" if claim.seed_ratio > 1 else "no"
            else:
                ratio = ours_with / ours_without
                direction = "yes" if (ratio < 1) == (claim.seed_ratio < 1) else "no"
            p = cells[claim.without_policy]["p_value"]
            pair = paired(*(repetition_values(table, experiment, setup, claim.metric,
                                              claim.phase, policy)
                            for policy in (claim.with_policy, claim.without_policy)))
            mglru = cells[MGLRU_POLICY]["mean"] if MGLRU_POLICY in cells else math.nan
            # Seed 000b's effect needs the idle time inside its window; outside it the
            # seed expects none, and that is what the row is judged against.
            window = idle_windows.get((experiment, backend, system))
            expects_none = window is not None and not window.inside
            checked = None if regimes is None or regimes.empty else regimes[
                (regimes["experiment"] == experiment) & (regimes["backend"] == backend)
                & (regimes["system"] == system)]
            pairs.append(pair)
            rows.append({
                "seed": claim.seed, "experiment": experiment, "setup": setup,
                "what": claim.what,
                "control": claim.control,
                "policies": [claim.with_policy, claim.without_policy] +
                            ([MGLRU_POLICY] if MGLRU_POLICY in cells else []),
                "metric": claim.metric,
                "phase": claim.phase, "unit": claim.unit, "backend": backend, "system": system,
                "seed_with": claim.seed_with, "seed_without": claim.seed_without,
                "seed_ratio": claim.seed_ratio, "ours_with": ours_with,
                "ours_without": ours_without, "ours_ratio": ratio,
                "direction": direction, "direction_reproduced": direction == "yes",
                "p_value": p,
                "n_pairs": pair.n, "paired_ratio": pair.ratio, "interval_low": pair.low,
                "interval_high": pair.high, "paired_p": pair.p_value, "paired_by": pair.by,
                "expects_none": expects_none,
                "untestable": untestable(checked),
                "window": window.describe() if window else "",
                # what the row is judged against: the seed's ratio, or 1 outside its window
                "expected_ratio": 1.0 if expects_none else claim.seed_ratio,
                "ours_mglru": mglru,
                "mglru_ratio": mglru / ours_with if ours_with and mglru == mglru else math.nan,
                "timing": "gem5 (modelled hardware)" if backend == "gem5" else
                          "QEMU (functional only, no timing model)",
                "seed_metric": seed_metric_beside(claim, table, experiment, setup,
                                                  expects_none, rules),
            })
    return pd.DataFrame(judge(rows, pairs, rules))


def unmeasured(seeds: pd.DataFrame, table: pd.DataFrame) -> list[dict]:
    """The claims of seeds this study ran that have no reproduction row (their metric and
    phase under their policy pair: seed 002's four threads, a phase the study does not
    run), with the phases the workload's runs have, so that the report says which of a
    seed's numbers it leaves untested instead of dropping them."""
    ran = set(table["workload"])
    done = set() if seeds.empty else set(zip(seeds["seed"], seeds["metric"], seeds["phase"]))
    studied = set() if seeds.empty else set(seeds["seed"])
    out = []
    for claim in load_claims():
        if claim.workload not in ran or claim.seed not in studied:
            continue
        if (claim.seed, claim.metric, claim.phase) in done:
            continue
        phases = sorted(set(table[(table["workload"] == claim.workload)
                                  & (table["source"] == "workload")]["phase"].dropna()))
        out.append({"seed": claim.seed, "what": claim.what, "metric": claim.metric,
                    "phase": claim.phase, "phases_run": phases})
    return out
