"""Run simulator processes so that none outlives the sweep that started it.

Each simulator runs in its own process group (a terminal's Ctrl-C is the sweep's to
handle, not the simulator's); every group running is registered, and `stop_all` kills
them all and refuses new ones, for a sweep that is interrupted or told to stop.
"""

import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path


class Interrupted(Exception):
    """The sweep was stopped while (or before) this simulator ran."""


_running: set[int] = set()  # process group ids of the simulators running now
_guard = threading.Lock()
_stopping = threading.Event()


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already gone


def stop_all() -> int:
    """Kill every registered simulator's process group and refuse to start more.

    Returns how many were killed. Their callers raise Interrupted, so no record is
    written for a run that did not end by itself.
    """
    _stopping.set()
    with _guard:
        groups = list(_running)
    for group in groups:
        _kill_group(group)
    return len(groups)


def allow_new() -> None:
    """Undo stop_all (a later sweep in the same process, e.g. a test's)."""
    _stopping.clear()


@contextmanager
def supervised(cmd: list[str], **popen):
    """Start `cmd` in a process group of its own, registered until it has been waited for."""
    if _stopping.is_set():
        raise Interrupted("stopping: no new simulator started")
    with _guard:
        proc = subprocess.Popen(cmd, start_new_session=True, **popen)
        _running.add(proc.pid)
    try:
        yield proc
    except BaseException:
        # Whatever stopped the wait (Ctrl-C in the caller's thread, a bug): not the group's
        # business to outlive it.
        _kill_group(proc.pid)
        raise
    finally:
        with _guard:
            _running.discard(proc.pid)
    if _stopping.is_set() and proc.returncode is not None and proc.returncode < 0:
        raise Interrupted(f"{Path(cmd[0]).name} was killed: the sweep is stopping")


def run_measured(cmd: list[str], timeout_s: float, log_path: Path) -> dict:
    """Run `cmd` (output to `log_path`), supervised.

    Returns exit code, wall seconds, CPU seconds and peak resident memory of the process
    (from wait4, so per child even when several run at once; CPU time, unlike wall time,
    does not grow when other work shares the cores) and whether the time-out killed it
    (the whole group, so no simulator is left behind). Raises Interrupted when stop_all
    killed it.
    """
    started = time.monotonic()
    timed_out = False
    with open(log_path, "wb") as log, \
            supervised(cmd, stdout=log, stderr=subprocess.STDOUT) as proc:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() - started > timeout_s:
                timed_out = True
                _kill_group(proc.pid)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return {"exit_code": proc.returncode, "timed_out": timed_out,
            "wall_seconds": round(time.monotonic() - started, 2),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "max_rss_mib": round(usage.ru_maxrss / 1024, 1)}
