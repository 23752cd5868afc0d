"""Publishing a study (results/published/<study>/): the runs' records, the tidy table and
a report rebuilt from those alone, with the run directories gone."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis.published import published_dir
from reclaimstudy.campaigns.publish import publish, report_published
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError
from tests.runfactory import changed
from tests.test_regimes import half_in_regime

REPO = Path(__file__).resolve().parents[1]

RUNS = Path(__file__).parent / "fixtures" / "runs"


def body(markdown: Path) -> str:
    """The report less the appendix's line of when it was made and from which folder."""
    return re.sub(r"^Made from .* runs in `[^`]+`.*\n", "", markdown.read_text(), flags=re.M)


@pytest.fixture(scope="module")
def published_once(tmp_path_factory):
    """The fixture study's report, then the study published (about half a minute)."""
    results = tmp_path_factory.mktemp("published") / "results"
    shutil.copytree(RUNS / "smoke", results / "smoke")
    from analysis.report import build_report
    original = build_report(load_study("smoke"), results)
    written = publish(load_study("smoke"), results)
    return results, original, written


@pytest.fixture
def published(published_once, tmp_path):
    """A test's own copy of `published_once`: results folder, and the paths of the report
    made from the runs and of the published one."""
    source, original, written = published_once
    results = tmp_path / "results"
    shutil.copytree(source, results)

    def moved(paths: dict) -> dict:
        return {key: results / path.relative_to(source)
                if isinstance(path, Path) and path.is_relative_to(source) else path
                for key, path in paths.items()}
    return results, moved(original), moved(written)


def test_the_published_folder_holds_records_table_and_report_but_no_raw_output(published):
    results, original, written = published
    target = published_dir("smoke", results)
    runs = sorted(p.name for p in target.iterdir() if p.name != "report")
    assert runs == sorted(p.name for p in (results / "smoke").iterdir()
                          if (p / "run.json").is_file())
    for run in runs:
        assert [p.name for p in (target / run).iterdir()] == ["run.json"]
    assert json.loads((target / runs[0] / "run.json").read_text()) == \
        json.loads((results / "smoke" / runs[0] / "run.json").read_text())
    assert pd.read_parquet(target / "report" / "table.parquet").equals(
        pd.read_parquet(results / "smoke" / "report" / "table.parquet"))
    assert written["markdown"] == target / "report" / "report.md"
    assert "runs in `results/published/smoke/`" in written["markdown"].read_text()


def test_the_report_rebuilds_from_the_published_copy_alone(published):
    results, original, _ = published
    made_from_runs = body(original["markdown"])
    shutil.rmtree(results / "smoke")
    rebuilt = report_published(load_study("smoke"), results)
    assert body(rebuilt["markdown"]) == made_from_runs
    links = re.findall(r"\]\(\.\./([^)]+)/run\.json\)", rebuilt["markdown"].read_text())
    assert len(set(links)) == 18
    for run_id in links:  # every run the report names is in the published folder
        assert (rebuilt["markdown"].parent.parent / run_id / "run.json").is_file()
    for plot in re.findall(r"\]\((plots/[^)]+\.png)\)", rebuilt["markdown"].read_text()):
        assert (rebuilt["markdown"].parent / plot).stat().st_size > 0


def test_publishing_again_drops_runs_the_source_no_longer_has(published):
    results, _, _ = published
    gone = next(p for p in sorted((results / "smoke").iterdir()) if (p / "run.json").is_file())
    shutil.rmtree(gone)
    publish(load_study("smoke"), results)
    target = published_dir("smoke", results)
    assert not (target / gone.name).exists()
    assert gone.name not in set(pd.read_parquet(target / "report" / "table.parquet")["run_id"])
    assert not target.with_name("smoke.new").exists() and not target.with_name("smoke.old").exists()


