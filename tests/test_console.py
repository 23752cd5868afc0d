"""The console parser on recorded guest logs: a good run and each way a run fails."""

from pathlib import Path

import pytest

from reclaimstudy.results.console import parse_console, parse_console_file

LOGS = Path(__file__).parent / "fixtures" / "console"


def test_a_good_run_yields_policy_phases_records_and_ok():
    result = parse_console_file(LOGS / "good.log")
    assert result.status == "ok" and result.reason is None and result.garbled == []
    assert result.policy["readback"] == {"exec_protect": 1, "use_once": 3, "refault_scan_anon": 1,
                                         "madv_free": 1, "swappiness": 60, "lru_gen": "0x0000"}
    assert [p["name"] for p in result.phases] == ["read", "anon"]
    assert all("pgmajfault" in p["vmstat"] for p in result.phases)
    assert [r["kind"] for r in result.records] == ["read", "anon"]
    assert result.of("job_end") == [{"event": "job_end", "status": 0}]
    assert result.phase_marks() == [(2.017298, "read"), (2.359934, "anon"), (2.844438, "after")]


@pytest.mark.parametrize("log, reason", [
    ("panic.log", "kernel panic: Requested init /no/such/init failed (error -2)."),
    ("oom-kill.log", "OOM kill: dd (pid 34)"),
    ("nonzero-exit.log", "workload exited with status 1"),
    ("truncated.log", "truncated log: no job_end marker (last event: phase)"),
])
def test_each_failure_is_named_with_its_first_cause(log, reason):
    result = parse_console_file(LOGS / log)
    assert result.status == "failed"
    assert result.reason == reason


def test_an_event_after_kernel_text_on_the_same_line_is_still_read():
    text = ('[   12.3] ata1: something@@reclaim {"event":"job_end","status":0}\n')
    assert parse_console(text).status == "ok"


def test_an_error_event_fails_the_run_with_its_message():
    text = ('@@reclaim {"event":"error","workload":"thrash","status":2,"message":"rounds must be > 0"}\n'
            '@@reclaim {"event":"job_end","status":2}\n')
    result = parse_console(text)
    assert result.reason == "thrash failed (status 2): rounds must be > 0"


def test_garbled_event_lines_are_counted_not_trusted():
    text = '@@reclaim {"event":"phase","na\n@@reclaim {"event":"job_end","status":0}\n'
    result = parse_console(text)
    assert result.status == "ok" and len(result.garbled) == 1
