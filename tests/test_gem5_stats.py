"""The stats.txt parser, on real gem5 outputs (tests/fixtures/gem5) and on broken files."""

import math
import re
from pathlib import Path

import pytest

from reclaimstudy.results.gem5_stats import StatsError, block_values, parse_stats, parse_stats_text, stats_frame
from reclaimstudy.results.gem5_stats import END

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gem5"
FS = FIXTURES / "fs-x86-atomic-boot" / "stats.txt"
SE = FIXTURES / "se-x86-o3-phases" / "stats.txt"


def test_full_system_boot_has_its_three_blocks_with_known_values():
    blocks = parse_stats(FS)
    assert len(blocks) == 3
    boot, dd, tail = (block_values(b) for b in blocks)
    assert boot["simSeconds"] == pytest.approx(0.446656)
    assert boot["simInsts"] == 222891437
    assert dd["simSeconds"] == pytest.approx(0.023, rel=0.05)
    # simInsts is cumulative in gem5 v24 (not reset by dumpresetstats); the cores'
    # committed-instruction counters are per block.
    core = "board.processor.cores.core.commitStats0.numInsts"
    assert dd["simInsts"] == pytest.approx(boot["simInsts"] + dd[core], rel=1e-3)
    assert dd[core] == pytest.approx(15.7e6, rel=0.01)
    assert tail["simInsts"] > dd["simInsts"]


def test_vectors_and_distributions_become_sub_entries_with_pdf_and_cdf():
    blocks = parse_stats(SE)
    assert len(blocks) == 4
    stats = {s.key: s for s in blocks[1]}
    busy = [s for s in blocks[1] if s.name.endswith("statFuBusy") and s.sub]
    assert busy and all(s.cdf is not None and s.pdf is not None for s in busy)
    assert len(busy) == 74 and busy[-1].sub == "SimdConfig"
    assert busy[-1].cdf == pytest.approx(100.0, abs=0.01)
    write = next(s for s in busy if s.sub == "MemWrite")
    assert (write.value, write.pdf, write.cdf) == (2244012, pytest.approx(44.88), pytest.approx(45.48))
    hits = stats["board.cache_hierarchy.l1d-cache-0.demandHits::total"]
    assert hits.sub == "total" and hits.unit == "Count"
    assert stats["simSeconds"].unit == "Second"
    assert stats["hostTickRate"].unit == "Tick/Second"


def test_nan_values_are_kept_as_floats():
    values = [s.value for block in parse_stats(SE) for s in block]
    assert any(math.isnan(v) for v in values)


def test_stats_frame_is_tidy():
    frame = stats_frame(SE)
    assert set(frame["block"]) == {0, 1, 2, 3}
    assert {"key", "name", "sub", "value", "unit"} <= set(frame.columns)
    sim = frame[frame["key"] == "simInsts"]
    assert len(sim) == 4 and (sim["value"] > 0).all()


@pytest.mark.parametrize("text, message", [
    ("---------- Begin Simulation Statistics ----------\nsimSeconds 1 # x (Second)\n",
     "no End line"),
    ("simSeconds 1 # x\n", "outside any Begin/End block"),
    ("---------- Begin Simulation Statistics ----------\nsimSeconds one # x\n"
     "---------- End Simulation Statistics   ----------\n", "value 'one' is not a number"),
    ("---------- Begin Simulation Statistics ----------\n???\n"
     "---------- End Simulation Statistics   ----------\n", "not a stat line"),
    ("---------- End Simulation Statistics   ----------\n", "'End' without 'Begin'"),
])
def test_malformed_stats_are_rejected_naming_file_and_line(text, message):
    with pytest.raises(StatsError, match=message) as error:
        parse_stats_text(text, "runs/x/stats.txt")
    assert "runs/x/stats.txt" in str(error.value)


def test_a_truncated_real_file_is_never_read_as_data(tmp_path):
    text = FS.read_text()
    cut = tmp_path / "stats.txt"
    cut.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(StatsError, match="truncated"):
        parse_stats(cut)


def test_a_run_whose_blocks_do_not_match_its_phases_is_refused_at_collection(tmp_path):
    from reclaimstudy.backends.gem5.backend import Gem5Backend
    check = Gem5Backend().check_outputs
    stats = tmp_path / "stats.txt"
    assert check(tmp_path, 2) == "gem5 wrote no stats.txt"
    block = FS.read_text().split(END)[0] + END + "\n"
    stats.write_text(block * 2)
    assert check(tmp_path, 2) is None
    assert "3 blocks for the guest's 2 phases" in check(_write(stats, block * 3).parent, 2)
    assert "2 blocks begun and 1 ended" in check(
        _write(stats, block + block.rsplit("----------", 2)[0]).parent, 2)


def _write(path, text):
    path.write_text(text)
    return path


