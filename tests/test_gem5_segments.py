"""gem5 runs in segments (reclaimstudy/backends/gem5/segments.py): a run killed part-way resumes
from its newest checkpoint and ends as it would have uninterrupted; a phase cut into
blocks at checkpoints reads as one. The simulator here is a stand-in that writes what
gem5 writes; tests/test_gem5.py runs the real one."""

import json

import pytest

from analysis.table import gem5_rows, join_blocks
from reclaimstudy.backends.gem5 import segments as gem5_segments
from reclaimstudy.campaigns.runs import RunSpec, run_identity
from reclaimstudy.campaigns.studies import parse_study
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.results.gem5_stats import BEGIN, END, PARTIAL_FILE, blocks_problem, phase_groups


def block(**values) -> str:
    lines = "".join(f"{name.replace('__', '.')} {value} # x (Count)\n"
                    for name, value in values.items())
    return f"\n{BEGIN}\n\n{lines}\n{END}\n"


class FakeGem5:
    """Three segments: a grid cut inside the first phase (partial block), the phase
    boundary, then the guest's exit. Killed (an exception) on call `kill_at`."""

    def __init__(self, kill_at=None):
        self.calls, self.kill_at, self.restored_from = 0, kill_at, []

    def __call__(self, params, outdir, timeout_s):
        self.calls += 1
        outdir.mkdir(parents=True, exist_ok=True)
        (outdir / "params.json").write_text(json.dumps(params))
        index = int(outdir.name.split("-")[1])
        self.restored_from.append(params["checkpoint"])
        if self.calls == self.kill_at:
            (outdir / "stats.txt").write_text(block(simSeconds=9))  # half a segment
            raise KeyboardInterrupt("killed")
        stats, console, ending = [
            (block(simSeconds=1, insts=10), "phase 0 start\n",
             {"why": "grid", "partial_block": True, "phases_begun": True}),
            (block(simSeconds=2, insts=20), "phase 0 end\n",
             {"why": "phase", "partial_block": False, "phases_begun": True}),
            (block(simSeconds=4, insts=40), "exit\n", None)][index]
        (outdir / "stats.txt").write_text(stats)
        (outdir / "board.pc.com_1.device").write_text(console)
        if ending:
            (outdir / "cpt").mkdir()
        return {"status": "segment" if ending else "exit", "segment": ending,
                "sim_seconds": index + 1,
                "host": {"wall_seconds": 10.0, "cpu_seconds": 1.5, "max_rss_mib": 5}}


def outputs(run_dir):
    return {name: (run_dir / name).read_text() for name in
            ("stats.txt", "console.log", PARTIAL_FILE)}


def test_a_killed_segmented_run_resumes_from_its_newest_checkpoint_and_ends_the_same(tmp_path):
    plain_dir, plain_work = tmp_path / "plain", tmp_path / "plain-work"
    plain_dir.mkdir()
    gem5 = FakeGem5()
    result = gem5_segments.run_segmented(gem5, {}, tmp_path / "boot", 1.0, plain_work,
                                         plain_dir, 3600)
    assert result["status"] == "exit" and result["segments"] == 3 and gem5.calls == 3
    assert not plain_work.exists(), "a complete run's checkpoints are removed"

    run_dir, work = tmp_path / "killed", tmp_path / "work"
    run_dir.mkdir()
    killed = FakeGem5(kill_at=3)  # in the third segment
    with pytest.raises(KeyboardInterrupt):
        gem5_segments.run_segmented(killed, {}, tmp_path / "boot", 1.0, work, run_dir, 3600)
    assert [p.name for p in gem5_segments.completed(work)] == ["seg-000", "seg-001"]
    assert not (work / "seg-000" / "cpt").exists() and (work / "seg-001" / "cpt").exists()
    # the sweep's status line: the saved segments only, not the one killed half-way
    assert gem5_segments.progress(work) == "2 segment(s) saved, simulated to 2.0 s, 3 gem5 CPU-s"
    assert gem5_segments.progress(tmp_path / "not-started") is None
    again = FakeGem5()
    again.calls = 2  # the stand-in picks its output by segment
    result = gem5_segments.run_segmented(again, {}, tmp_path / "boot", 1.0, work, run_dir, 3600)
    assert again.restored_from == [str(work / "seg-001" / "cpt")]
    assert result["resumed_at_segment"] == 2 and result["status"] == "exit"
    assert outputs(run_dir) == outputs(plain_dir)
    assert json.loads((run_dir / PARTIAL_FILE).read_text()) == {"partial_blocks": [0]}
    segments = json.loads((run_dir / "segments.json").read_text())
    assert [s["ended"] for s in segments] == ["grid", "phase", None]


