"""A test waiting on a background process fails once the process dies, not at its deadline."""

import subprocess
import sys
import time

import pytest

from tests.waiting import wait_while_running


def test_a_dead_process_fails_the_wait_at_once_with_its_output():
    proc = subprocess.Popen([sys.executable, "-c", "print('cannot start'); raise SystemExit(3)"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match=r"exited \(3\) before the runs:\ncannot start"):
        wait_while_running(proc, lambda: False, "the runs", timeout_s=600)
    assert time.monotonic() - started < 60, "it waited for the deadline"


def test_the_wait_returns_when_the_condition_holds_and_fails_at_the_deadline():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                            stdout=subprocess.PIPE, text=True)
    calls = iter([False, False, True])
    wait_while_running(proc, lambda: next(calls), "three calls", timeout_s=60, poll_s=0.01)
    with pytest.raises(pytest.fail.Exception, match=r"no nothing after 0 s"):
        wait_while_running(proc, lambda: False, "nothing", timeout_s=0.05, poll_s=0.01)
    assert proc.poll() is not None, "the process is killed at the deadline"
