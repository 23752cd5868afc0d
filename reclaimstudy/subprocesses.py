"""Run a simulator process with a time-out, measuring its wall time, CPU time and peak memory."""

import os
import signal
import subprocess
import time
from pathlib import Path


def run_measured(cmd: list[str], timeout_s: float, log_path: Path) -> dict:
    """Run `cmd` (output to `log_path`) in its own process group.

    Returns exit code, wall seconds, CPU seconds and peak resident memory of the process
    (from wait4, so per child even when several run at once; CPU time, unlike wall time,
    does not grow when other work shares the cores) and whether the time-out killed it
    (the whole group, so no simulator is left behind).
    """
    started = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() - started > timeout_s:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.2)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"exit_code": proc.returncode, "timed_out": timed_out,
            "wall_seconds": round(time.monotonic() - started, 2),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "max_rss_mib": round(usage.ru_maxrss / 1024, 1)}
