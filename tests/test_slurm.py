"""Studies on Slurm: what Slurm's commands print, read back; a run's state from its
directory and its task; and the smoke study as a job array on a real one-node Slurm
(tests/slurmcluster.py), with a task cancelled mid-way and the study submitted again."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from reclaimstudy.campaigns import slurm
from reclaimstudy.campaigns.cluster import SlurmOptions, classify
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import REPO
from reclaimstudy.results.record import PublishedRun
from tests import slurmcluster

# Captured from Debian 12's Slurm 22.05 (the test cluster).
SQUEUE = """2_[8-17%2]|PENDING|JobArrayTaskLimit|2|2
2_7|CANCELLED|None|10|2
2_6|RUNNING|None|9|2
1|COMPLETED|None|1|1
"""
SACCT_C = """2|2|COMPLETED|0:0|2026-11-23T20:31:17|2026-11-23T20:31:21
10|10|CANCELLED by 0|0:15|2026-11-23T20:34:30|2026-11-23T20:34:33
"""


def test_squeue_and_sacct_lines_are_read_as_slurm_prints_them():
    states = {s.job: s for s in slurm.parse_squeue(SQUEUE)}
    assert states["2_6"].running and not states["2_6"].ended_badly
    assert states["2_7"].ended_badly and states["2_7"].raw_id == "10"
    assert states["2_[8-17%2]"].queued and states["2_[8-17%2]"].reason == "JobArrayTaskLimit"
    assert not states["1"].ended_badly
    ended = {s.raw_id: s for s in slurm.parse_sacct(SACCT_C)}
    assert ended["10"].state == "CANCELLED" and ended["10"].exit_code == "0:15"
    assert ended["10"].explain() == \
        "CANCELLED, exit code 0:15: cancelled (scancel, or an administrator)"
    assert slurm.JobState("3_1", "TIMEOUT").explain() == \
        "TIMEOUT: it reached its time limit (--time)"
    assert slurm.JobState("3_1", "OUT_OF_MEMORY").ended_badly


def published(status: str, job: str = "", reason: str = "") -> PublishedRun:
    return PublishedRun(Path("/nowhere"), {"status": status, "reason": reason,
                                           "host": {"slurm_job": job} if job else {}})


def test_a_runs_state_comes_from_its_directory_and_its_newest_task():
    ok, running = slurm.JobState("2_1", "COMPLETED"), slurm.JobState("2_1", "RUNNING")
    pending = slurm.JobState("2_1", "PENDING", reason="Priority")
    cancelled = slurm.JobState("2_1", "CANCELLED")
    prepare_failed = slurm.JobState("1", "FAILED", "1:0")
    # never submitted, or submitted and forgotten before it ran (a pending task cancelled)
    assert classify(None, "", None, None) == ("not run", "")
    assert classify(None, "2_1", None, None) == ("not run", "")
    assert classify(None, "2_1", pending, None) == ("queued", "Priority")
    assert classify(None, "2_1", running, None) == ("running", "")
    assert classify(published("ok", "2_1"), "2_1", ok, None) == ("done", "")
    # a run that failed by itself keeps its own reason, even though Slurm says FAILED
    assert classify(published("failed", "2_1", "gem5 panic"), "2_1",
                    slurm.JobState("2_1", "FAILED", "1:0"), None) == ("failed", "gem5 panic")
    # Slurm ended the task before it published: Slurm's reason
    state, reason = classify(None, "2_1", cancelled, None)
    assert state == "failed" and "Slurm ended task 2_1: CANCELLED" in reason
    # an older attempt's failure does not explain a newer task's cancellation
    state, reason = classify(published("failed", "1_4", "old"), "2_1", cancelled, None)
    assert state == "failed" and "CANCELLED" in reason
    # a failed run being redone is queued, not failed
    assert classify(published("failed", "1_4", "old"), "2_1", pending, None)[0] == "queued"
    # a done run is done whatever became of a later task
    assert classify(published("ok", "1_4"), "2_1", cancelled, None) == ("done", "")
    # the prepare job failed: the array's tasks never ran, and it says why
    state, reason = classify(None, "2_1", cancelled, prepare_failed)
    assert state == "not run" and "prepare job 1 ended FAILED" in reason


def test_bad_options_are_refused_naming_the_value():
    with pytest.raises(StudyError, match=r"--max-running=0: allowed a whole number >= 1"):
        SlurmOptions(max_running=0).check()
    with pytest.raises(StudyError, match=r"--mem=-5"):
        SlurmOptions(mem_mib=-5).check()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = slurmcluster.missing()
    if why:
        pytest.skip(f"no Slurm test cluster: {why}")
    directory = tmp_path_factory.mktemp("slurm")
    one = slurmcluster.Cluster(directory)
    try:
        one.start()
    except RuntimeError as error:
        pytest.skip(f"the Slurm daemons did not start here: {error}")
    yield one
    one.stop()


def study(cluster, *args) -> str:
    result = subprocess.run([str(REPO / "study"), *args], env=cluster.env(),
                            capture_output=True, text=True, timeout=600)
    print(f"$ ./study {' '.join(args)}\n{result.stdout}{result.stderr}")  # the test's log
    return result.stdout + result.stderr


def squeue(cluster, *args) -> list[str]:
    return subprocess.run(["squeue", "-h", *args], env=cluster.env(), capture_output=True,
                          text=True, check=True).stdout.split()


def wait_until_idle(cluster, timeout_s=900):
    deadline = time.monotonic() + timeout_s
    while squeue(cluster, "-o", "%i"):
        assert time.monotonic() < deadline, f"jobs still queued: {squeue(cluster, '-o', '%i')}"
        time.sleep(2)


def run_jsons(study_path: Path) -> dict[str, str]:
    return {p.parent.name: p.read_text() for p in study_path.glob("*/run.json")}


@pytest.mark.slow
def test_smoke_study_as_a_job_array_survives_a_cancelled_task(cluster, tmp_path):
    results = tmp_path / "results"
    # Two of the smoke study's three experiments (8 of its 18 runs; thrash's ten take the
    # longest): enough for an array, a cancel and a resubmission at a third of the time.
    options = ["--on", "slurm", "--backend", "qemu", "--results", str(results),
               "--only", "smoke/*", "--only", "lazyfree/*"]
    out = study(cluster, "sweep", "smoke", *options, "--max-running", "2")
    assert "8 runs: 8 not run" in out and "array" in out
    # Cancel a task while it runs (the next one, should one finish before scancel lands).
    cancelled, deadline = None, time.monotonic() + 600
    while cancelled is None and time.monotonic() < deadline:
        for task in [t for t in squeue(cluster, "-r", "-t", "RUNNING", "-o", "%i") if "_" in t]:
            subprocess.run(["scancel", task], env=cluster.env(), check=True)
            time.sleep(1)
            state = squeue(cluster, "-t", "all", "-j", task, "-o", "%T")
            if state == ["CANCELLED"]:
                cancelled = task
                break
        time.sleep(0.5)
    assert cancelled, "no task could be cancelled while it ran"
    wait_until_idle(cluster)
    out = study(cluster, "status", "smoke", "--backend", "qemu", "--results", str(results))
    assert "smoke: 18 runs: 7 done, 1 failed, 10 not run" in out
    study_path = results / "smoke"
    failed = [json.loads(p.read_text()) for p in study_path.glob("*/run.json")
              if json.loads(p.read_text())["status"] != "ok"]
    assert len(failed) == 1 and failed[0]["slurm"]["job"] == cancelled
    assert failed[0]["slurm"]["state"] == "CANCELLED"
    assert f"Slurm ended task {cancelled}: CANCELLED" in failed[0]["reason"]
    # Whatever the task had written went into the failed run's directory.
    assert not list((study_path / ".partial").glob(f"{failed[0]['run_id']}-*"))
    ended = [json.loads(line) for line in
             (study_path / ".slurm" / "ended.jsonl").read_text().splitlines()]
    assert [e["job"] for e in ended] == [cancelled]
    before = run_jsons(study_path)

    out = study(cluster, "sweep", "smoke", *options)
    assert "8 runs: 7 done, 1 failed" in out and "of 1 run(s)" in out
    wait_until_idle(cluster)
    out = study(cluster, "status", "smoke", "--backend", "qemu", "--results", str(results))
    assert "smoke: 18 runs: 8 done, 10 not run" in out
    after = run_jsons(study_path)
    redone = {name for name in before if before[name] != after[name]}
    assert redone == {failed[0]["run_id"]}, "a complete run was redone"
    assert json.loads(after[failed[0]["run_id"]])["host"]["slurm_job"].endswith("_0")
    assert "nothing to submit" in study(cluster, "sweep", "smoke", *options)
    # The cancellation stays on record after the run was redone.
    ended = [json.loads(line) for line in
             (study_path / ".slurm" / "ended.jsonl").read_text().splitlines()]
    assert [(e["job"], e["state"]) for e in ended] == [(cancelled, "CANCELLED")]
    # The sweep log has both submissions, with the runs each submitted.
    from reclaimstudy.results.sweeplog import LOG, entries
    submits = [e for e in entries(study_path / LOG) if e["event"] == "submit"]
    assert [e["runs"] for e in submits] == [8, 1]


def test_smoke_and_sweep_reach_the_local_sweep_with_their_options(monkeypatch, tmp_path):
    """`./study smoke` shares sweep's code path but has no --on: it sweeps here."""
    from reclaimstudy import cli
    from reclaimstudy.campaigns import sweep

    called = []

    def fake_sweep(study, backend, results, jobs=None, timeout_s=None, status_every_s=None):
        called.append((study.name, backend, results, jobs))
        return sweep.SweepResult(planned=1, done=1)
    monkeypatch.setattr(sweep, "run_sweep", fake_sweep)
    monkeypatch.setattr(cli, "cmd_report", lambda args: 0)
    assert cli.main(["smoke", "--backend", "qemu", "--results", str(tmp_path)]) == 0
    assert cli.main(["sweep", "smoke", "--backend", "qemu", "--results", str(tmp_path),
                     "-j", "1"]) == 0
    assert called == [("smoke", "qemu", tmp_path, None), ("smoke", "qemu", tmp_path, 1)]
    # --jobs means nothing on Slurm, and says what does.
    assert cli.main(["sweep", "smoke", "--on", "slurm", "--backend", "qemu", "-j", "2",
                     "--results", str(tmp_path)]) == 2


