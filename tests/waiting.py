"""Waiting on a background process: fail as soon as it has died, showing what it said."""

import subprocess
import time
from collections.abc import Callable

import pytest


def wait_while_running(proc: subprocess.Popen, done: Callable[[], bool], what: str,
                       timeout_s: float, poll_s: float = 0.2) -> None:
    """Return once `done()` holds; fail at once if `proc` exits first (with its output),
    or after `timeout_s` (with `what` it was waiting for)."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if proc.poll() is not None:
            output = proc.stdout.read() if proc.stdout else ""
            pytest.fail(f"the process exited ({proc.returncode}) before {what}:\n{output}")
        if time.monotonic() > deadline:
            proc.kill()
            output = proc.communicate()[0] if proc.stdout else ""
            pytest.fail(f"no {what} after {timeout_s:.0f} s; its output:\n{output}")
        time.sleep(poll_s)
