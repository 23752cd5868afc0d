"""A study's published folder, read: `results/published/<study>/` as
reclaimstudy/campaigns/publish.py writes it (each current run's run.json, the tidy table
in report/, the counts of the runs set aside, findings.md)."""

import json
from pathlib import Path

import pandas as pd

from reclaimstudy.errors import StudyError

# A study's published copy is results/PUBLISHED/<study>/; what we found (by hand, from
# the evidence) is its FINDINGS file, shown by both reports.
PUBLISHED = "published"
FINDINGS = "findings.md"
# What the table cannot hold: the runs set aside when it was made (report/published.json).
COUNTS = "published.json"


def published_dir(study_name: str, results: Path) -> Path:
    return results / PUBLISHED / study_name


def published_table(study, results: Path) -> pd.DataFrame:
    """The published tidy table of a study (report/table.parquet)."""
    return table_in(published_dir(study.name, results))


def table_in(target: Path) -> pd.DataFrame:
    path = target / "report" / "table.parquet"
    if not path.is_file():
        raise StudyError(f"{target}: no published table (report/table.parquet): run "
                         f"`./study publish {target.name}` first")
    return pd.read_parquet(path)


def counts(target: Path) -> dict:
    """The published folder's counts of its runs and of those set aside (COUNTS)."""
    return json.loads((target / "report" / COUNTS).read_text())