def test_status_counts_each_experiments_runs_and_its_complete_repetitions():
    from reclaimstudy.campaigns.cluster import RunState, by_experiment
    from reclaimstudy.campaigns.studies import load_study
    runs = load_study("seeds-gem5").select(["ebizzy/*/*/r[012]"]).runs("gem5")
    done = {(s.policy.name, s.repetition) for _, s in runs} - {("mglru", 1)}
    states = [RunState(s.point(), "id", "done" if (s.policy.name, s.repetition) in done
                       else "running", spec=s) for _, s in runs]
    [row] = by_experiment(states)
    assert (row["experiment"], row["system"], row["runs"]) == ("ebizzy", "desktop-hdd-96", 9)
    assert (row["done"], row["running"], row["not run"]) == (8, 1, 0)
    assert (row["paired"], row["repetitions"]) == (2, 3)  # r1 lacks its MGLRU run


def test_without_gem5_auto_falls_back_to_qemu_and_says_what_that_means_for_each_command(
        monkeypatch, capsys):
    from reclaimstudy.cli import resolve_backend
    monkeypatch.delenv("GEM5", raising=False)
    assert resolve_backend("auto") == "qemu"
    assert "running on QEMU" in capsys.readouterr().err
    # status only looks: it must not claim to run anything, and says where gem5 runs went.
    assert resolve_backend("auto", showing=True) == "qemu"
    said = " ".join(capsys.readouterr().err.split())
    assert "showing the study's QEMU runs" in said and "running" not in said
    monkeypatch.setenv("GEM5", "/somewhere/gem5.fast")
    assert resolve_backend("auto", showing=True) == "gem5"
    assert resolve_backend("qemu") == "qemu"


