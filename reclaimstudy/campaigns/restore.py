"""A published study brought back onto a new machine: its runs put back into
results/<study>/ (so a sweep neither redoes nor loses them) and its carried unfinished gem5
runs unpacked where their sweep resumes them."""

import json
import shutil
from pathlib import Path

import pandas as pd

from analysis.published import counts, published_dir
from analysis.table import SET_ASIDE_BEFORE
from reclaimstudy.campaigns import carry, sweeplog_writer
from reclaimstudy.campaigns.rundir import partial_name
from reclaimstudy.errors import StudyError
from reclaimstudy.results import sweeplog
from reclaimstudy.results.record import PARTIAL, published_runs

RESTORED_ROWS = "rows.parquet"


def restore(study, results: Path) -> int:
    """Put the published runs back into results/<study>/ (each as its run.json and its
    rows of the published table, RESTORED_ROWS) where the folder lacks them, so that a
    study carried on on a new machine neither redoes nor loses them: the sweep counts a
    run with a run.json as done, and the table reads a restored run's rows as they were
    published. Returns how many were restored."""
    target = published_dir(study.name, results)
    table_path = target / "report" / "table.parquet"
    study_path = results / study.name
    carried = carry.carried_set_aside(target)
    if not table_path.is_file() \
            and not (target / carry.IN_FLIGHT).is_dir() and not (target / sweeplog.LOG).is_file():
        raise StudyError(f"{target}: nothing published or carried to restore (no "
                         f"report/table.parquet, no {carry.IN_FLIGHT}/)")
    if not published_runs(study_path):
        # A new machine: the runs set aside before are counted, not brought back (the
        # count carried with finished runs when they were carried after the last publish,
        # which drops it). A folder with runs of its own counts its own; these would
        # count them twice. So restore before restore_finished fills the folder.
        set_aside = carried if carried is not None else \
            counts(target) if table_path.is_file() else {"superseded": 0, "outdated": 0}
        study_path.mkdir(parents=True, exist_ok=True)
        (study_path / SET_ASIDE_BEFORE).write_text(json.dumps(
            {key: set_aside[key] for key in ("superseded", "outdated")}, indent=2) + "\n")
    if not table_path.is_file():  # carried, never published: only the sweep log besides
        sweeplog_writer.merge([target / sweeplog.LOG], study_path / sweeplog.LOG)
        return 0
    table = pd.read_parquet(table_path)
    restored = 0
    for run in published_runs(target, study.name):
        run_id = run.record["run_id"]
        if (study_path / run_id).exists():
            continue
        # Assembled where half-written runs are (never read as runs), moved in whole.
        staging = study_path / PARTIAL / partial_name(run_id)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        table[table["run_id"] == run_id].to_parquet(staging / RESTORED_ROWS, index=False)
        shutil.copy2(run.directory / "run.json", staging / "run.json")
        staging.rename(study_path / run_id)
        restored += 1
    # The sweeps that made them: so the next publish carries the whole history on.
    sweeplog_writer.merge([target / sweeplog.LOG], study_path / sweeplog.LOG)
    return restored


def restore_carried(study, results: Path) -> list:
    """Unpack the carried unfinished runs into results/<study>/.checkpoints/ (carry.unpack)."""
    return carry.unpack(results / study.name, published_dir(study.name, results))


def restore_finished(study, results: Path) -> list[str]:
    """Put the carried finished runs back into results/<study>/ (carry.unpack_finished)."""
    study_path = results / study.name
    study_path.mkdir(parents=True, exist_ok=True)
    return carry.unpack_finished(study_path, published_dir(study.name, results))
