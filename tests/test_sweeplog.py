"""The sweep log: what a sweep writes, what a crash leaves, and merging across machines."""

from reclaimstudy import sweeplog


def test_a_sweep_that_ends_and_one_cut_short_are_told_apart(tmp_path):
    first = sweeplog.started(tmp_path, backend="gem5", jobs=2, only=[], planned=4, skipped=0,
                             to_run=4)
    sweeplog.finished(tmp_path, first, "run-a", "ok")
    sweeplog.finished(tmp_path, first, "run-b", "failed")
    sweeplog.ended(tmp_path, first, done=2, failed=1, wall_s=10.0)
    second = sweeplog.started(tmp_path, backend="gem5", jobs=2, only=[], planned=4, skipped=1,
                              to_run=3)
    sweeplog.finished(tmp_path, second, "run-b", "ok")
    with open(tmp_path / sweeplog.LOG, "a") as log:
        log.write('{"sweep": "cut mid-wri')  # the machine died while writing
    got = sweeplog.summary(tmp_path / sweeplog.LOG)
    assert (got["sweeps"], got["unfinished"], got["runs_ok"], got["runs_failed"]) == (2, 1, 2, 1)
    assert len(got["hosts"]) == 1 and got["first"] == got["last"]


def test_merging_logs_from_two_machines_keeps_each_line_once(tmp_path):
    here, there, published = tmp_path / "here.jsonl", tmp_path / "there.jsonl", tmp_path / "p.jsonl"
    for path in (here, there):
        sweep = sweeplog.started(tmp_path / path.stem, backend="gem5", jobs=1, only=[],
                                 planned=1, skipped=0, to_run=1)
        sweeplog.finished(tmp_path / path.stem, sweep, f"run-{path.stem}", "ok")
        (tmp_path / path.stem / sweeplog.LOG).rename(path)
    sweeplog.merge([here], published)
    sweeplog.merge([there, here], published)
    sweeplog.merge([published], published)
    lines = sweeplog.entries(published)
    assert len(lines) == 4
    assert sweeplog.summary(published)["runs_ok"] == 2


def test_no_log_gives_no_summary(tmp_path):
    assert sweeplog.summary(tmp_path / sweeplog.LOG) is None
    sweeplog.merge([tmp_path / "absent.jsonl"], tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_sweep_stopped_by_an_exception_logs_its_end_with_the_reason(tmp_path, monkeypatch):
    import pytest

    from reclaimstudy import runs, sweep
    from reclaimstudy.studies import load_study

    class Prepared:
        identity = {"kernel": "k", "image": "i"}

    class Backend:
        console_file = "console.log"

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
