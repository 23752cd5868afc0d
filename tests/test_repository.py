"""A clone stays light: no tracked file over 1 MiB, except test fixtures and the gem5
segments carried for unfinished runs (results/published/*/in-flight/, the one binary
that may enter history). A regenerable file, such as a report's self-contained HTML,
is rebuilt (`./study report STUDY --published`), never committed. Each published study
adds less than 50 MB to the history (tests/benchmarks/bench_history_growth.py)."""

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIMIT = 1 << 20
ALLOWED = ("tests/fixtures/",)


def _tracked() -> list[str]:
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout: no tracked files to check")
    # safe.directory: a clone owned by another user (CI's chroot) is still read
    listed = subprocess.run(["git", "-c", f"safe.directory={REPO}", "-C", str(REPO),
                             "ls-files", "-z"], capture_output=True, check=True).stdout.decode()
    return [name for name in listed.split("\0") if name]


def _allowed(name: str) -> bool:
    return name.startswith(ALLOWED) or "/in-flight/" in name


def test_no_tracked_file_outside_fixtures_and_carried_segments_exceeds_1_mib():
    files = _tracked()
    assert "README.md" in files  # the listing itself worked
    large = {name: (REPO / name).stat().st_size for name in files
             if not _allowed(name) and (REPO / name).is_file()
             and (REPO / name).stat().st_size > LIMIT}
    assert not large, f"tracked files over 1 MiB (rebuild them instead of committing): {large}"


def test_a_published_reports_html_is_not_tracked():
    assert not [name for name in _tracked() if name.endswith("/report/report.html")]


def test_each_published_studys_growth_of_history_stays_under_50_mb():
    from tests.benchmarks import bench_history_growth as history
    why = history.has_full_history()
    if why:
        pytest.skip(f"{why}: each study's growth of history is measured on a full clone")
    grown = {study: history.growth(study, history.LIGHT_SINCE) for study in history.studies()}
    assert "seeds-gem5" in grown and grown["seeds-gem5"][0] > 0  # the measure sees commits
    over = {study: f"{size / 1e6:.1f} MB in {versions} file versions"
            for study, (versions, size) in grown.items() if size > history.BUDGET_BYTES}
    assert not over, (f"published studies grew the repository's history by more than "
                      f"{history.BUDGET_BYTES / 1e6:.0f} MB since {history.LIGHT_SINCE[:12]}: "
                      f"{over} (commit fewer versions: plots only when their numbers change, "
                      f"no carried segments for short runs)")
