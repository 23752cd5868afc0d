"""Shared fixtures: the built kernel (cached across runs by content hash) and the guest
programs built for the host; and --strict-skips, which CI passes so that no test it is
meant to run can skip unnoticed."""

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
# --strict-skips: the tests that skipped without a marker that lets them (node id: reason).
_unallowed_skips: dict[str, str] = {}


def pytest_addoption(parser):
    parser.addoption(
        "--strict-skips", metavar="MARKERS", nargs="?", const="", default=None,
        help="fail the session when a test skips, unless it is marked with one of MARKERS "
             "(comma-separated; none given: no test may skip). CI: --strict-skips=gem5,source")


def _skips_allowed(config) -> set[str] | None:
    value = config.getoption("--strict-skips")
    return None if value is None else {m.strip() for m in value.split(",") if m.strip()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    allowed = _skips_allowed(item.config)
    if allowed is not None and report.skipped and not hasattr(report, "wasxfail") \
            and not allowed & {marker.name for marker in item.iter_markers()}:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _unallowed_skips[item.nodeid] = reason
    return report


def pytest_configure(config):
    allowed = _skips_allowed(config) or set()
    known = {line.split(":")[0].strip() for line in config.getini("markers")}
    if allowed - known:
        raise pytest.UsageError(f"--strict-skips: no marker {', '.join(sorted(allowed - known))} "
                                f"(pyproject.toml's markers: {', '.join(sorted(known))})")


def pytest_terminal_summary(terminalreporter):
    if not _unallowed_skips:
        return
    allowed = _skips_allowed(terminalreporter.config)
    terminalreporter.section("skips that --strict-skips does not allow", red=True, bold=True)
    terminalreporter.write_line(
        f"these tests were meant to run here (marked none of: {', '.join(sorted(allowed)) or '-'}):")
    for nodeid, reason in _unallowed_skips.items():
        terminalreporter.write_line(f"SKIPPED {nodeid}: {reason}", red=True)


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
    if _unallowed_skips and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
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
