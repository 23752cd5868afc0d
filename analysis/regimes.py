"""Whether each run sits in the regime where its seed saw the effect ([regime] in the
workload's meta.toml): one of its metrics against the guest's memory, or against a
plain number for a metric that is not a size."""

import pandas as pd

from analysis.metrics import GUEST_MEMORY
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.results.record import PublishedRun

COLUMNS = ["run_id", "experiment", "backend", "system", "policy", "repetition", "metric",
           "value", "required", "multiple", "at_least", "per_memory", "in_regime", "why",
           "regime_policy"]


def run_value(rows: pd.DataFrame, metric: str) -> float | None:
    """The run's value of a metric: its whole-run row, else the sum over its phases."""
    rows = rows[(rows["metric"] == metric) & rows["index"].isna()]
    if rows.empty:
        return None
    whole = rows[rows["phase"].isna()]
    return float(whole["value"].iloc[0]) if not whole.empty else float(rows["value"].sum())


def guest_memory_mib(table: pd.DataFrame, run: PublishedRun) -> float:
    """The memory the guest's kernel had (MemTotal at the job's start, the table's
    "guest" row), else the profile's: a workload sized "10x memory" sizes itself by
    MemTotal."""
    rows = table[(table["run_id"] == run.record["run_id"]) & (table["source"] == "guest")
                 & (table["metric"] == GUEST_MEMORY.name)]
    if not rows.empty:
        return float(rows["value"].iloc[0])
    return run.record["identity"]["system"]["memory"]["size_mib"]


def regime_checks(table: pd.DataFrame, runs: list[PublishedRun]) -> pd.DataFrame:
    """One row per run that has a regime to meet (its workload declares one, and the run's
    policy is one it names, or it names none), with the value, what is required, and the
    verdict."""
    # One parse per workload (a workload's meta.toml, and the policies its regime names).
    regimes = {w: get_workload(w).regime for w in table["workload"].unique()}
    memory = {run.record["run_id"]: guest_memory_mib(table, run) for run in runs
              if regimes.get(run.record["workload_name"])}
    out = []
    ok = table[(table["status"] == "ok") & (table["source"] == "workload")]
    for (run_id, workload), rows in ok.groupby(["run_id", "workload"], sort=False):
        regime = regimes[workload]
        first = rows.iloc[0]
        if regime is None or not regime.applies_to(first["policy"]):
            continue
        value = run_value(rows, regime.metric)
        required = regime.required(memory[run_id])
        multiple = None if value is None else regime.scaled(value, memory[run_id])
        out.append({"run_id": run_id, "experiment": first["experiment"],
                    "backend": first["backend"], "system": first["system"],
                    "policy": first["policy"], "repetition": first["repetition"],
                    "metric": regime.metric, "value": value, "required": required,
                    "multiple": multiple, "at_least": regime.threshold,
                    "per_memory": regime.per_memory,
                    "in_regime": value is not None and value >= required, "why": regime.why,
                    "regime_policy": " and ".join(regime.policies) or None})
    return pd.DataFrame(out, columns=COLUMNS)
