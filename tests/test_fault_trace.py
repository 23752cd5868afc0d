"""analysis/fault_trace.py on a console in the form analysis/traces/hot-stream-faults.sh
prints (lines as the guest's tracefs and /proc/PID/maps write them)."""
import pytest

from analysis import fault_trace
from reclaimstudy.campaigns.runs import RunSpec, job_text
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.results import record

CONSOLE = """\
TRACE: ino exe=6097 dat=6098 stream=6099
@@reclaim {"event":"phase","name":"begin","index":0,"t":1.0}
TRACE-MAPS: 00401000-0053d000 r-xp 00001000 08:01 6097   /usr/share/reclaim/data/hot-stream/interactive
TRACE-MAPS: 0053d000-00567000 r--p 0013d000 08:01 6097   /usr/share/reclaim/data/hot-stream/interactive
TRACE-MAPS: 7f9d9fda6000-7f9d9ffa6000 rw-p 00000000 00:00 0
TRACE-MAPS: 7f9d9ffa6000-7f9da0049000 r--p 00000000 08:01 6098   /usr/share/reclaim/data/hot-stream/interactive.dat
@@reclaim {"event":"phase","name":"stream","index":1,"t":2.0}
TRACE-EV:          kswapd0-22      [000] d....     2.100000: mm_filemap_delete_from_page_cache: dev 8:1 ino 17d2 pfn=0x38be ofs=0 order=0
TRACE-EV:      interactive-85      [000] d....     2.200000: page_fault_user: address=0x00007f9d9ffa6010 ip=0x0000000000402a30 error_code=0x4
TRACE-EV:      interactive-85      [000] .....     2.200100: mm_filemap_add_to_page_cache: dev 8:1 ino 17d2 pfn=0x3e42 ofs=0 order=0
TRACE-EV:      interactive-85      [000] .....     2.200101: mm_filemap_add_to_page_cache: dev 8:1 ino 17d2 pfn=0x3e43 ofs=4096 order=0
TRACE-EV:      interactive-85      [000] d....     2.300000: page_fault_user: address=0x00007f9d9ffa7010 ip=0x0000000000402a30 error_code=0x4
TRACE-EV:      interactive-85      [000] d....     2.400000: page_fault_user: address=0x0000000000402a30 ip=0x0000000000402a30 error_code=0x14
TRACE-EV:      interactive-85      [000] d....     2.500000: page_fault_user: address=0x00007f9d9fda7000 ip=0x0000000000402a30 error_code=0x6
TRACE-EV:       hot-stream-84      [000] d....     2.600000: page_fault_user: address=0x0000000000402a30 ip=0x0000000000402a30 error_code=0x14
TRACE-EV:       hot-stream-84      [000] .....     2.600100: mm_filemap_add_to_page_cache: dev 8:1 ino 17d3 pfn=0x3e45 ofs=0 order=0
TRACE-EV:       hot-stream-84      [000] d....     2.700000: page_fault_user: address=0x0000000000403a30 ip=0x0000000000403a30 error_code=0x14
@@reclaim {"event":"phase","name":"restore","index":2,"t":3.0}
TRACE-EV:      interactive-85      [000] d....     3.100000: page_fault_user: address=0x0000000000540000 ip=0x0000000000402a30 error_code=0x4
TRACE-EV:           python-90      [000] .....     3.100100: mm_filemap_add_to_page_cache: dev 8:1 ino 17d1 pfn=0x3e44 ofs=4096 order=0
"""


def test_faults_are_split_by_region_and_phase_and_major_only_when_the_program_read():
    counts = fault_trace.summary(fault_trace.read(CONSOLE))
    stream = counts["stream"]
    assert stream["data file faults"] == 2 and stream["data file major"] == 1
    assert stream["dat read"] == 2 and stream["dat evicted"] == 1
    assert (stream["code faults"], stream["code major"]) == (1, 0)
    assert (stream["heap faults"], stream["heap major"]) == (1, 0)
    # the streaming program's faults are its own (at addresses of the other's map), and
    # its read of its binary makes its fault before major, not the interactive's last
    assert (stream["hot-stream faults"], stream["hot-stream major"]) == (2, 1)
    assert stream["stream read"] == 1 and stream["code faults"] == 1
    # rodata is the binary's but not code; another task's read is not the program's
    restore = counts["restore"]
    assert restore["binary, not code faults"] == 1 and restore["binary, not code major"] == 0
    assert restore["exe read"] == 1


