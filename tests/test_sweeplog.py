"""The sweep log: what a sweep writes, what a crash leaves, and merging across machines."""

from reclaimstudy.campaigns import sweeplog_writer
from reclaimstudy.results import sweeplog


def test_a_sweep_that_ends_and_one_cut_short_are_told_apart(tmp_path):
    first = sweeplog_writer.started(tmp_path, backend="gem5", jobs=2, only=[], planned=4, skipped=0,
                             to_run=4)
    sweeplog_writer.finished(tmp_path, first, "run-a", "ok")
    sweeplog_writer.finished(tmp_path, first, "run-b", "failed")
    sweeplog_writer.ended(tmp_path, first, done=2, failed=1, wall_s=10.0)
    second = sweeplog_writer.started(tmp_path, backend="gem5", jobs=2, only=[], planned=4, skipped=1,
                              to_run=3)
    sweeplog_writer.finished(tmp_path, second, "run-b", "ok")
    with open(tmp_path / sweeplog.LOG, "a") as log:
        log.write('{"sweep": "cut mid-wri')  # the machine died while writing
    got = sweeplog.summary(tmp_path / sweeplog.LOG)
    assert (got["sweeps"], got["unfinished"], got["runs_ok"], got["runs_failed"]) == (2, 1, 2, 1)
    assert len(got["hosts"]) == 1 and got["first"] == got["last"]


def test_a_reports_runs_count_only_the_sweeps_from_the_first_that_made_one_of_them(tmp_path):
    import json

    def line(at, sweep, event, **facts):
        return json.dumps({"at": f"2026-11-{at}Z", "sweep": sweep, "event": event,
                           "host": "vm", **facts}) + "\n"
    (tmp_path / sweeplog.LOG).write_text("".join([
        # an older simulator's sweeps: their runs were set aside
        line("20T10:00:00", "old-1", "start"), line("20T11:00:00", "old-1", "run",
                                                   run_id="old-run", status="ok"),
        line("21T10:00:00", "old-2", "start"),
        # the runs the report shows: a sweep cut short, resumed by the next
        line("25T09:00:00", "new-1", "start"), line("25T10:00:00", "new-1", "run",
                                                   run_id="a", status="ok"),
        line("26T09:00:00", "new-2", "start"), line("26T10:00:00", "new-2", "run",
                                                   run_id="b", status="ok"),
        line("26T10:00:01", "new-2", "run", run_id="c", status="failed"),
        line("26T11:00:00", "new-2", "end", done=1, failed=1)]))
    whole = sweeplog.summary(tmp_path / sweeplog.LOG)
    assert (whole["sweeps"], whole["unfinished"], whole["runs_ok"], whole["first"]) == (
        4, 3, 3, "2026-11-20")
    shown = sweeplog.summary(tmp_path / sweeplog.LOG, {"a", "b"})
    assert (shown["sweeps"], shown["unfinished"], shown["runs_ok"], shown["runs_failed"],
            shown["runs_shown"], shown["first"]) == (2, 1, 2, 1, 2, "2026-11-25")
    # runs no logged sweep made (published before the log existed): the whole log
    assert sweeplog.summary(tmp_path / sweeplog.LOG, {"x"})["sweeps"] == 4


def test_merging_logs_from_two_machines_keeps_each_line_once(tmp_path):
    here, there, published = tmp_path / "here.jsonl", tmp_path / "there.jsonl", tmp_path / "p.jsonl"
    for path in (here, there):
        sweep = sweeplog_writer.started(tmp_path / path.stem, backend="gem5", jobs=1, only=[],
                                 planned=1, skipped=0, to_run=1)
        sweeplog_writer.finished(tmp_path / path.stem, sweep, f"run-{path.stem}", "ok")
        (tmp_path / path.stem / sweeplog.LOG).rename(path)
    sweeplog_writer.merge([here], published)
    sweeplog_writer.merge([there, here], published)
    sweeplog_writer.merge([published], published)
    lines = sweeplog.entries(published)
    assert len(lines) == 4
    assert sweeplog.summary(published)["runs_ok"] == 2


def test_no_log_gives_no_summary(tmp_path):
    assert sweeplog.summary(tmp_path / sweeplog.LOG) is None
    sweeplog_writer.merge([tmp_path / "absent.jsonl"], tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_sweep_stopped_by_an_exception_logs_its_end_with_the_reason(tmp_path, monkeypatch):
    import pytest

    from reclaimstudy.campaigns import runs, sweep
    from reclaimstudy.campaigns.studies import load_study

    class Prepared:
        identity = {"kernel": "k", "image": "i"}
        record: dict = {}

    class Backend:
        console_file = "console.log"

        def identity(self, spec):
            return Prepared.identity

        def prepare(self, spec):
            return Prepared()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("stopped by hand")
    monkeypatch.setattr(sweep, "get_backend", lambda name: Backend())
    monkeypatch.setattr(runs, "execute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(load_study("smoke").select(["lazyfree/*"]), "qemu", tmp_path, jobs=1)
    [start, end] = sweeplog.entries(tmp_path / "smoke" / sweeplog.LOG)
    assert (start["event"], start["to_run"], end["event"]) == ("start", 4, "end")
    assert end["error"] == "KeyboardInterrupt: stopped by hand" and end["done"] == 0


def test_runs_a_killed_sweep_published_but_never_logged_are_given_back_to_it(tmp_path):
    """A kill between a run's publication and its log line; the next sweep logs it."""
    import json

    def line(at, sweep, event, **facts):
        return json.dumps({"at": f"2026-11-{at}Z", "sweep": sweep, "event": event,
                           "host": "vm", **facts}) + "\n"

    def published(run_id, started_at, node="vm", **host):
        return {"run_id": run_id, "status": "ok", "started_at": started_at,
                "wall_seconds": 90.0, "host": {"node": node, **host}}
    (tmp_path / sweeplog.LOG).write_text("".join([
        line("20T10:00:00", "ended", "start"), line("20T12:00:00", "ended", "end", done=1),
        line("25T09:00:00", "killed", "start"),
        line("25T09:30:00", "killed", "run", run_id="logged", status="ok")]))
    records = [
        published("logged", "2026-11-25T09:28:30+0000"),
        published("unlogged", "2026-11-25T10:00:00+0100"),   # 09:00 UTC, ended 09:01:30
        published("older", "2026-11-19T10:00:00+0000"),       # before any logged sweep
        published("of-ended", "2026-11-20T11:00:00+0000"),    # its sweep logged an end
        published("elsewhere", "2026-11-25T10:00:00+0000", node="other"),
        published("slurm", "2026-11-25T10:00:00+0000", slurm_job="7_1")]
    assert sweeplog_writer.recover(tmp_path, records) == 1
    assert sweeplog_writer.recover(tmp_path, records) == 0  # once only
    [got] = [e for e in sweeplog.entries(tmp_path / sweeplog.LOG) if e.get("recovered")]
    assert (got["sweep"], got["run_id"], got["at"]) == ("killed", "unlogged",
                                                        "2026-11-25T09:01:30Z")
    assert sweeplog.summary(tmp_path / sweeplog.LOG)["runs_ok"] == 2
