"""run_measured: a simulator process's wall time, CPU time, memory and time-out; stop_all:
no simulator outlives a stopped sweep."""

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from reclaimstudy.util import subprocesses
from reclaimstudy.util.subprocesses import Interrupted, run_measured, supervised

# Two seconds each: on these VMs a Python that only sleeps can still be charged up to
# ~0.7 CPU-s for starting up (page faults into a fresh guest), so the margins are wide.
BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 2: pass\n"
IDLE = "import time\ntime.sleep(2)\n"


def test_cpu_time_counts_work_and_not_waiting(tmp_path):
    busy = run_measured([sys.executable, "-c", BUSY], 60, tmp_path / "busy.log")
    idle = run_measured([sys.executable, "-c", IDLE], 60, tmp_path / "idle.log")
    assert busy["exit_code"] == 0 and not busy["timed_out"]
    assert busy["cpu_seconds"] >= 1.95 and idle["cpu_seconds"] < 1.0
    assert idle["wall_seconds"] >= 2 > idle["cpu_seconds"]


def test_a_process_past_its_time_out_is_killed_and_says_so(tmp_path):
    result = run_measured([sys.executable, "-c", "import time; time.sleep(30)"], 0.5,
                          tmp_path / "slow.log")
    assert result["timed_out"] and result["exit_code"] != 0 and result["wall_seconds"] < 10


# A simulator that starts a child of its own (as a job script would), both sleeping.
WITH_CHILD = ("import subprocess, sys, time\n"
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "time.sleep(60)\n")


def _alive(group: int) -> bool:
    """Whether a process of the group still runs (killed ones may linger as zombies)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


def test_stop_all_kills_running_simulators_with_their_children_and_starts_no_more(tmp_path):
    raised, groups = [], []

    def simulate():
        try:
            run_measured([sys.executable, "-c", WITH_CHILD], 60, tmp_path / "sim.log")
        except Interrupted as error:
            raised.append(error)

    worker = threading.Thread(target=simulate)
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not subprocesses._running and time.monotonic() < deadline:
            time.sleep(0.05)
        groups = list(subprocesses._running)
        assert len(groups) == 1
        time.sleep(1)  # the child is started
        assert subprocesses.stop_all() == 1
        worker.join(timeout=10)
        assert not worker.is_alive() and len(raised) == 1
        time.sleep(0.5)
        assert not _alive(groups[0]), "the simulator's child outlived the stop"
        with pytest.raises(Interrupted):
            run_measured([sys.executable, "-c", "pass"], 60, tmp_path / "late.log")
    finally:
        subprocesses.allow_new()
        for group in groups:
            if _alive(group):
                os.killpg(group, signal.SIGKILL)
    assert run_measured([sys.executable, "-c", "pass"], 60, tmp_path / "after.log")[
        "exit_code"] == 0


def test_an_exception_in_the_waiting_caller_kills_the_simulator(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with supervised([sys.executable, "-c", WITH_CHILD]) as proc:
            time.sleep(1)
            raise KeyboardInterrupt
    time.sleep(0.5)
    assert not _alive(proc.pid) and not subprocesses._running


def test_a_stopped_sweeps_pool_ends_at_once_and_later_runs_may_start(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from reclaimstudy.campaigns.sweep import _stopped_together

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with ThreadPoolExecutor(max_workers=1) as pool, _stopped_together(pool):
            running = pool.submit(run_measured, [sys.executable, "-c", WITH_CHILD], 60,
                                  tmp_path / "sim.log")
            queued = pool.submit(run_measured, [sys.executable, "-c", "pass"], 60,
                                 tmp_path / "queued.log")
            while not subprocesses._running:
                time.sleep(0.05)
            raise KeyboardInterrupt
    assert time.monotonic() - started < 20
    assert isinstance(running.exception(), Interrupted) and queued.cancelled()
    # A sweep that raised (a bad input, a bug) must not leave this process unable to run.
    assert run_measured([sys.executable, "-c", "pass"], 60, tmp_path / "later.log")[
        "exit_code"] == 0