def test_status_names_the_runs_its_plan_does_not_show(tmp_path):
    """Without GEM5, status shows the QEMU plan: the study's gem5 runs must not read as
    'not run' with no word of them (seen on seeds-gem5: 275 not run, 86 there)."""
    import shutil
    from reclaimstudy.campaigns.cluster import outside_plan
    from reclaimstudy.campaigns.studies import load_study
    shutil.copytree(Path(__file__).parent / "fixtures" / "runs" / "smoke", tmp_path / "smoke")
    run_dirs = sorted(p for p in (tmp_path / "smoke").iterdir() if (p / "run.json").is_file())
    gem5_run = run_dirs[0] / "run.json"
    data = json.loads(gem5_run.read_text())
    gem5_run.write_text(json.dumps({**data, "backend": "gem5"}))
    planned = {json.loads((run_dirs[1] / "run.json").read_text())["run_id"]}
    lines = outside_plan(load_study("smoke"), "qemu", tmp_path, planned)
    assert lines == [
        f"{tmp_path / 'smoke'} also holds 1 gem5 run(s) not shown: this is the qemu "
        "plan (`--backend gem5`, with GEM5 set to the build that made them)",
        f"{tmp_path / 'smoke'} also holds {len(run_dirs) - 2} qemu run(s) made from "
        "other inputs than this plan's (another kernel, image, simulator build or run "
        "parameters)"]
    every = {json.loads((p / "run.json").read_text())["run_id"] for p in run_dirs}
    assert outside_plan(load_study("smoke"), "qemu", tmp_path, every) == []
