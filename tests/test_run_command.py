"""`study run` does not redo a finished run by accident (its directory would be replaced
and a gem5 run can take hours); a failed one, or one asked for with --again, runs."""

import json

from reclaimstudy import backends, cli

from tests.test_runs_prepare import CountingBackend, an_image


def run_smoke(results, *extra):
    return cli.main(["run", "--backend", "qemu", "--system", "ci-tiny", "--workload", "smoke",
                     "--study", "s", "--results", str(results), *extra])


def test_a_finished_run_is_named_not_redone_unless_asked_again(monkeypatch, tmp_path, capsys):
    backend = CountingBackend(an_image(tmp_path / "cache" / "i1"))
    monkeypatch.setattr(backends, "get_backend", lambda name: backend)
    results = tmp_path / "results"
    assert run_smoke(results) == 0 and len(backend.runs_on) == 1
    (done,) = (results / "s").glob("smoke-*")
    capsys.readouterr()
    assert run_smoke(results) == 0 and len(backend.runs_on) == 1
    assert "already done" in capsys.readouterr().err
    assert run_smoke(results, "--again") == 0 and len(backend.runs_on) == 2
    # a failed run is what running it again is for
    run_json = done / "run.json"
    record = json.loads(run_json.read_text())
    run_json.write_text(json.dumps({**record, "status": "failed", "reason": "test"}))
    assert run_smoke(results) == 0 and len(backend.runs_on) == 3
    assert json.loads(run_json.read_text())["status"] == "ok"
