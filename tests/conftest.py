"""Shared fixtures: the built kernel (cached across runs by content hash) and the guest
programs built for the host."""

import os
import signal
import subprocess
import sys
import tempfile

import pytest

# On a fresh machine the guest kernel is the longest single step of the suite. When any
# selected test needs it, it is built in the background from the end of collection, so
# the tests before its first user (the image build among them) overlap with it.
_background_kernel: dict = {}


def pytest_collection_finish(session):
    from reclaimstudy.artefacts.kernel import kernel_is_cached
    from reclaimstudy.errors import StudyError
    from reclaimstudy.paths import REPO

    if not any("kernel" in item.fixturenames for item in session.items):
        return
    try:
        if kernel_is_cached():
            return
    except StudyError:
        return  # no kernel source: the fixture's own build says so where it is needed
    log = tempfile.NamedTemporaryFile(prefix="kernel-build-", suffix=".log", delete=False)
    print(f"\nkernel: building in the background while other tests run (log {log.name})")
    _background_kernel["log"] = log.name
    _background_kernel["proc"] = subprocess.Popen(
        [sys.executable, "-m", "reclaimstudy", "kernel"], stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, cwd=REPO, start_new_session=True)


def pytest_sessionfinish(session, exitstatus):
    proc = _background_kernel.get("proc")
    if proc is not None and proc.poll() is None:
        # A session that ended early (-x, Ctrl-C) does not leave a compiler running.
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()


@pytest.fixture(scope="session")
def kernel():
    from reclaimstudy.artefacts.kernel import build_kernel

    proc = _background_kernel.get("proc")
    if proc is not None and proc.wait() != 0:
        with open(_background_kernel["log"], errors="replace") as log:
            tail = log.read()[-4000:]
        pytest.fail(f"the background kernel build failed (exit {proc.returncode}):\n{tail}",
                    pytrace=False)
    return build_kernel()


@pytest.fixture(scope="session")
def guest_programs(tmp_path_factory):
    """Every guest program (workloads/Makefile), built once for the tests that run them
    natively: OUT/bin holds the tools, OUT/workloads one folder per workload."""
    from reclaimstudy.paths import WORKLOADS

    out = tmp_path_factory.mktemp("guest-programs")
    subprocess.run(["make", "-s", "-C", str(WORKLOADS), f"OUT={out}", f"-j{os.cpu_count() or 1}"],
                   check=True)
    return out