def test_the_published_csv_is_gzipped_holds_the_table_and_is_the_same_bytes_again(published):
    results, _, _ = published
    report = published_dir("smoke", results) / "report"
    assert not (report / "table.csv").exists()
    gz = report / "table.csv.gz"
    assert gz.read_bytes()[:2] == b"\x1f\x8b"  # gzip's magic number
    parquet = pd.read_parquet(report / "table.parquet")
    csv = pd.read_csv(gz)
    assert len(csv) == len(parquet)
    assert list(csv["run_id"]) == list(parquet["run_id"])
    before = gz.read_bytes()
    publish(load_study("smoke"), results)  # the same runs again: git sees no change
    assert gz.read_bytes() == before
    assert "table.csv.gz" in (report / "report.md").read_text()


def test_the_csv_is_not_committed_and_the_report_writes_it_again_from_the_parquet(published):
    results, _, _ = published
    report = published_dir("smoke", results) / "report"
    before = (report / "table.csv.gz").read_bytes()
    (report / "table.csv.gz").unlink()  # what a clone has: the Parquet alone
    report_published(load_study("smoke"), results)
    assert (report / "table.csv.gz").read_bytes() == before
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout: its .gitignore is not in force")
    ignored = subprocess.run(["git", "-c", f"safe.directory={REPO}", "-C", str(REPO),
                              "check-ignore", "-q",
                              "results/published/seeds-gem5/report/table.csv.gz"])
    assert ignored.returncode == 0, ".gitignore lets a published table.csv.gz be committed"


def test_rebuilding_the_published_report_from_the_same_runs_changes_no_byte(published):
    results, _, _ = published
    report = published_dir("smoke", results) / "report"
    committed = ["report.md", *sorted(f"plots/{p.name}" for p in (report / "plots").iterdir())]
    assert len(committed) > 3
    before = {name: (report / name).read_bytes() for name in committed}
    report_published(load_study("smoke"), results)
    changed = [name for name in committed if (report / name).read_bytes() != before[name]]
    assert not changed, f"rebuilt from the same runs, these differ (git would commit them): {changed}"


def test_a_published_table_naming_a_run_without_its_record_is_refused(published):
    results, _, _ = published
    target = published_dir("smoke", results)
    victim = next(p for p in target.iterdir() if p.name != "report")
    shutil.rmtree(victim)
    with pytest.raises(StudyError, match=f"runs whose run.json is not in .*{victim.name}"):
        report_published(load_study("smoke"), results)


def test_rebuilding_what_was_never_published_says_how_to_publish(tmp_path):
    with pytest.raises(StudyError, match="run `./study publish smoke` first"):
        report_published(load_study("smoke"), tmp_path)


def test_regime_checks_survive_publishing_without_the_runs_events(tmp_path):
    study_file, results = half_in_regime(tmp_path)
    publish(load_study(str(study_file)), results)
    shutil.rmtree(results / "regimes")
    markdown = report_published(load_study(str(study_file)), results)["markdown"].read_text()
    assert "Out of regime: 1 of 2 runs fall short" in markdown


def test_findings_are_linked_under_the_seed_table_and_written_in_their_experiment(published):
    results, _, _ = published
    target = published_dir("smoke", results)
    (target / "findings.md").write_text(
        "# Findings\n\n## thrash\nThe control's file was cached from round 3\n"
        "(refault_file fell to 0). Why:\n- first reason\n- second reason\n\nAfter.\n")
    publish(load_study("smoke"), results)  # publishing again keeps the findings
    written = report_published(load_study("smoke"), results)
    markdown = written["markdown"].read_text()
    summary = markdown.split('<div id="findings"></div>')[1].split("## Experiments")[0]
    assert "[thrash](#exp-thrash-ci-tiny-qemu)." in summary
    assert markdown.count("The control's file was cached") == 1  # once, in its section
    section = markdown.split('<div id="exp-thrash-ci-tiny-qemu"></div>')[1]
    assert section.split("### ", 2)[1].count("**What we found**: The control's file") == 1
    # In its section a finding keeps its own list and paragraphs.
    html = written["html"].read_text()
    assert ("<ul>\n<li>first reason</li>\n<li>second reason</li>\n</ul>\n<p>After.</p>"
            in html.split('id="exp-thrash-ci-tiny-qemu"')[1])
    from analysis.report import build_report
    assert "**What we found**" in build_report(load_study("smoke"), results)["markdown"].read_text()