def test_table_reads_each_phases_hardware_numbers_from_the_right_stats():
    from analysis.table import gem5_rows
    rows = gem5_rows(FS.parent, ["boot", "dd", "tail"])
    value = {(r["phase"], r["metric"]): r["value"] for r in rows}
    # the dd phase read a 16 MiB file from the IDE disk and wrote nothing to it
    assert 16 * 2**20 <= value["dd", "disk_read_bytes"] < 17 * 2**20
    assert value["dd", "disk_write_bytes"] < 64 * 1024
    assert value["dd", "instructions"] == pytest.approx(15.7e6, rel=0.01)
    assert value["dd", "sim_seconds"] == pytest.approx(0.023, rel=0.05)
    assert value["dd", "ipc"] == pytest.approx(value["dd", "instructions"] / value["dd", "cycles"])
    # an SE run has caches whose traffic to memory goes through "mem_side" ports, and no
    # disk: nothing of the caches' traffic may be counted as disk IO
    se = gem5_rows(SE.parent, ["a", "b", "c", "d"])
    assert not [r for r in se if r["metric"].startswith("disk_")]
    assert [r for r in se if r["metric"] == "l2_miss_rate"]


def test_a_stats_file_with_a_block_per_phase_missing_is_refused():
    from analysis.table import gem5_rows
    from reclaimstudy.errors import StudyError
    with pytest.raises(StudyError, match="3 stats blocks for 2 phases"):
        gem5_rows(FS.parent, ["boot", "dd"])


