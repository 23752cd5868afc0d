"""Make published runs again, here, and say whether they repeat.

A run id names a run's inputs; gem5 is deterministic, so the same inputs on any machine
must give the same table, value for value. This checks it for chosen runs: it makes them
again in a scratch results folder and compares every row with the published table. The
first thing to do on a new machine (its gem5, kernel and image are new builds).
"""

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from analysis.table import run_rows, study_runs
from reclaimstudy.campaigns import runs
from reclaimstudy.campaigns.sweep import record_repeated_build
from reclaimstudy.errors import StudyError

# What names one value of a run's table.
ROW_KEY = ["source", "phase", "metric", "index"]


def newer_metrics(published: pd.DataFrame, again: pd.DataFrame) -> list[str]:
    """Metrics the run made again has and its published rows have none of: the table
    learnt them after the run was published (from a stats.txt no longer there), so there
    is nothing to compare them with."""
    return sorted(set(again["metric"]) - set(published["metric"])) if not published.empty else []


def differences(published: pd.DataFrame, again: pd.DataFrame) -> pd.DataFrame:
    """The rows of one run whose values differ (or that only one side has), with the
    relative change; empty when the run repeated exactly. Metrics newer than the
    published rows (newer_metrics) are left out."""
    again = again[~again["metric"].isin(newer_metrics(published, again))]
    merged = _keyed(published).merge(_keyed(again), on=ROW_KEY, how="outer",
        suffixes=("_published", "_again"), indicator=True)
    a, b = merged["value_published"], merged["value_again"]
    same = (merged["_merge"] == "both") & ((a == b) | (a.isna() & b.isna()))
    moved = merged[~same].copy()
    moved["relative"] = (moved["value_again"] - moved["value_published"]) / \
        moved["value_published"].abs()
    return moved.drop(columns="_merge")


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """The key columns as one type on both sides (a fresh run's empty index is None, the
    published table's NaN) and empty ones as values that compare equal."""
    keyed = frame[ROW_KEY + ["value"]].copy()
    keyed["index"] = pd.to_numeric(keyed["index"], errors="coerce").fillna(-1)
    for column in ("source", "phase", "metric"):
        keyed[column] = keyed[column].fillna("").astype(str)
    keyed["value"] = pd.to_numeric(keyed["value"], errors="coerce")
    return keyed


def check_selection(study, backend, table: pd.DataFrame) -> None:
    """Every run the selection names must be in the published `table` (else there is
    nothing to compare it with, and repeating it would be a new run)."""
    published = set(table["run_id"])
    plan = study.runs(backend.name)
    if not plan:
        raise StudyError(f"no run of {study.name} selected")
    for _, spec in plan:
        identifier = runs.run_id(spec, backend.identity(spec))
        if identifier not in published:
            raise StudyError(f"{spec.point()} ({identifier}) is not published: only published "
                             f"runs can be repeated; `./study status {study.name}` lists them")


class Repeated(NamedTuple):
    moved: pd.DataFrame       # its rows that differ from the published ones (empty: it repeats)
    values: int               # how many values were compared
    newer: list[str]          # metrics newer than its published rows (newer_metrics)
    gem5_sha256: str | None   # the gem5 build that made it again (None on QEMU)


def compare(study, table: pd.DataFrame, scratch: Path) -> dict[str, Repeated]:
    """run id -> how it compares with the published `table`, for every run made in
    `scratch`."""
    found = {}
    for run in study_runs(runs.study_dir(study.name, scratch), study.name):
        identifier = run.record["run_id"]
        again = pd.DataFrame(run_rows(run))
        published = table[table["run_id"] == identifier]
        newer = newer_metrics(published, again)
        gem5 = (run.record.get("artefacts") or {}).get("gem5") or {}
        found[identifier] = Repeated(differences(published, again),
                                     int((~again["metric"].isin(newer)).sum()), newer,
                                     gem5.get("sha256") if isinstance(gem5, dict) else None)
    return found


def note_builds(study_path: Path, found: dict[str, Repeated]) -> list[str]:
    """Record in `study_path` each gem5 build that made a run again exactly, so that a
    sweep on it says it was checked instead of asking for a repeat; returns those noted."""
    noted = []
    for identifier, repeated in found.items():
        if repeated.moved.empty and repeated.gem5_sha256:
            record_repeated_build(study_path, repeated.gem5_sha256, identifier, repeated.values)
            noted.append(repeated.gem5_sha256)
    return noted


def describe(identifier: str, moved: pd.DataFrame, total: int, newer=()) -> str:
    aside = (f"; not compared: {', '.join(newer)} (the table learnt them after this run "
             f"was published)") if newer else ""
    if moved.empty:
        return f"{identifier}: repeats (all {total} values identical){aside}"
    worst = moved.reindex(moved["relative"].abs().sort_values(ascending=False).index).iloc[0]
    return (f"{identifier}: DIFFERS in {len(moved)} of {total} values; most: "
            f"{worst['metric']} ({worst['phase']}) {worst['value_published']:.6g} published, "
            f"{worst['value_again']:.6g} now ({worst['relative']:+.2%}){aside}")