def test_findings_edited_while_publishing_are_kept(published, monkeypatch):
    results, _, _ = published
    target = published_dir("smoke", results)
    (target / "findings.md").write_text("## thrash\nFirst text.\n")
    import reclaimstudy.campaigns.publish as publish_module
    write_report = publish_module._report_in

    def edited_meanwhile(study, staging):  # a person saves while the report is written
        written = write_report(study, staging)
        (target / "findings.md").write_text("## thrash\nSecond text.\n")
        return written
    monkeypatch.setattr(publish_module, "_report_in", edited_meanwhile)
    publish(load_study("smoke"), results)
    assert (target / "findings.md").read_text() == "## thrash\nSecond text.\n"
    assert not target.with_name(target.name + ".new").exists()
    monkeypatch.undo()
    publish(load_study("smoke"), results)  # and the next publish shows it
    assert "Second text." in (target / "report" / "report.md").read_text()


def test_findings_for_an_experiment_the_study_lacks_are_refused(published):
    results, _, _ = published
    (published_dir("smoke", results) / "findings.md").write_text("## desktop\nx\n")
    with pytest.raises(StudyError, match="'## desktop' names no experiment of the study; "
                                         "allowed: lazyfree, smoke, thrash, or 'What was run' or 'Provenance'"):
        report_published(load_study("smoke"), results)


def test_a_status_section_is_in_the_appendix_never_before_the_first_result(published):
    results, _, _ = published
    (published_dir("smoke", results) / "findings.md").write_text(
        "# Findings\n\n## What was run\nPaused: the disk stalls.\n\n## thrash\nCached.\n")
    markdown = report_published(load_study("smoke"), results)["markdown"].read_text()
    results_end = markdown.index('<div id="appendix"></div>')
    assert "Paused" not in markdown[:results_end]
    status = markdown.split('<div id="what-was-run"></div>')[1]
    assert status.startswith("\n\n### What was run\nFrom findings.md.\n\n"
                             "Paused: the disk stalls.\n")
    assert "**What we found**: Cached." in markdown


def test_a_provenance_section_comes_last_in_the_appendix(published):
    results, _, _ = published
    (published_dir("smoke", results) / "findings.md").write_text(
        "## What was run\nRunning.\n\n## Provenance\n- **Restarted.** The disk lost writes.\n")
    markdown = report_published(load_study("smoke"), results)["markdown"].read_text()
    results_part, appendix = markdown.split('<div id="appendix"></div>')
    assert "Restarted" not in results_part
    assert appendix.index("### Failed runs") < appendix.index("### What was run") \
        < appendix.index("### Provenance")
    history = appendix.split('<div id="provenance"></div>')[1]
    assert history.rstrip().endswith("- **Restarted.** The disk lost writes.")


def test_restored_runs_count_as_done_and_report_as_published(published, monkeypatch):
    results, original, _ = published
    made_from_runs = body(original["markdown"])
    shutil.rmtree(results / "smoke")  # a new machine: only the repository's copy is left
    from reclaimstudy.campaigns.restore import restore
    assert restore(load_study("smoke"), results) == 18
    assert restore(load_study("smoke"), results) == 0  # nothing twice
    restored = [p for p in (results / "smoke").iterdir() if p.is_dir() and p.name != ".partial"]
    assert len(restored) == 18
    assert {q.name for q in restored[0].iterdir()} == {"run.json", "rows.parquet"}
    from analysis.report import build_report
    assert body(build_report(load_study("smoke"), results)["markdown"]) == made_from_runs

    # The sweep finds every run done and starts none (its backend prepares nothing new:
    # the restored runs' artefacts are the ones it would use).
    from reclaimstudy.campaigns import sweep
    record = json.loads((restored[0] / "run.json").read_text())

    class Prepared:
        identity = record["identity"]["artefacts"]

    class Backend:
        def identity(self, spec):
            return Prepared.identity

        def prepare(self, spec):
            raise AssertionError("a sweep with nothing to run prepared a system")

        def run(self, *args, **kwargs):
            raise AssertionError("a restored run was run again")
    monkeypatch.setattr(sweep, "get_backend", lambda name: Backend())
    outcome = sweep.run_sweep(load_study("smoke"), "qemu", results, jobs=1)
    assert outcome.skipped == 18 and outcome.ok


