"""analysis.trace_counts splits a counting trace's 10-ms slices by the workload's phase
marks (a synthetic console: the trace's lines as the guest prints them)."""

import json

import pytest

from analysis import trace_counts
from reclaimstudy.errors import StudyError


def _mark(event, name, t):
    return "@@reclaim " + json.dumps({"event": event, "name": name, "index": 0, "t": t})


CONSOLE = "\n".join([
    _mark("phase", "fill", 1.005), _mark("phase", "access", 1.50),
    _mark("phases_done", "", 2.0),
    "TRACE-COUNT: issue-1page 12", "TRACE-COUNT: issue-pages 40",
    "TRACE-COLUMNS: issue-1page issue-pages",
    "TRACE-AT: 0.99 1 1",    # before the fill
    "TRACE-AT: 1.00 2 2",    # holds the fill's start (1.005): counted before, and boundary
    "TRACE-AT: 1.20 3 20",
    "TRACE-AT: 1.50 4 10",   # starts exactly at the access mark: access, no boundary
    "TRACE-AT: 2.10 2 7",    # after the last mark
])


def test_slices_go_to_the_phase_their_start_is_in():
    phases = trace_counts.by_phase(CONSOLE)
    assert phases["before"] == {"issue-1page": 3, "issue-pages": 3}
    assert phases["fill"] == {"issue-1page": 3, "issue-pages": 20}
    assert phases["access"] == {"issue-1page": 4, "issue-pages": 10}
    assert phases["after"] == {"issue-1page": 2, "issue-pages": 7}
    assert phases["boundary"] == {"issue-1page": 2, "issue-pages": 2}
    assert trace_counts.totals(CONSOLE) == {"issue-1page": 12, "issue-pages": 40}


def test_a_console_without_the_columns_or_marks_is_refused():
    with pytest.raises(StudyError, match="before TRACE-COLUMNS"):
        trace_counts.by_phase(_mark("phase", "fill", 1.0) + "\nTRACE-AT: 1.00 1 1")
    with pytest.raises(StudyError, match="no phase marks"):
        trace_counts.by_phase("TRACE-COLUMNS: a\nTRACE-AT: 1.00 1")
    with pytest.raises(StudyError, match="2 values for 1 columns"):
        trace_counts.by_phase(_mark("phase", "fill", 1.0) + "\nTRACE-COLUMNS: a\nTRACE-AT: 1.00 1 2")
