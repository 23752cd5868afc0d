"""Sweeps: killed at any moment and restarted, nothing completed is lost or redone;
failed runs keep their reason, fail the sweep's exit status, and are redone."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reclaimstudy.backends.gem5.backend import Gem5Backend
from reclaimstudy.campaigns.sweep import current_phase
from reclaimstudy.paths import REPO
from reclaimstudy.results.record import PARTIAL
from reclaimstudy.results.sweeplog import LOG, entries, summary
from tests.waiting import wait_while_running

pytestmark = pytest.mark.slow


def sweep(results: Path, study: str = "smoke", *extra, background=False):
    cmd = [sys.executable, "-m", "reclaimstudy", "sweep", study, "--backend", "qemu",
           "--results", str(results), *extra]
    if background:
        return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)


def published(study_dir: Path) -> dict[str, tuple[float, str]]:
    """run id -> (mtime, contents) of every published run.json."""
    return {p.parent.name: (p.stat().st_mtime, p.read_text())
            for p in study_dir.glob("*/run.json") if p.parent.name != PARTIAL}


# Two of the smoke study's three experiments (8 of its 18 runs; thrash's ten take the longest).
SUBSET = ("--only", "smoke/*", "--only", "lazyfree/*")


def test_a_killed_sweep_resumes_without_losing_or_redoing_runs(tmp_path):
    study_dir = tmp_path / "smoke"
    proc = sweep(tmp_path, "smoke", *SUBSET, background=True)
    wait_while_running(proc, lambda: len(published(study_dir)) >= 3, "three published runs",
                       timeout_s=600)
    proc.send_signal(signal.SIGKILL)  # no chance to clean up
    proc.wait()
    before = published(study_dir)
    assert 3 <= len(before) < 8, "kill the sweep mid-way"
    for _, text in before.values():
        assert json.loads(text)["status"] == "ok"

    again = sweep(tmp_path, "smoke", *SUBSET)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"8 runs, {len(before)} already done, {8 - len(before)} to run" in again.stderr
    after = published(study_dir)
    assert len(after) == 8
    for run_id, stamp in before.items():
        assert after[run_id] == stamp, f"{run_id} was redone"
    assert not any((study_dir / PARTIAL).glob("*")), "a half-written run was left behind"

    third = sweep(tmp_path, "smoke", *SUBSET)
    assert "8 runs, 8 already done, 0 to run" in third.stderr

    # The sweep log tells the three sweeps apart: the killed one has no end.
    log = entries(study_dir / LOG)
    starts = [e for e in log if e["event"] == "start"]
    assert [(e["skipped"], e["to_run"]) for e in starts] == [
        (0, 8), (len(before), 8 - len(before)), (8, 0)]
    ends = {e["sweep"]: e for e in log if e["event"] == "end"}
    assert starts[0]["sweep"] not in ends
    assert [ends[s["sweep"]]["done"] for s in starts[1:]] == [8 - len(before), 0]
    assert sorted(e["run_id"] for e in log if e["event"] == "run") == sorted(after)
    assert summary(study_dir / LOG) | {"hosts": None, "first": None, "last": None} == {
        "sweeps": 3, "unfinished": 1, "submissions": 0, "runs_ok": 8, "runs_failed": 0,
        "hosts": None, "first": None, "last": None, "runs_shown": None}

    # ... and the report of the whole study, end to end through the command line.
    report = subprocess.run([sys.executable, "-m", "reclaimstudy", "report", "smoke", "--results",
                             str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr
    html = (study_dir / "report" / "report.html").read_text()
    assert 'id="seed-reproduction"' in html and "data:image" not in html
    # its plots are files beside it, referenced by relative path, the summary's first
    images = re.findall(r'<img src="(plots/[^"]+\.png)"', html)
    assert len(images) >= 4 and images[0] == "plots/reproduction.png"
    assert all((study_dir / "report" / image).stat().st_size > 1000 for image in images)
    assert "wept 3 time(s)" in html and "1 sweep(s) recorded no end" in html


def test_current_phase_reads_the_last_mark_of_a_running_console(tmp_path):
    console = tmp_path / Gem5Backend.console_file
    assert current_phase(console) == "starting"
    console.write_text('Linux version 6.1\n@@reclaim {"event":"job_start","run_id":"x"}\n')
    assert current_phase(console) == "set-up"
    with open(console, "a") as text:
        text.write('@@reclaim {"event":"phase","name":"fill","vmstat":{}}\n'
                   '@@reclaim {"event":"phase","name":"access","vmstat":{}}\n'
                   '@@reclaim {"event":"phase","name":"acc')  # still being written
    assert current_phase(console) == "phase access"
    with open(console, "a") as text:
        text.write('ess"}\n@@reclaim {"event":"phases_done","name":""}\n')
    assert current_phase(console) == "finishing"


def test_failed_runs_keep_their_reason_fail_the_sweep_and_are_redone(tmp_path):
    study = tmp_path / "tiny.toml"
    study.write_text('description = "one run"\nbaseline = "baseline"\nsystems = ["ci-tiny"]\n'
                     '[[experiment]]\nname = "smoke"\nworkload = "smoke"\npolicies = ["baseline"]\n')
    first = sweep(tmp_path, str(study), "--timeout", "0.5")
    assert first.returncode == 1
    assert "time-out after 0 s" in first.stderr or "time-out after 1 s" in first.stderr
    [record] = [json.loads(t) for _, t in published(tmp_path / "tiny").values()]
    assert record["status"] == "failed" and record["reason"].startswith("time-out")
    second = sweep(tmp_path, str(study), "--status-every", "0.5")
    assert second.returncode == 0, second.stderr
    assert "0 already done, 1 to run" in second.stderr
    # a run that outlasts --status-every is shown with where its guest is
    assert re.search(r"running: smoke/baseline/ci-tiny/r0: (starting|set-up|phase \w+), \d+ s",
                     second.stderr), second.stderr
    [record] = [json.loads(t) for _, t in published(tmp_path / "tiny").values()]
    assert record["status"] == "ok"


def _qemus_naming(text: str) -> list[int]:
    """Running (not zombie) QEMU processes whose command line mentions `text`."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if "qemu-system" in argv[0] and any(text in arg for arg in argv) and state != "Z":
            found.append(int(proc.name))
    return found


def test_a_terminated_sweep_kills_its_simulators_and_starts_no_more_runs(tmp_path):
    study = tmp_path / "two.toml"
    study.write_text('description = "two runs"\nbaseline = "baseline"\nsystems = ["ci-tiny"]\n'
                     'repetitions = 2\n[[experiment]]\nname = "smoke"\nworkload = "smoke"\n'
                     'policies = ["baseline"]\n')
    proc = sweep(tmp_path, str(study), "-j", "1", background=True)
    wait_while_running(proc, lambda: _qemus_naming(str(tmp_path)), "a running QEMU",
                       timeout_s=600)
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, output
    assert "killed 1 running simulator" in output and "interrupted (SIGTERM)" in output
    time.sleep(0.5)
    assert not _qemus_naming(str(tmp_path)), "a simulator outlived its sweep"
    assert not published(tmp_path / "two"), "an interrupted run was published"
    log = entries(tmp_path / "two" / LOG)
    assert [e["event"] for e in log] == ["start", "end"]
    assert log[1]["done"] == 0 and "SIGTERM" in log[1]["error"]