class HighPin(FakeGem5):
    """Restoring the second segment's checkpoint lowered an interrupt pin, and each
    restore found the drive busy (gem5_checkpoint)."""

    def __call__(self, params, outdir, timeout_s):
        result = super().__call__(params, outdir, timeout_s)
        drives = {"disks.timing": {"cached_kib": 8.0 * self.calls, "busy_ms": 3.5 / self.calls}}
        return {**result, "pins_lowered": ["io_apic pin 14"] if self.calls == 2 else [],
                "drives_at_restore": drives}


def test_what_each_restore_lowered_and_carried_over_is_recorded_per_segment_and_for_the_run(
        tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = gem5_segments.run_segmented(HighPin(), {}, tmp_path / "boot", 1.0,
                                         tmp_path / "work", run_dir, 3600)
    assert result["pins_lowered"] == ["001: io_apic pin 14"]
    segments = json.loads((run_dir / "segments.json").read_text())
    assert [s["pins_lowered"] for s in segments] == [[], ["io_apic pin 14"], []]
    assert result["drive_backlog_max"] == {"cached_kib": 24.0, "busy_ms": 3.5}
    assert segments[1]["drives_at_restore"] == {"disks.timing": {"cached_kib": 16.0,
                                                                 "busy_ms": 1.75}}


class LostDisk(FakeGem5):
    """The guest's disk stops answering in the first segment; the guest then idles on,
    segment after segment, as a run did on gem5 (libata's timeout shows 30 s later)."""

    def __call__(self, params, outdir, timeout_s):
        result = super().__call__(params, outdir, timeout_s)
        if self.calls == 2:
            (outdir / "board.pc.com_1.device").write_text(
                "ata1.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x6 frozen\n"
                "I/O error, dev sda, sector 1892976 op 0x0:(READ)\n")
        return result


def test_a_run_whose_guest_disk_stops_answering_fails_at_once_and_names_it(tmp_path):
    run_dir, work = tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    gem5 = LostDisk()
    result = gem5_segments.run_segmented(gem5, {}, tmp_path / "boot", 1.0, work, run_dir, 3600)
    assert gem5.calls == 2, "no segment is simulated after the error shows"
    assert result["status"] == "guest-disk-error"
    assert "seg-001: ata1.00: exception Emask 0x0" in result["detail"]
    assert "ata1.00: exception" in (run_dir / "console.log").read_text()
    assert work.exists(), "a failed run keeps its checkpoints for a look"
    # Redone later (a sweep redoes failed runs), it starts again from the boot checkpoint
    # rather than from seg-000's, which may have been saved after the disk was lost
    # (libata tells 30 simulated s later).
    assert [p.name for p in gem5_segments.completed(work)] == ["seg-000"]
    again = FakeGem5()
    result = gem5_segments.run_segmented(again, {}, tmp_path / "boot", 1.0, work, run_dir, 3600)
    assert again.restored_from[0] == str(tmp_path / "boot")
    assert result["status"] == "exit" and result["resumed_at_segment"] == 0
    assert "ata1.00" not in (run_dir / "console.log").read_text()


def test_a_console_without_disk_errors_is_not_one(tmp_path):
    (tmp_path / "seg-000").mkdir()
    (tmp_path / "seg-000" / "board.pc.com_1.device").write_text(
        "ata1: SATA link up\nscsi 0:0:0:0: Direct-Access ATA\nEXT4-fs (sda): mounted\n")
    assert gem5_segments.guest_disk_error([tmp_path / "seg-000", tmp_path / "none"]) is None


def test_a_phase_cut_at_checkpoints_is_one_phase():
    assert phase_groups(4, {0, 1}) == [[0, 1, 2], [3]]
    assert phase_groups(3, set()) == [[0], [1], [2]]
    assert phase_groups(3, {2}) == [[0], [1]]  # cut after the last phase closed
    l1 = "board.l1d-cache-0."
    first = {"simSeconds": 1.0, l1 + "overallMissRate::total": 0.5,
             l1 + "overallAccesses::total": 100.0, "mem.dram.bwTotal::total": 1000.0,
             "mem.dram.avgMemAccLat": 10.0, "mem.dram.readBursts": 1.0, "insts": 7.0}
    second = {"simSeconds": 3.0, l1 + "overallMissRate::total": 0.1,
              l1 + "overallAccesses::total": 300.0, "mem.dram.bwTotal::total": 2000.0,
              "mem.dram.avgMemAccLat": 30.0, "mem.dram.readBursts": 3.0, "insts": 5.0}
    joined = join_blocks([first, second])
    assert joined["insts"] == 12 and joined["simSeconds"] == 4
    assert joined[l1 + "overallMissRate::total"] == pytest.approx((50 + 30) / 400)
    assert joined["mem.dram.bwTotal::total"] == pytest.approx((1000 + 6000) / 4)
    assert joined["mem.dram.avgMemAccLat"] == pytest.approx((10 + 90) / 4)
    with pytest.raises(StudyError, match="needs"):
        join_blocks([{"x.overallMissRate::total": 1.0}, {"x.overallMissRate::total": 1.0}])


def test_a_segmented_runs_stats_are_read_per_phase(tmp_path):
    (tmp_path / "stats.txt").write_text(block(simSeconds=1) + block(simSeconds=2)
                                        + block(simSeconds=4))
    assert "3 blocks for the guest's 2 phases" in blocks_problem(tmp_path / "stats.txt", 2)
    (tmp_path / PARTIAL_FILE).write_text(json.dumps({"partial_blocks": [0]}))
    assert blocks_problem(tmp_path / "stats.txt", 2) is None
    rows = [r for r in gem5_rows(tmp_path, ["a", "b"]) if r["metric"] == "sim_seconds"]
    assert [(r["phase"], r["value"]) for r in rows] == [("a", 3.0), ("b", 4.0)]


def test_the_checkpoint_schedule_is_part_of_a_gem5_runs_identity_only():
    workload = get_workload("smoke")

    def spec(backend, every):
        return RunSpec("s", get_system("ci-tiny"), get_policy("baseline"), workload,
                       workload.arguments(), 0, backend, checkpoint_every_s=every)
    plain = run_identity(spec("gem5", None), {})
    cut = run_identity(spec("gem5", 2.0), {})
    assert "checkpoints" not in plain and cut["checkpoints"] == {"every_sim_s": 2.0,
                                                                "at_phases": True}
    assert run_identity(spec("qemu", 2.0), {}) == run_identity(spec("qemu", None), {})


def test_a_study_names_a_bad_checkpoint_interval(tmp_path):
    table = {"description": "d", "baseline": "baseline", "checkpoint_every_s": 0,
             "experiment": [{"name": "e", "workload": "smoke", "systems": ["ci-tiny"],
                            "policies": ["baseline"]}]}
    with pytest.raises(StudyError, match=r"checkpoint_every_s = 0; allowed: simulated seconds"):
        parse_study("x", table, tmp_path / "x.toml")
    table["checkpoint_every_s"] = 2
    study = parse_study("x", table, tmp_path / "x.toml")
    assert {spec.checkpoints()["every_sim_s"] for _, spec in study.runs("gem5")} == {2.0}


def test_a_segmented_runs_cycles_come_from_its_ticks_not_gem5s_restored_cycle_count(tmp_path):
    # After a checkpoint restore the atomic CPU's numCycles counts every tick since the
    # simulation began again (a real 2 s block of a thrash run read 8e9 at 2 GHz)
    core = "board.processor.cores.core."
    (tmp_path / "stats.txt").write_text(
        block(simSeconds=2, simTicks=2e12, **{"board.clk_domain.clock": 500,
                                               core + "numCycles": 4e9,
                                               core + "commitStats0.numInsts": 1e9})
        + block(simSeconds=2, simTicks=2e12, **{"board.clk_domain.clock": 500,
                                                 core + "numCycles": 8e9,
                                                 core + "commitStats0.numInsts": 1e9}))
    (tmp_path / PARTIAL_FILE).write_text(json.dumps({"partial_blocks": [0]}))
    value = {r["metric"]: r["value"] for r in gem5_rows(tmp_path, ["a"])}
    assert value["cycles"] == 8e9  # 4 s at 2 GHz
    assert value["ipc"] == pytest.approx(0.25)


def test_quiet_time_is_bounded_per_block_so_overlap_in_one_does_not_hide_another(tmp_path):
    # block 0: CPU and disk both busy the whole second; block 1: a second of nothing.
    # Over the joined phase the overlap would cancel the quiet second out.
    share = "board.processor.cores.core.exec_context.thread_0.notIdleFraction"
    disk = "board.pc.south_bridge.ide.disks.timing.serviceTicks"
    (tmp_path / "stats.txt").write_text(
        block(simSeconds=1, **{share: 1.0, disk: 1e12}) + block(simSeconds=1, **{share: 0.0, disk: 0}))
    (tmp_path / PARTIAL_FILE).write_text(json.dumps({"partial_blocks": [0]}))
    value = {r["metric"]: r["value"] for r in gem5_rows(tmp_path, ["a"])}
    assert value["cpu_busy_share"] == 0.5 and value["quiet_s"] == 1.0
