"""A study published into the repository: `results/published/<study>/` holds each
current run's run.json (as `<run_id>/run.json`, where the report's links look), the
tidy table (`report/table.parquet`; the report writes the same table as `.csv.gz` beside
it for readers, never committed), the report built from those two alone,
the sweep log (`sweeps.jsonl`: every sweep that made the runs, on every machine), and
`findings.md`, what we found and the evidence, written by hand and kept across
publishing. Raw gem5 output (stats.txt), consoles and events stay out: they are large, and
each run.json names the inputs that regenerate them. The folder is read back by
analysis/published.py; restoring it on a new machine is restore.py.
"""

import json
import shutil
from pathlib import Path

from analysis.published import COUNTS, FINDINGS, PUBLISHED, counts, published_dir, table_in
from analysis.report import write_report
from analysis.table import export, export_csv, export_paths, study_folder_table
from reclaimstudy.campaigns import carry, sweeplog_writer
from reclaimstudy.errors import StudyError
from reclaimstudy.results import sweeplog
from reclaimstudy.results.record import published_runs
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.swapdir import replace_dir


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
    kept, table = study_folder_table(study, study_path)
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
    # Unfinished runs carried from machine to machine (carry.py): kept until they finish.
    if (target / carry.IN_FLIGHT).is_dir():
        shutil.copytree(target / carry.IN_FLIGHT, staging / carry.IN_FLIGHT)
        carry.drop_finished(study_path, staging)
        carry.drop_finished_runs(staging, study_path)
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
    table = table_in(target)
    export_csv(table, stem)  # not committed: the Parquet is the published table
    set_aside = counts(target)
    table.attrs.update(superseded=set_aside["superseded"], outdated=set_aside["outdated"])
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


def carry_runs(study, results: Path, min_cpu_s: float = carry.DEFAULT_MIN_CPU_S) -> dict:
    """Pack the study's unfinished gem5 runs (carry.pack) and its finished runs not yet
    published (carry.pack_finished) into its published folder, made if the study was never
    published, with the sweep log beside them."""
    study_path = results / study.name
    if not study_path.is_dir():
        raise StudyError(f"no results folder {study_path}: nothing to carry (run `./study "
                         f"sweep {study.name}` first)")
    target = published_dir(study.name, results)
    with publishing(study, results):
        outcome = carry.pack(study_path, target, min_cpu_s)
        outcome["finished"] = carry.pack_finished(study, study_path, target)
        sweeplog_writer.merge([study_path / sweeplog.LOG], target / sweeplog.LOG)
        return outcome
