"""The ad hoc mechanism traces of analysis/traces/ that count in the guest: run under
QEMU, they must count what the guest's own counters say happened, lose no event, and
cost the guest little memory (tracefs instances cost ~2.4 MiB each on 6.1)."""

import re

import pytest

from analysis import trace_counts
from analysis.records import phase_vmstat_deltas, read_events
from reclaimstudy.campaigns.runs import RunSpec
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload


def _traced_run(tmp_path, workload_name, params, trace):
    from reclaimstudy.backends.qemu.backend import QemuBackend
    from reclaimstudy.campaigns import runs
    from reclaimstudy.paths import REPO
    workload = get_workload(workload_name)
    spec = RunSpec("test-trace", get_system("ci-tiny"), get_policy("baseline"), workload,
                   workload.arguments(params), 0, "qemu",
                   job_extra=(REPO / "analysis/traces" / trace).read_text())
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=900)
    assert record["status"] == "ok", record["reason"]
    run_dir = tmp_path / "test-trace" / record["run_id"]
    console = (run_dir / "console.log").read_text()
    events = read_events(run_dir)
    counts = trace_counts.totals(console)
    assert re.findall(r"TRACE: overrun (\d+)", console) == ["0"]
    return counts, events, console


def _job_delta(events, counter):
    return sum(delta[counter] for delta in phase_vmstat_deltas(events, (counter,)).values())


@pytest.mark.slow
def test_the_make_grep_trace_counts_the_makes_files_read_and_read_again(tmp_path):
    counts, events, _ = _traced_run(tmp_path, "make-grep", {}, "make-grep-evictions.sh")
    make = next(e for e in events if e.get("kind") == "make")
    # the filter holds the make's files alone, and each group is read
    assert counts["other added"] == counts["other deleted"] == 0
    assert counts["units distinct"] > 0 and counts["headers distinct"] > 0
    assert counts["cc1 distinct"] > 0  # the compiler, run once a unit
    for group in ("units", "headers", "cc1"):
        assert counts[f"{group} added"] >= counts[f"{group} distinct"], group
    # every page added was read by the make: no more than the bytes it read, each of its
    # file reads rounded up to whole pages
    added_mib = (counts["units added"] + counts["headers added"]) * 4096 / 2**20
    assert 0 < added_mib <= make["mib"] + 1 + make["files"] * 4096 / 2**20


@pytest.mark.slow
def test_the_swap_write_trace_counts_every_page_written_to_swap(tmp_path):
    counts, events, console = _traced_run(tmp_path, "thrash", {"rounds": 1},
                                          "swap-write-requests.sh")
    queued = sum(counts[f"insert-{who}-{size}"] for who in ("kswapd", "other")
                 for size in ("1page", "more"))
    issued = counts["issue-1page"] + counts["issue-more"]
    # (not issued <= queued: a request can be issued without being queued, or issued again)
    assert queued > 0 and issued > 0
    assert counts["issue-pages"] >= issued  # a command holds a page at least
    # every page swapped out went to the disk in some write command (and file writes too)
    assert counts["issue-pages"] >= _job_delta(events, "pswpout") > 0
    # the 10-ms slices add up to the job's counts, and the fill, which swaps, has writes
    phases = trace_counts.by_phase(console)
    for name, total in counts.items():
        assert sum(phases[p].get(name, 0) for p in phases if p != "boundary") == total, name
    assert phases["fill"]["issue-pages"] > 0