def test_runs_set_aside_before_a_restore_stay_counted_on_the_new_machine(published):
    from analysis.table import build_table
    from reclaimstudy.campaigns.restore import restore
    results, _, _ = published
    study = results / "smoke"
    for run in list(study.iterdir()):  # an older generation: the same points on another image
        if (run / "run.json").is_file():
            old = study / f"{run.name}-oldimage"
            shutil.copytree(run, old)
            record = changed(json.loads((old / "run.json").read_text()), ("artefacts", "image"),
                             "0123456789abcdef")
            record["run_id"], record["started_at"] = old.name, "2000-01-01T00:00:00+0000"
            (old / "run.json").write_text(json.dumps(record))
    publish(load_study("smoke"), results)
    counts = published_dir("smoke", results) / "report" / "published.json"
    assert json.loads(counts.read_text())["superseded"] == 18
    restore(load_study("smoke"), results)  # where they are: counted once, not once more
    assert build_table(study, "smoke").attrs["superseded"] == 18

    shutil.rmtree(study)  # a new machine: the 18 older runs are not brought back
    assert restore(load_study("smoke"), results) == 18
    written = publish(load_study("smoke"), results)
    assert json.loads(counts.read_text())["superseded"] == 18
    assert "18 older runs" in written["markdown"].read_text()
    assert restore(load_study("smoke"), results) == 0  # again: not counted twice
    assert build_table(study, "smoke").attrs["superseded"] == 18


def test_the_sweep_log_is_published_carried_across_machines_and_reported(published):
    from reclaimstudy.campaigns import sweeplog_writer
    from reclaimstudy.campaigns.restore import restore
    from reclaimstudy.results import sweeplog
    results, _, _ = published
    study = results / "smoke"
    first = sweeplog_writer.started(study, backend="qemu", jobs=2, only=[], planned=18, skipped=0,
                             to_run=18)
    sweeplog_writer.finished(study, first, "some-run", "ok")  # then the machine was lost
    publish(load_study("smoke"), results)
    target = published_dir("smoke", results)
    assert len(sweeplog.entries(target / sweeplog.LOG)) == 2

    shutil.rmtree(study)  # a new machine: restore, sweep again, publish again
    restore(load_study("smoke"), results)
    second = sweeplog_writer.started(study, backend="qemu", jobs=2, only=[], planned=18, skipped=18,
                              to_run=0)
    sweeplog_writer.ended(study, second, done=0, failed=0, wall_s=1.0)
    written = publish(load_study("smoke"), results)
    got = sweeplog.summary(target / sweeplog.LOG)
    assert (got["sweeps"], got["unfinished"], got["runs_ok"]) == (2, 1, 1)
    assert "wept 2 time(s)" in written["markdown"].read_text()
    assert "wept 2 time(s)" in report_published(load_study("smoke"), results)[
        "markdown"].read_text()


def test_a_second_publisher_waits_for_the_first(published, capsys):
    import threading
    from reclaimstudy.campaigns.publish import publishing
    results, _, _ = published
    study = load_study("smoke")
    finished = threading.Event()
    with publishing(study, results):
        worker = threading.Thread(target=lambda: (report_published(study, results),
                                                  finished.set()))
        worker.start()
        worker.join(timeout=5)
        assert not finished.is_set()
        said = " ".join(capsys.readouterr().err.split())
        assert "waiting for another process building the published smoke" in said
    worker.join(timeout=300)
    assert finished.is_set()


