"""A study published into the repository: `results/published/<study>/` holds each
current run's run.json (as `<run_id>/run.json`, where the report's links look), the
tidy table (`report/table.parquet` and `.csv.gz`), the report built from those two alone,
the sweep log (`sweeps.jsonl`: every sweep that made the runs, on every machine), and
`findings.md`, what we found and the evidence, written by hand and kept across
publishing. Raw gem5 output (stats.txt), consoles and events stay out: they are large, and
each run.json names the inputs that regenerate them.
"""

import json
import shutil
from pathlib import Path

import pandas as pd

from analysis.report import FINDINGS, PUBLISHED, write_report
from analysis.table import SET_ASIDE_BEFORE, export, export_paths, folder_table
from reclaimstudy import carry
from reclaimstudy.campaigns import sweeplog_writer
from reclaimstudy.campaigns.rundir import partial_name
from reclaimstudy.errors import StudyError
from reclaimstudy.results import sweeplog
from reclaimstudy.results.record import PARTIAL, published_runs
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.swapdir import replace_dir

# What the table cannot hold: the runs set aside when it was made (report/published.json).
COUNTS = "published.json"


def published_dir(study_name: str, results: Path) -> Path:
    return results / PUBLISHED / study_name


def publishing(study, results: Path):
    """One publisher of a study at a time: two at once (a timer's and a person's) swapped
    the folder under each other's report (a plot gone mid-write)."""
    return exclusive(results / f".publish-{study.name}.lock", f"the published {study.name}")


def publish(study, results: Path) -> dict:
    """Copy the study's current runs' records and table into its published folder (the
    whole folder replaced, so a run since set aside leaves it), then write the report
    there from the published copy alone."""
    with publishing(study, results):
        return _publish(study, results)


def _publish(study, results: Path) -> dict:
    study_path = results / study.name
    kept, table = folder_table(study_path, study.name, study.points())
    if table.empty:
        raise StudyError(f"{study_path}: no runs to publish: run `./study sweep {study.name}` first")
    target = published_dir(study.name, results)
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    for run in kept:
        (staging / run.record["run_id"]).mkdir(parents=True)
        shutil.copy2(run.directory / "run.json", staging / run.record["run_id"] / "run.json")
    if (target / FINDINGS).is_file():  # written by hand from the evidence: kept
        shutil.copy2(target / FINDINGS, staging / FINDINGS)
    # Unfinished runs carried from machine to machine (reclaimstudy/carry.py): kept until
    # they finish.
    if (target / carry.IN_FLIGHT).is_dir():
        shutil.copytree(target / carry.IN_FLIGHT, staging / carry.IN_FLIGHT)
        carry.drop_finished(study_path, staging)
    # The log of every sweep, on this machine and on those that published before it.
    sweeplog_writer.merge([target / sweeplog.LOG, study_path / sweeplog.LOG], staging / sweeplog.LOG)
    export(table, staging / "report" / "table")
    (staging / "report" / COUNTS).write_text(json.dumps(
        {"study": study.name, "runs": len(kept), "superseded": table.attrs["superseded"],
         "outdated": table.attrs["outdated"], "from": f"results/{study.name}/"},
        indent=2) + "\n")
    # The report is written before the swap, so a reader of the published folder (a test,
    # a browser) never sees runs that its report does not list, nor a report half-written.
    written = _report_in(study, staging)
    findings_read = _text(staging / FINDINGS)
    old = replace_dir(staging, target)
    if old is not None:
        # findings.md is edited by hand while timers publish: an edit made since it was
        # copied above lives only in the old folder, and is kept (the report shows it
        # from the next publish on)
        edited = _text(old / FINDINGS)
        if edited is not None and edited != findings_read:
            shutil.copy2(old / FINDINGS, target / FINDINGS)
            print(f"{target / FINDINGS}: edited while publishing; the edit is kept, "
                  f"the report shows it from the next publish")
        shutil.rmtree(old)
    return {key: _moved(value, staging, target) for key, value in written.items()}


