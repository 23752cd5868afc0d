"""The studies committed under results/published/: their reports' links all land.

These read the repository's own published folders (not fixtures), so a publish that
dropped a run, a plot or an experiment's section fails here before it reaches a reader.
"""
import re
from pathlib import Path

import pytest

PUBLISHED = Path(__file__).resolve().parent.parent / "results" / "published"
REPORTS = sorted(PUBLISHED.glob("*/report/report.md"))

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
ANCHOR = re.compile(r'<div id="([^"]+)"></div>')


def _links(report: Path) -> list[str]:
    return LINK.findall(report.read_text())


@pytest.mark.parametrize("report", REPORTS, ids=[r.parent.parent.name for r in REPORTS])
def test_every_file_a_published_report_links_exists(report):
    files = [link for link in _links(report) if not link.startswith(("#", "http://", "https://"))]
    assert files, f"{report} links no file at all"
    missing = sorted({link for link in files if not (report.parent / link).exists()})
    assert not missing, f"{report} links files that are not published: {missing[:5]}"


@pytest.mark.parametrize("report", REPORTS, ids=[r.parent.parent.name for r in REPORTS])
def test_every_anchor_a_published_report_links_is_in_it(report):
    text = report.read_text()
    anchors = set(ANCHOR.findall(text))
    wanted = {link[1:] for link in _links(report) if link.startswith("#")}
    assert wanted, f"{report} links no section"
    assert not wanted - anchors, f"{report} links sections it lacks: {sorted(wanted - anchors)[:5]}"


@pytest.mark.parametrize("report", REPORTS, ids=[r.parent.parent.name for r in REPORTS])
def test_every_published_run_is_linked_from_its_report(report):
    """No run is published without the report naming it (so every number traces both ways)."""
    linked = {Path(link).parent.name for link in _links(report) if link.endswith("/run.json")}
    published = {path.parent.name for path in report.parent.parent.glob("*/run.json")}
    assert published, f"{report.parent.parent} holds no run"
    assert published == linked, (f"published but not linked: {sorted(published - linked)[:5]}; "
                                 f"linked but not published: {sorted(linked - published)[:5]}")


def test_there_is_a_published_study_to_check():
    assert REPORTS, f"no report under {PUBLISHED}: the README's findings link to one"
