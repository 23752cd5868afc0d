"""run_measured: a simulator process's wall time, CPU time, memory and time-out."""

import sys

from reclaimstudy.subprocesses import run_measured

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
