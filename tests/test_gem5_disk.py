"""gem5-patches/' disk model on gem5: what the guest measures lands where the profile's
parameters say, and the run's seed (and only it) moves the drive's rotational luck.
These need GEM5 set to a gem5 built by `./study gem5 --source DIR`, and are skipped,
saying so, otherwise (each profile boots once and runs for minutes)."""


import pytest

from analysis.disk_calibration import calibration
from analysis.records import read_events
from analysis.table import gem5_rows
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.campaigns import runs
from reclaimstudy.config.disk_model import null_disk
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.results.gem5_stats import select_values
from tests.gem5_drives import SMALL, needs_gem5_for


pytestmark = [pytest.mark.gem5, needs_gem5_for("desktop-hdd-128")]
TOLERANCE = 0.15


def run_disk_calib(system, results, repetition: int = 0, **arguments):
    workload = get_workload("disk-calib")
    system = get_system(system) if isinstance(system, str) else system
    spec = runs.RunSpec("gem5-disk", system, get_policy("baseline"), workload,
                        workload.arguments(arguments), repetition, "gem5")
    record = runs.execute(spec, gem5_backend.Gem5Backend(), results=results, timeout_s=3600)
    assert record["status"] == "ok", record["reason"]
    return results / "gem5-disk" / record["run_id"]


@pytest.mark.parametrize("system_name", ["desktop-hdd-128", "desktop-ssd-128", "mobile-lpddr"])
def test_disk_calib_lands_within_15_percent_of_the_profiles_prediction(system_name, tmp_path):
    """The guest's time = the disk's (from the parameters) + its own IO path, measured on
    the same system with a disk that takes no time (from the same boot)."""
    system = get_system(system_name)
    guest_path = run_disk_calib(null_disk(system), tmp_path / "null")
    rows = calibration(run_disk_calib(system, tmp_path / "disk"), guest_path)
    assert {r["metric"] for r in rows} == {
        "random_4k_latency_s", "sequential_mib_s", "random_4k_write_latency_s",
        "sequential_write_mib_s", "swap_out_s_per_mib", "swap_out_device_s_per_mib"}
    off = [r for r in rows if r["error"] is not None and abs(r["error"]) > TOLERANCE]
    assert not off, off


def quiet_shares(run_dir) -> dict[str, float]:
    """Per phase, the share of simulated time with neither CPU nor disk busy."""
    phases = [e["name"] for e in read_events(run_dir) if e["event"] == "phase"]
    rows = gem5_rows(run_dir, phases)
    sim = {r["phase"]: r["value"] for r in rows if r["metric"] == "sim_seconds"}
    return {r["phase"]: r["value"] / sim[r["phase"]] for r in rows if r["metric"] == "quiet_s"}


def test_a_guest_waiting_on_its_disk_is_never_idle_with_nothing_busy(tmp_path):
    """A lost wake-up (gem5 without 0002's sti shadow) leaves the guest halted with a
    request queued: the hard disk's calibration then had 0.35 s of 0.60 quiet."""
    shares = quiet_shares(run_disk_calib("desktop-hdd-128", tmp_path, 3))
    assert set(shares) == {"random", "sequential", "random-write", "sequential-write",
                           "swap-out", "swap-in"}
    assert max(shares.values()) < 0.01, shares


ROTATION = r"ide\.disks\d*\.timing\.(rotationTicks|seekTicks)$"


def test_the_runs_seed_decides_the_drives_luck_and_nothing_else_does(tmp_path):
    first = run_disk_calib("desktop-hdd-128", tmp_path / "a", 0, **SMALL)
    again = run_disk_calib("desktop-hdd-128", tmp_path / "b", 0, **SMALL)
    other = run_disk_calib("desktop-hdd-128", tmp_path / "c", 1, **SMALL)

    def measured(directory):
        return ([(r["kind"], r.get("mean_latency_s")) for r in read_events(directory)
                 if r["event"] == "record"],
                select_values(directory / "stats.txt", [ROTATION]))
    assert measured(first) == measured(again)
    records, stats = measured(first)
    other_records, other_stats = measured(other)
    assert records != other_records and stats[0] != other_stats[0]


def test_a_run_cut_into_segments_seeks_and_waits_as_one_never_cut(tmp_path):
    """gem5-patches/0004 checkpoints the drive (head position, write cache, queue, random
    source): restored at every phase boundary and every 20 simulated ms, the drive meets
    the guest's commands from where it was, so its seeks and rotational waits, which
    depend on nothing but the sequence of commands, sum as in the uncut run. Without
    0004 each segment began at sector 0 with the seed's first draws."""
    workload, system = get_workload("disk-calib"), get_system("desktop-hdd-128")

    def run(results, every_s):
        spec = runs.RunSpec("gem5-disk", system, get_policy("baseline"), workload,
                            workload.arguments(SMALL), 0, "gem5", checkpoint_every_s=every_s)
        record = runs.execute(spec, gem5_backend.Gem5Backend(), results=results,
                              timeout_s=3600)
        assert record["status"] == "ok", record["reason"]
        return record, results / "gem5-disk" / record["run_id"]

    def drive(directory):
        blocks = select_values(directory / "stats.txt", [ROTATION])
        return {name: sum(block.get(name, 0) for block in blocks)
                for name in set().union(*blocks)}
    _, whole = run(tmp_path / "whole", None)
    cut_record, cut = run(tmp_path / "cut", 0.02)
    assert cut_record["backend_info"]["segments"] >= 6, cut_record["backend_info"]
    assert drive(cut) == drive(whole)
    assert all(value > 0 for value in drive(whole).values())


def test_the_drives_own_seed_moves_its_luck_after_the_shared_boot(tmp_path):
    """The same job restored from the same boot checkpoint with only the drive's seed
    changed: its rotational waits change, and with the seed kept they repeat. (0004's
    first version restored the boot's random state into every run, whatever its seed.)"""
    workload = get_workload("disk-calib")
    spec = runs.RunSpec("gem5-disk", get_system("desktop-hdd-128"), get_policy("baseline"),
                        workload, workload.arguments(SMALL), 0, "gem5")
    backend = gem5_backend.Gem5Backend()
    prepared = backend.prepare(spec)
    params = gem5_backend.run_params(spec, prepared, runs.job_text(spec, "seed"), 1800)

    def rotation(name, disk_seed):
        out = tmp_path / name
        result = gem5_backend.simulate(prepared.parts["gem5"], {**params, "disk_seed": disk_seed},
                                       out, timeout_s=1800)
        assert result["status"] == "exit", result
        return select_values(out / "stats.txt", [ROTATION])

    first = rotation("a", params["disk_seed"])
    assert rotation("b", params["disk_seed"]) == first
    assert rotation("c", params["disk_seed"] + 7) != first