def test_the_report_is_written_before_the_folder_is_swapped_in(published, monkeypatch):
    """A reader of the published folder (a test, a browser) never finds runs that its
    report does not list: the new folder arrives with its report already in it."""
    results, _, _ = published
    target = published_dir("smoke", results)
    arriving = []
    import reclaimstudy.campaigns.publish as publish_module
    replace_dir = publish_module.replace_dir

    def watched(new, replaced):
        if replaced == target:
            report = new / "report" / "report.md"
            text = report.read_text() if report.is_file() else ""
            runs = [run.name for run in new.iterdir() if (run / "run.json").is_file()]
            arriving.append((len(runs), sum(f"{run}/run.json" in text for run in runs)))
        return replace_dir(new, replaced)
    monkeypatch.setattr(publish_module, "replace_dir", watched)
    written = publish(load_study("smoke"), results)
    assert arriving == [(18, 18)]
    assert written["markdown"] == target / "report" / "report.md"
    assert all(path.parent == target / "report" for path in written["table"])


def test_unfinished_runs_are_carried_kept_by_publishing_until_they_finish_and_restored(published):
    from reclaimstudy.campaigns import carry
    from reclaimstudy.campaigns.publish import carry_runs
    from reclaimstudy.campaigns.restore import restore, restore_carried
    from reclaimstudy.results.record import CHECKPOINTS
    from tests.test_carry import unfinished_run
    results, _, _ = published
    study = load_study("smoke")
    target = published_dir("smoke", results)
    unfinished_run(results / "smoke", run_id="smoke-unfinished", saved=2, cpu_seconds=1000)
    # A run carried from another machine that has finished here since.
    finished = sorted(p.name for p in (results / "smoke").iterdir() if (p / "run.json").is_file())[0]
    unfinished_run(results / "elsewhere", run_id=finished, saved=1, cpu_seconds=2000)
    carry.pack(results / "elsewhere", target)
    outcome = carry_runs(study, results)
    assert [r for r, _ in outcome["packed"]] == ["smoke-unfinished"]
    assert outcome["dropped"] == [finished]

    publish(study, results)  # the folder is made anew: the carried run stays in it
    assert sorted(carry.manifests(target)) == ["smoke-unfinished"]
    assert (target / carry.IN_FLIGHT / "smoke-unfinished.tar.xz.000").is_file()

    shutil.rmtree(results / "smoke")  # a new machine
    assert restore(study, results) == 18
    assert [r for r, _ in restore_carried(study, results)] == ["smoke-unfinished"]
    assert carry.saved_segments(results / "smoke" / CHECKPOINTS / "smoke-unfinished")[-1].name \
        == "seg-001"
    assert restore_carried(study, results) == []  # as far along here already


def test_carrying_a_study_never_swept_says_to_sweep_first(tmp_path):
    from reclaimstudy.campaigns.publish import carry_runs
    with pytest.raises(StudyError, match=r"nothing to carry \(run `./study sweep smoke` first\)"):
        carry_runs(load_study("smoke"), tmp_path)


def copies_on_another_image(study_path: Path, image: str, started_at: str) -> list[str]:
    """Each fixture run again in study_path, as made on another image at started_at."""
    made = []
    for run in sorted(p for p in (RUNS / "smoke").iterdir() if (p / "run.json").is_file()):
        record = changed(json.loads((run / "run.json").read_text()), ("artefacts", "image"), image)
        record["started_at"] = started_at
        copy = study_path / record["run_id"]
        shutil.copytree(run, copy)
        (copy / "run.json").write_text(json.dumps(record))
        made.append(record["run_id"])
    return made


