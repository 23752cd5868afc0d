"""--strict-skips (tests/conftest.py): under it a skipped test fails the session unless a
marker named there lets it skip, so CI cannot pass with a test it is meant to run (the
Slurm cluster's, the quick gem5 ones) quietly skipped."""

import subprocess
import sys

from reclaimstudy.paths import REPO

SKIPPING = '''
import pytest

def test_runs():
    pass

@pytest.mark.gem5
def test_needs_gem5():
    pytest.skip("GEM5 is not set")

def test_meant_to_run():
    pytest.skip("the Slurm daemons did not start here")
'''


def pytest_of(tmp_path, *options) -> subprocess.CompletedProcess:
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
         str(tmp_path / "test_skipping.py"), *options],
        cwd=REPO, capture_output=True, text=True, timeout=120)


def test_without_it_skips_pass_as_ever(tmp_path):
    assert pytest_of(tmp_path).returncode == 0


def test_a_skip_no_marker_allows_fails_the_session_naming_the_test_and_its_reason(tmp_path):
    result = pytest_of(tmp_path, "--strict-skips=gem5,source")
    assert result.returncode == 1, result.stdout
    assert "test_skipping.py::test_meant_to_run: Skipped: the Slurm daemons did not start here" \
        in result.stdout
    assert "test_needs_gem5:" not in result.stdout  # marked gem5: allowed


def test_alone_it_lets_no_test_skip(tmp_path):
    result = pytest_of(tmp_path, "--strict-skips")
    assert result.returncode == 1
    assert "test_needs_gem5: Skipped: GEM5 is not set" in result.stdout


def test_a_marker_it_does_not_know_is_refused(tmp_path):
    result = pytest_of(tmp_path, "--strict-skips=gem")
    assert result.returncode == 4 and "--strict-skips: no marker gem" in result.stderr