def test_what_comes_after_the_workloads_loop_is_counted_apart():
    # the workload's record says its stream loop took 0.65 s of the phase begun at 2.0
    record = ('@@reclaim {"event":"record","workload":"hot-stream","kind":"phase",'
              '"phase":"stream","seconds":0.65}\n')
    restore_mark = CONSOLE.index("@@reclaim {\"event\":\"phase\",\"name\":\"restore\"")
    console = CONSOLE[:restore_mark] + record + CONSOLE[restore_mark:]
    trace = fault_trace.read(console)
    assert trace.loop_ends == {"stream": pytest.approx(2.65)}
    counts = fault_trace.summary(trace)
    # the streamer's fault at 2.6 (with its read) is the loop's; the one at 2.7 is not
    assert (counts["stream"]["hot-stream faults"], counts["stream"]["hot-stream major"]) == (1, 1)
    after = counts["stream, after the loop"]
    assert (after["hot-stream faults"], after["hot-stream major"]) == (1, 0)
    assert counts["stream"]["data file faults"] == 2 and "restore" in counts
    # without the record nothing is split
    assert "stream, after the loop" not in fault_trace.summary(fault_trace.read(CONSOLE))


def test_a_console_without_a_trace_is_refused(tmp_path, capsys):
    plain = tmp_path / "console.log"
    plain.write_text('@@reclaim {"event":"phase","name":"begin","index":0,"t":1.0}\n')
    assert fault_trace.main([str(plain)]) == 1
    assert "not a run made with a --job-extra trace" in capsys.readouterr().err


def test_job_extra_is_in_the_job_and_the_identity_and_absent_otherwise():
    workload = get_workload("hot-stream")
    plain = RunSpec("adhoc", get_system("desktop-hdd-64"), get_policy("baseline"), workload,
                    workload.arguments({}), 0, "qemu")
    traced = RunSpec(**{**plain.__dict__, "job_extra": "echo traced"})
    # what run.json holds and the run id hashes, not only the spec's own view
    identities = [record.run_identity(spec.identity(), {"kernel": "k"}) for spec in (plain, traced)]
    assert "job_extra" not in identities[0]  # no run made before it moves
    assert identities[1]["job_extra"] == "echo traced"
    assert record.run_id(identities[0], ("x",)) != record.run_id(identities[1], ("x",))
    assert job_text(traced, "id").endswith("echo traced\n")
    assert job_text(plain, "id") == job_text(traced, "id").split("# --job-extra")[0]


@pytest.mark.slow
def test_the_trace_runs_in_the_guest_and_splits_the_programs_start_up(tmp_path):
    from reclaimstudy.backends.qemu.backend import QemuBackend
    from reclaimstudy.campaigns import runs
    from reclaimstudy.paths import REPO
    workload = get_workload("hot-stream")
    spec = RunSpec("test-trace", get_system("ci-tiny"), get_policy("baseline"), workload,
                   workload.arguments({"sparse_multiple": 1.0, "period_us": 20000}), 0, "qemu",
                   job_extra=(REPO / "analysis/traces/hot-stream-faults.sh").read_text())
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=600)
    assert record["status"] == "ok", record["reason"]
    console = (tmp_path / "test-trace" / record["run_id"] / "console.log").read_text()
    trace = fault_trace.read(console)
    assert {path.rsplit("/", 1)[-1] for *_, path in trace.maps} >= {"interactive",
                                                                   "interactive.dat"}
    assert sorted(trace.files.values()) == ["dat", "exe", "stream"]
    # Starting, the program runs all its code, reads all its data file and dirties its
    # heap: faults in each region, and its own reads of both files.
    start = fault_trace.summary(trace)["before"]
    for where in ("code", "data file", "heap"):
        assert start[f"{where} faults"] > 0, where
    assert start["code major"] > 0 and start["exe read"] > 0 and start["dat read"] > 0