def test_runs_set_aside_are_counted_once_through_carrying_publishing_and_restoring(tmp_path):
    """Only the runs the table keeps are carried, with a count of those it set aside that
    no restore brings back: on every later machine the study sets aside as many as the
    one that carried it, whether the set-aside runs were published or never were."""
    from analysis.table import build_table
    from reclaimstudy.campaigns import carry
    from reclaimstudy.campaigns.publish import carry_runs
    from reclaimstudy.campaigns.restore import restore, restore_finished
    results = tmp_path / "results"
    study_path = results / "smoke"
    shutil.copytree(RUNS / "smoke", study_path)
    older = copies_on_another_image(study_path, "0123456789abcdef", "2000-01-01T00:00:00+0000")
    study = load_study("smoke")
    target = published_dir("smoke", results)

    def new_machine() -> pd.DataFrame:
        shutil.rmtree(study_path)
        restore(study, results)
        restore_finished(study, results)
        return build_table(study_path, "smoke")

    assert build_table(study_path, "smoke").attrs["superseded"] == 18
    assert len(carry_runs(study, results)["finished"]) == 18  # the older 18 are only counted
    assert not set(older) & set(carry.carried_finished(target))
    assert carry.only_here(study, study_path, target) == []  # the set-aside 18 are not owed
    assert new_machine().attrs["superseded"] == 18
    publish(study, results)
    assert carry.carried_finished(target) == []
    assert json.loads((target / "report" / "published.json").read_text())["superseded"] == 18
    assert new_machine().attrs["superseded"] == 18
    # Newer runs supersede the published ones, and are carried, not published: the 18
    # published come back and are set aside again, the 18 before them only counted.
    newer = copies_on_another_image(study_path, "fedcba9876543210", "2030-01-01T00:00:00+0000")
    assert build_table(study_path, "smoke").attrs["superseded"] == 36
    assert sorted(carry_runs(study, results)["finished"]) == sorted(newer)
    table = new_machine()
    assert table.attrs["superseded"] == 36 and set(table["run_id"]) == set(newer)


def test_finished_runs_never_published_are_carried_as_their_rows_and_restored_whole(tmp_path):
    """A machine that goes away between a run's end and the next publish takes nothing
    with it: carried as run.json and table rows (text), the runs come back on the next
    machine with the same table, a sweep counts them done, and publishing drops them."""
    from analysis.table import build_table
    from reclaimstudy.campaigns import carry
    from reclaimstudy.campaigns.publish import carry_runs
    from reclaimstudy.campaigns.restore import restore, restore_finished
    from reclaimstudy.results import sweeplog
    results = tmp_path / "results"
    shutil.copytree(RUNS / "smoke", results / "smoke")
    (results / "smoke" / sweeplog.LOG).write_text(json.dumps(
        {"sweep": "s1", "event": "start", "run_id": None, "at": "2026-12-07T00:00:00Z"}) + "\n")
    study = load_study("smoke")
    before = build_table(results / "smoke", "smoke")
    target = published_dir("smoke", results)
    assert len(carry.only_here(study, results / "smoke", target)) == 18
    outcome = carry_runs(study, results)
    assert carry.only_here(study, results / "smoke", target) == []
    assert len(outcome["finished"]) == 18 and outcome["packed"] == []
    assert not (target / "report").exists()  # carried, not published
    for run_id in outcome["finished"]:  # text only: a run.json and its rows as JSON lines
        assert sorted(p.name for p in (target / carry.IN_FLIGHT / carry.FINISHED / run_id)
                      .iterdir()) == sorted(["run.json", carry.ROWS])
    assert carry_runs(study, results)["finished"] == []  # nothing twice

    shutil.rmtree(results / "smoke")  # a new machine
    assert restore(study, results) == 0
    assert sorted(restore_finished(study, results)) == sorted(outcome["finished"])
    assert restore_finished(study, results) == []
    assert "s1" in (results / "smoke" / sweeplog.LOG).read_text()
    after = build_table(results / "smoke", "smoke")
    order = ["run_id", "metric", "phase", "source", "index"]
    pd.testing.assert_frame_equal(
        before.sort_values(order).reset_index(drop=True),
        after.sort_values(order).reset_index(drop=True), check_dtype=False)

    publish(study, results)  # now published: the carried copies go
    assert carry.carried_finished(target) == []
    assert len([p for p in target.iterdir() if (p / "run.json").is_file()]) == 18