def _text(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


def _moved(value, staging: Path, target: Path):
    """A path (or list of paths) the report wrote under `staging`, as it is under `target`."""
    if isinstance(value, list):
        return [_moved(item, staging, target) for item in value]
    if isinstance(value, Path) and value.is_relative_to(staging):
        return target / value.relative_to(staging)
    return value


def published_table(study, results: Path) -> pd.DataFrame:
    """The published tidy table of a study (report/table.parquet)."""
    return _table_in(published_dir(study.name, results))


def _table_in(target: Path) -> pd.DataFrame:
    path = target / "report" / "table.parquet"
    if not path.is_file():
        raise StudyError(f"{target}: no published table (report/table.parquet): run "
                         f"`./study publish {target.name}` first")
    return pd.read_parquet(path)


def report_published(study, results: Path) -> dict:
    """Rebuild the published report from the published table and run.json files alone."""
    with publishing(study, results):
        return _report_published(study, results)


def _report_published(study, results: Path) -> dict:
    return _report_in(study, published_dir(study.name, results))


def _report_in(study, target: Path) -> dict:
    """Write the report of the published folder `target` from its table and run.json files."""
    report = target / "report"
    stem = report / "table"
    table = _table_in(target)
    counts = _counts(target)
    table.attrs.update(superseded=counts["superseded"], outdated=counts["outdated"])
    runs = published_runs(target, study.name)
    wanted = set(table["run_id"])
    kept = [run for run in runs if run.record["run_id"] in wanted]
    missing = sorted(wanted - {run.record["run_id"] for run in kept})
    if missing:
        raise StudyError(f"{stem.with_suffix('.parquet')} names {len(missing)} runs whose "
                         f"run.json is not in {target} (first: {missing[0]}); publish again")
    return write_report(study, table, kept, kept, report,
                        export_paths(stem),
                        source=f"results/{PUBLISHED}/{study.name}/",
                        findings_path=target / FINDINGS, sweep_log=target / sweeplog.LOG)


def _counts(target: Path) -> dict:
    """The published folder's counts of its runs and of those set aside (COUNTS)."""
    return json.loads((target / "report" / COUNTS).read_text())


RESTORED_ROWS = "rows.parquet"


def restore(study, results: Path) -> int:
    """Put the published runs back into results/<study>/ (each as its run.json and its
    rows of the published table, RESTORED_ROWS) where the folder lacks them, so that a
    study carried on on a new machine neither redoes nor loses them: the sweep counts a
    run with a run.json as done, and the table reads a restored run's rows as they were
    published. Returns how many were restored."""
    target = published_dir(study.name, results)
    table_path = target / "report" / "table.parquet"
    if not table_path.is_file():
        raise StudyError(f"{target}: nothing published to restore (no report/table.parquet)")
    table = pd.read_parquet(table_path)
    study_path = results / study.name
    if not published_runs(study_path):
        # A new machine: the runs set aside before are counted, not brought back. (A
        # folder with runs of its own counts its own; these would count them twice.)
        counts = _counts(target)
        study_path.mkdir(parents=True, exist_ok=True)
        (study_path / SET_ASIDE_BEFORE).write_text(json.dumps(
            {key: counts[key] for key in ("superseded", "outdated")}, indent=2) + "\n")
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


def carry_runs(study, results: Path, min_cpu_s: float = carry.DEFAULT_MIN_CPU_S) -> dict:
    """Pack the study's unfinished gem5 runs into its published folder (carry.pack)."""
    target = published_dir(study.name, results)
    if not (target / "report" / "table.parquet").is_file():
        raise StudyError(f"{target}: not published yet: run `./study publish {study.name}` "
                         f"first (carried runs live beside the published ones)")
    with publishing(study, results):
        return carry.pack(results / study.name, target, min_cpu_s)


def restore_carried(study, results: Path) -> list:
    """Unpack the carried runs into results/<study>/.checkpoints/ (carry.unpack)."""
    return carry.unpack(results / study.name, published_dir(study.name, results))