def test_the_tables_fast_reader_gives_exactly_the_full_parsers_values(tmp_path):
    from analysis.metrics import GEM5
    from reclaimstudy.results.gem5_stats import select_values
    patterns = [pattern for _, pattern, _ in GEM5]
    for path in (FS, SE):
        fast = select_values(path, patterns)
        full = [block_values(b) for b in parse_stats(path)]
        assert len(fast) == len(full) and any(fast)
        for chosen, every in zip(fast, full):
            expected = {k: v for k, v in every.items()
                        if any(re.search(p, k) for p in patterns)}
            assert chosen.keys() == expected.keys()
            assert all(chosen[k] == expected[k] or (math.isnan(chosen[k]) and math.isnan(expected[k]))
                       for k in chosen)
    cut = tmp_path / "stats.txt"
    cut.write_text(FS.read_text()[: len(FS.read_text()) * 2 // 3])
    with pytest.raises(StatsError, match="no End line"):
        select_values(cut, patterns)


def test_cycles_are_the_blocks_ticks_over_the_clock_period_as_gem5_counts_them_unsegmented():
    from analysis.table import gem5_rows
    rows = gem5_rows(FS.parent, ["boot", "dd", "tail"])
    cycles = {r["phase"]: r["value"] for r in rows if r["metric"] == "cycles"}
    for phase, block in zip(["boot", "dd", "tail"], parse_stats(FS)):
        gem5 = block_values(block)["board.processor.cores.core.numCycles"]
        assert cycles[phase] == pytest.approx(gem5, rel=1e-3)  # to a block edge


QUIET = FIXTURES / "fs-x86-disk-calib-quiet" / "stats.txt"


def test_quiet_time_finds_the_sequential_read_that_waited_with_nothing_busy():
    from analysis.table import gem5_rows
    value = {(r["phase"], r["metric"]): r["value"]
             for r in gem5_rows(QUIET.parent, ["random", "sequential", "random-write"])}
    # random reads: the disk was busy nearly all the time (1.157 s, 1.137 s of commands)
    assert value["random", "quiet_s"] == 0.0
    # the sequential read took 0.601 s; the CPU was busy 13 ms of it and the disk's
    # 128 commands 121 ms (plus as much on the media): at least a third of a second idle
    assert value["sequential", "cpu_busy_share"] == pytest.approx(0.021859, rel=1e-3)
    assert value["sequential", "disk_service_ticks"] == pytest.approx(120.58e9, rel=1e-3)
    assert 0.30 < value["sequential", "quiet_s"] < 0.47
    # the O_DSYNC writes are cached: their media time (seek, rotation) is what the
    # flushes waited for, and counts as busy
    assert value["random-write", "disk_media_ticks"] > 10 * value["random-write", "disk_service_ticks"]
    assert 0.1 < value["random-write", "quiet_s"] < 0.3


def test_the_disks_commands_and_positioning_time_are_read_per_phase():
    from analysis.table import gem5_rows
    value = {(r["phase"], r["metric"]): r["value"]
             for r in gem5_rows(QUIET.parent, ["random", "sequential", "random-write"])}
    # 200 random reads, 128 sequential ones, 103 writes (the fixture's three blocks)
    assert [value[p, "disk_reads"] for p in ("random", "sequential", "random-write")] == [200, 128, 0]
    assert value["random-write", "disk_writes"] == 103
    # seek plus rotation, without the transfer: random reads spend ~1 s positioning the
    # head, the sequential ones ~2.8 ms
    assert value["random", "disk_position_ticks"] == 202875575669 + 828763095367
    assert value["sequential", "disk_position_ticks"] == 1072881426 + 1687725770
    assert value["sequential", "disk_position_ticks"] < value["sequential", "disk_media_ticks"]
    assert (value["random", "disk_seek_ticks"], value["random", "disk_rotation_ticks"]) == \
        (202875575669, 828763095367)
    # our analytic model has no read buffer: DiskSim's counts are not made up for it
    assert ("random", "disk_buffer_hits") not in value
    # the sequential read's commands all but one continue the one before; of the random
    # ones none does, of the writes two: those are the commands that paid no positioning
    assert [value[p, "disk_sequential"] for p in ("random", "sequential", "random-write")] == \
        [0, 127, 2]
    assert [value[p, "disk_jumps"] for p in ("random", "sequential", "random-write")] == \
        [200, 1, 101]


def test_a_phase_cut_into_blocks_weighs_the_cpus_busy_share_by_time(tmp_path):
    from analysis.table import join_blocks
    joined = join_blocks([
        {"simSeconds": 1.0, "x.notIdleFraction": 0.5, "board.clk_domain.clock": 500.0},
        {"simSeconds": 3.0, "x.notIdleFraction": 0.1, "board.clk_domain.clock": 500.0}])
    assert joined["x.notIdleFraction"] == pytest.approx((0.5 + 0.3) / 4)
    assert joined["board.clk_domain.clock"] == 500.0


def test_disksims_buffer_counts_are_read_per_phase(tmp_path):
    from analysis.table import gem5_rows
    prefix = "board.pc.south_bridge.ide.disks.timing"
    blocks = []
    for full, reading, misses in ((55, 0, 12), (18, 3, 28)):
        blocks.append("\n".join([
            "---------- Begin Simulation Statistics ----------", "simSeconds 1.0",
            f"{prefix}.fullReadHits {full}", f"{prefix}.readingHits {reading}",
            f"{prefix}.readMisses {misses}", f"{prefix}.seekTicks 7", f"{prefix}.rotationTicks 5",
            "---------- End Simulation Statistics   ----------"]))
    (tmp_path / "stats.txt").write_text("\n\n".join(blocks) + "\n")
    value = {(r["phase"], r["metric"]): r["value"] for r in gem5_rows(tmp_path, ["a", "b"])}
    assert [value[p, "disk_buffer_hits"] for p in "ab"] == [55, 21]
    assert [value[p, "disk_buffer_misses"] for p in "ab"] == [12, 28]
    assert value["a", "disk_position_ticks"] == 12


def test_the_nvme_drives_bytes_commands_and_flash_counts_are_read_per_phase(tmp_path):
    """Names as gem5 with 0007 writes them (a boot's stats.txt): the NVMe drive's own
    byte counts and SimpleSSD's, beside the IDE disks' (none here)."""
    from analysis.table import gem5_rows
    nvme = "board.pc.nvme"
    blocks = []
    for reads, writes, hits, gc in ((121, 1, 68, 0), (40, 300, 9, 2)):
        blocks.append("\n".join([
            "---------- Begin Simulation Statistics ----------", "simSeconds 1.0",
            f"{nvme}.mediaReadBytes {reads * 4096}", f"{nvme}.mediaWriteBytes {writes * 4096}",
            f"{nvme}.simplessd::read_request_count {reads}",
            f"{nvme}.simplessd::write_request_count {writes}",
            f"{nvme}.simplessd::icl_generic_cache_read_from_cache {hits}",
            f"{nvme}.simplessd::ftl_page_mapping_gc_count {gc}",
            f"{nvme}.simplessd::ftl_page_mapping_gc_page_copies {gc * 100}",
            f"{nvme}.simplessd::pal_read_count {reads * 2}",
            f"{nvme}.simplessd::pal_program_count {writes}",
            "---------- End Simulation Statistics   ----------"]))
    (tmp_path / "stats.txt").write_text("\n\n".join(blocks) + "\n")
    value = {(r["phase"], r["metric"]): r["value"] for r in gem5_rows(tmp_path, ["a", "b"])}
    assert [value[p, "disk_reads"] for p in "ab"] == [121, 40]
    assert [value[p, "disk_writes"] for p in "ab"] == [1, 300]
    assert [value[p, "disk_read_bytes"] for p in "ab"] == [121 * 4096, 40 * 4096]
    assert [value[p, "disk_write_bytes"] for p in "ab"] == [4096, 300 * 4096]
    assert [value[p, "flash_cache_read_hits"] for p in "ab"] == [68, 9]
    assert [value[p, "flash_gc"] for p in "ab"] == [0, 2]
    assert value["b", "flash_gc_page_copies"] == 200
    assert value["a", "flash_page_reads"] == 242 and value["b", "flash_page_programs"] == 300
