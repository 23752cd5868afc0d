"""disk-calib's calibration for every kind of [disk.timing], on the host alone: the
analytic model's profiles keep their predictions, and a profile timed by DiskSim or
SimpleSSD gets none: each entry point (the prediction, `python -m
analysis.disk_calibration`, tests/benchmarks/bench_disk_calibration.py) says what times
its disk and what its reference is, and never prices it by the analytic formulas."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import disk_calibration
from reclaimstudy.campaigns import runs
from reclaimstudy.config import disk_model
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from tests.benchmarks import bench_disk_calibration as bench

REPO = Path(__file__).resolve().parent.parent
BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"
MIB = 1 << 20
# Per profile timed by an outside simulator: what its message must name (the simulator,
# facts from its [disk.timing], and the reference its measurements are held to).
SIMULATED = {
    "desktop-disksim-ibm18es-64": ["DiskSim 4.0", "IBM Ultrastar 18ES", "7200 rpm",
                                   "validated by DiskSim's authors",
                                   "its reference is DiskSim standalone",
                                   "tests/test_disksim_gem5.py"],
    "desktop-disksim-ibm18es-sata-64": ["DiskSim 4.0", "IBM Ultrastar 18ES", "7200 rpm",
                                        "derived, not validated",
                                        "4 DiskSim parameters overridden",
                                        "its reference is DiskSim standalone",
                                        "tests/test_disksim_gem5.py"],
    "desktop-sata-ssd-64": ["SimpleSSD 2.0", "Samsung SSD 850 PRO 256 GB",
                            "configs/simplessd/samsung-850-pro-256gb.cfg",
                            "its reference is SimpleSSD standalone",
                            "tests/test_simplessd_gem5.py"],
}
NOT_ANALYTIC = "the analytic prediction (reclaimstudy/config/disk_model.py) does not apply"


def calib_run(results: Path, profile: str) -> Path:
    """A disk-calib run folder as the gem5 backend leaves it, as far as the calibration
    reads it (its identity, the guest's records, the swap disk's statistics per phase),
    with made-up measurements."""
    workload, system = get_workload("disk-calib"), get_system(profile)
    spec = runs.RunSpec("disk-calibration", system, get_policy("baseline"), workload,
                        workload.arguments(), 0, "gem5")
    run_dir = results / f"disk-calib-baseline-{profile}-r0-gem5"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"identity": spec.identity()}))
    records = {"random": {"mean_latency_s": 8e-3, "max_latency_s": 2e-2},
               "sequential": {"mib_per_s": 20.0}, "random-write": {"mean_latency_s": 9e-3},
               "sequential-write": {"mib_per_s": 18.0},
               "swap-out": {"swapped_mib": 32, "seconds": 2.0}}
    events = [e for kind, values in records.items()
              for e in ({"event": "phase", "name": kind},
                        {"event": "record", "kind": kind, **values})]
    (run_dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    disks = ["disks"] if system.disk.swap == "partition" else ["disks0", "disks1"]
    stats = "".join(f"board.pc.south_bridge.ide.{disk}.timing.{name} {value}\n"
                    for disk in disks for name, value in
                    (("writes", 256), ("bytesWritten", 32 * MIB),
                     ("serviceTicks", 150_000_000_000)))
    (run_dir / "stats.txt").write_text(f"{BEGIN}\n{stats}{END}\n" * 5)
    return run_dir


def says_why(text: str, profile: str) -> None:
    for fact in SIMULATED[profile] + [NOT_ANALYTIC]:
        assert fact in text, (fact, text)


# --- the analytic model's profiles: their predictions as before ---

# predicted_calibration on a 64 MiB file, 16 MiB streams, 256 swap commands of 32 MiB,
# as computed at 082c732, before simulator-timed profiles were refused.
ANALYTIC = {
    "desktop-hdd-128": {"random_4k_latency_s": 0.00571606, "sequential_mib_s": 130.07,
                        "random_4k_write_latency_s": 0.00523106,
                        "sequential_write_mib_s": 130.585, "swap_out_s_per_mib": 0.00361525},
    "desktop-ssd-128": {"random_4k_latency_s": 9.01704e-05, "sequential_mib_s": 223.034,
                        "random_4k_write_latency_s": 0.000108618,
                        "sequential_write_mib_s": 182.274, "swap_out_s_per_mib": 0.00548625},
    "mobile-lpddr": {"random_4k_latency_s": 9.1384e-05, "sequential_mib_s": 208.581,
                     "random_4k_write_latency_s": 7.6768e-05,
                     "sequential_write_mib_s": 114.409, "swap_out_s_per_mib": 0.00874061},
}


@pytest.mark.parametrize("profile", sorted(ANALYTIC))
def test_the_analytic_profiles_predictions_are_unchanged(profile):
    timing = get_system(profile).disk.timing
    assert disk_model.why_no_prediction(timing) is None
    predicted = disk_model.predicted_calibration(
        timing, 64 * MIB // 512, swap_commands=256, swap_bytes=32 * MIB,
        read_bytes=16 * MIB, write_bytes=16 * MIB)
    assert predicted == pytest.approx(ANALYTIC[profile], rel=1e-5)


def test_an_analytic_run_is_still_calibrated(tmp_path):
    run_dir = calib_run(tmp_path, "desktop-hdd-128")
    assert disk_calibration.no_prediction(run_dir) is None
    rows = {r["metric"]: r for r in disk_calibration.calibration(run_dir)}
    assert rows["random_4k_latency_s"]["predicted"] == pytest.approx(
        ANALYTIC["desktop-hdd-128"]["random_4k_latency_s"], rel=1e-5)
    assert rows["random_4k_latency_s"]["error"] == pytest.approx(8e-3 / 0.00571606 - 1,
                                                                 rel=1e-4)
    assert "No analytic prediction" not in disk_calibration.markdown([(run_dir, None)])


def test_a_recorded_parameter_missing_is_refused_not_defaulted(tmp_path):
    """A run whose identity lacks a parameter (FlashTiming's overheads have defaults)
    would be priced by today's default, not by the disk it had."""
    run_dir = calib_run(tmp_path, "desktop-ssd-128")
    record = json.loads((run_dir / "run.json").read_text())
    del record["identity"]["system"]["disk"]["timing"]["read_overhead_us"]
    (run_dir / "run.json").write_text(json.dumps(record))
    with pytest.raises(StudyError, match="does not record read_overhead_us"):
        disk_calibration.calibration(run_dir)


# --- profiles timed by DiskSim or SimpleSSD: no prediction, said plainly ---


@pytest.mark.parametrize("profile", sorted(SIMULATED))
def test_the_prediction_refuses_a_simulated_disk_naming_its_reference(profile):
    timing = get_system(profile).disk.timing
    why = disk_model.why_no_prediction(timing)
    says_why(why, profile)
    # No entry into the formulas prices it (as flash, or with a default): each refuses.
    for ask in (lambda: disk_model.predicted_calibration(timing, 1 << 17),
                lambda: disk_model.random_access_s(timing, False, 4096, 1 << 17),
                lambda: disk_model.sequential_mb_s(timing, False),
                lambda: disk_model.writes_s(timing, 256, 32 * MIB)):
        with pytest.raises(disk_model.NoPrediction) as refused:
            ask()
        assert str(refused.value) == why


@pytest.mark.parametrize("profile", sorted(SIMULATED))
def test_a_recorded_run_says_it_has_no_prediction(profile, tmp_path):
    """From the run's identity, which leaves out SimpleSSD's validation wording and adds
    each simulator's file digest: the message keeps the facts it records."""
    run_dir = calib_run(tmp_path, profile)
    why = disk_calibration.no_prediction(run_dir)
    assert why.startswith(f"{run_dir.name}: its disk is timed by ")
    says_why(why, profile)
    with pytest.raises(disk_model.NoPrediction, match="does not apply"):
        disk_calibration.calibration(run_dir)
    # Beside an analytic run, the table keeps that run's rows and names this one.
    hdd = calib_run(tmp_path, "desktop-hdd-128")
    table = disk_calibration.markdown([(hdd, None), (run_dir, None)])
    # (the table shows a run's name to 40 characters)
    assert f"| {hdd.name[:40]} | random_4k_latency_s |" in table
    assert f"| {run_dir.name[:40]} |" not in table
    assert f"- {why}" in table.split("No analytic prediction, so not calibrated here:")[1]


@pytest.mark.parametrize("profile", sorted(SIMULATED))
def test_the_calibration_command_says_so_and_does_not_crash(profile, tmp_path):
    run_dir = calib_run(tmp_path, profile)
    done = subprocess.run([sys.executable, "-m", "analysis.disk_calibration", str(run_dir)],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "| run | metric |" not in done.stdout  # no empty table
    says_why(done.stdout, profile)
    assert run_dir.name in done.stdout


def test_a_disk_on_gem5s_fixed_delay_says_it_has_no_prediction(tmp_path):
    """Its identity has no [disk.timing] at all (it was a KeyError)."""
    run_dir = calib_run(tmp_path, "desktop-hdd-128-stock-disk")
    assert "no [disk.timing]" in disk_calibration.no_prediction(run_dir)
    assert "no prediction applies" in disk_calibration.markdown([(run_dir, None)])


@pytest.mark.parametrize("profile", sorted(SIMULATED))
def test_the_benchmark_names_a_simulated_profile_and_runs_no_gem5(profile, monkeypatch,
                                                                  capsys, tmp_path):
    def no_gem5(system, results):
        raise AssertionError(f"gem5 was run for {system.name}")
    monkeypatch.setattr(bench, "run", no_gem5)
    assert bench.main([profile, "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{profile}: not run: its disk is timed by ")
    says_why(err, profile)
    assert "nothing to calibrate" in err


def test_the_benchmark_runs_the_analytic_profiles_of_a_mixed_list(monkeypatch, capsys,
                                                                  tmp_path):
    ran = []

    def fake_gem5(system, results):
        ran.append(system.name)
        return calib_run(results / system.name, system.name.removesuffix("-null-disk"))
    monkeypatch.setattr(bench, "run", fake_gem5)
    assert bench.main(["desktop-sata-ssd-64", "desktop-hdd-128",
                       "desktop-disksim-ibm18es-64", "--results", str(tmp_path)]) == 0
    assert ran == ["desktop-hdd-128", "desktop-hdd-128-null-disk"]
    out, err = capsys.readouterr()
    assert "| random_4k_latency_s |" in out and "No analytic prediction" not in out
    assert err.count(": not run: ") == 2
    says_why(err, "desktop-sata-ssd-64")
    says_why(err, "desktop-disksim-ibm18es-64")
