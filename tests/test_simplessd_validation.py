"""SimpleSSD 2.0 built by the study tool, standalone, against a named drive's published
measurements (issue 77's first step; RESULTS.md, "SimpleSSD validation").

With SIMPLESSD naming a SimpleSSD-Standalone checkout (its submodules checked out), the
checkout is built with simplessd-patches/ (`./study simplessd --source`), each drive of
configs/simplessd/ that has published measurements runs the workloads its maker's
specification measures (4 KiB random read and write at queue depth 1 and 32, 128 KiB
sequential read and write at 32) behind its own interface (the Samsung 850 PRO behind
the SATA link of patch 0004, the Samsung 950 PRO behind SimpleSSD's NVMe controller;
the phone's eMMC behind the HS400 eMMC bus of patch 0006, 4 KiB random and 512 KiB
sequential reads and writes, all at queue depth 1: eMMC 5.0 has no queue), and each
simulated figure must be within 15% of the published one. The checks of the
tool's own refusals run without it.

Calibrated on two figures, validated on four (RESULTS.md, the section of that name; the
plan was fixed and committed before any calibration run). Each drive's two flash timings
that SimpleSSD's sample supplies, not the drive's maker, are fitted, and nothing else:
tR, the mean page read time (LSBRead and MSBRead together, the sample's 40:65 split),
within 25-75 us, on the 4 KiB random read at QD1; then tPROG, the mean page program time
(LSBWrite and MSBWrite together, the sample's 500:1,300 split), within 200-1,350 us, on
the 128 KiB sequential write at QD32. The ranges are AnandTech's table of NAND latencies
(Samsung SSD 840 review, 2012): an MLC page between SLC's fastest and TLC's slowest read
(25, 75 us) and program (200, 1,350 us). The fit is
reclaimstudy/artefacts/simplessd_calibration.py (bisection on a grid, one SimpleSSD run
a trial; `python -m reclaimstudy.artefacts.simplessd_calibration --source DIR` repeats
it); its numbers are configs/simplessd/*-calibrated.cfg, the uncalibrated files
unchanged. The calibrated drives must reproduce their two calibration figures within 2%,
and are validated on the four held out (QD1 random write, QD32 random read and write,
sequential read), each within 15% or a strict expected failure with its reason.
"""

import os
from pathlib import Path

import pytest

from reclaimstudy.artefacts.simplessd import SUBMODULE_FILES, build_simplessd, find_tree, read_series
from reclaimstudy.artefacts.simplessd_calibration import (CALIBRATED, CALIBRATION_TOLERANCE,
                                                          PLAN, TIMING_KEYS, TPROG, TR, US,
                                                          Step, bisect, calibration_figures,
                                                          held_out, with_settings)
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES,
                                                         DRIVE_MEASUREMENTS, Workload,
                                                         drive_config, error, parse_run,
                                                         run_workload, simulation_config)
from reclaimstudy.config.systems import simplessd_sections
from reclaimstudy.errors import StudyError

SIMPLESSD = os.environ.get("SIMPLESSD")
needs_simplessd = pytest.mark.skipif(
    not SIMPLESSD, reason="SIMPLESSD is not set: name a SimpleSSD-Standalone checkout "
                          "(github.com/SimpleSSD/SimpleSSD-Standalone, submodules checked out) "
                          "to build SimpleSSD and validate its drive")
TOLERANCE = 0.15
DRIVE = "samsung-850-pro-256gb"
NVME_DRIVE = "samsung-950-pro-256gb"
EMMC = "samsung-emmc-pro-32gb"
# Where SimpleSSD's model of a drive misses the published figure by more than the
# tolerance (RESULTS.md, "SimpleSSD validation" and "SimpleSSD validation: the Samsung
# 950 PRO", has the numbers). Strict: a change that brings one within 15% fails here
# until it is moved out of this list.
KNOWN_MISSES = {
    DRIVE: {
        "4 KiB random write, QD1": "SimpleSSD acknowledges a write once its DRAM cache holds "
                                   "it: 12 us with the SATA link, against 28 us published",
        "4 KiB random read, QD32": "SimpleSSD's 24 dies serve 131,000 IOPS with no host "
                                   "overhead, 31% above the drive's 100,000",
        "4 KiB random write, QD32": "SimpleSSD evicts its write cache to flash at 33,000 "
                                    "IOPS, 37% of the drive's 90,000",
    },
    NVME_DRIVE: {
        "4 KiB random read, QD1": "a 4 KiB read moves its whole 16 KiB page over the 400 MT/s "
                                  "channel (39 us): 111 us against 91 us published",
        "4 KiB random write, QD1": "SimpleSSD acknowledges a write from its DRAM cache in "
                                   "19.7 us through its NVMe controller, 15.2% under the "
                                   "23.3 us published",
        "4 KiB random read, QD32": "SimpleSSD's 500 MHz firmware model serves at most "
                                   "93,000 IOPS (the same at QD128), a third of the "
                                   "drive's 270,000",
        "4 KiB random write, QD32": "SimpleSSD evicts its write cache to 16 dies at 22,000 "
                                    "IOPS, 26% of the drive's 85,000",
        "128 KiB sequential read, QD32": "the PCIe 3.0 x4 link's rate in SimpleSSD's model "
                                         "(3,478 MB/s), not the drive's 2,200",
        "128 KiB sequential write, QD32": "SimpleSSD's sample MLC program times give 16 dies "
                                          "422 MB/s, against the drive's 900",
    },
    EMMC: {
        "4 KiB random read, QD1": "SimpleSSD reads the page in 92 us (the sample's MLC read "
                                  "times and the whole 16 KiB page over the channel) and the "
                                  "bus adds 12: 110 us, against the 143 us of 7,000 IOPS",
        "4 KiB random write, QD1": "with no DRAM and a 256 KiB buffer, most writes wait for "
                                   "an eviction to flash (940 us a program): 391 us, against "
                                   "the 143 us of 7,000 IOPS",
        "512 KiB sequential write, QD1": "at queue depth 1 the 256 KiB buffer keeps about two "
                                         "of the four dies programming: 58 MB/s, against 90",
    },
}
VALIDATED = sorted(DRIVE_MEASUREMENTS)
# The calibrated descriptions (configs/simplessd/*-calibrated.cfg) and the held-out figures
# they miss by more than the tolerance (RESULTS.md, "Calibrated on two figures, validated
# on four"). Strict, as above.
CALIBRATED_DRIVES = sorted(CALIBRATED)
CALIBRATED_MISSES: dict[str, dict[str, str]] = {
    DRIVE + "-calibrated": {
        "4 KiB random write, QD1": "acknowledged from the DRAM cache, 12.4 us with the SATA "
                                   "link, as uncalibrated: no flash timing enters it; "
                                   "27.8 us published",
        "4 KiB random read, QD32": "24 dies at the fitted tR (47.5 us) serve 127,778 IOPS "
                                   "with no host overhead, 27.8% above the drive's 100,000 "
                                   "(31.0% uncalibrated)",
        "4 KiB random write, QD32": "the fitted tPROG (1,051 us, slowed so that sequential "
                                    "writes fall to 520 MB/s) evicts the cache slower "
                                    "still: 28,503 IOPS, 32% of the drive's 90,000",
    },
    NVME_DRIVE + "-calibrated": {
        "4 KiB random write, QD1": "acknowledged from the DRAM cache through the NVMe "
                                   "controller, 19.4 us against 23.3 published (19.7 "
                                   "uncalibrated): no flash timing enters it",
        "4 KiB random read, QD32": "the firmware model's saturation, 93,057 IOPS with the "
                                   "fitted tR (92,612 uncalibrated), a third of the "
                                   "drive's 270,000: not the flash's",
        "4 KiB random write, QD32": "with the fitted tPROG (390 us) the cache evicts at "
                                    "45,706 IOPS, twice the uncalibrated 22,359 and 54% "
                                    "of the drive's 85,000",
        "128 KiB sequential read, QD32": "the PCIe 3.0 x4 link's rate in SimpleSSD's model "
                                         "(3,475 MB/s) whatever the flash timings, not the "
                                         "drive's 2,200",
    },
}
HELD_OUT = ["4 KiB random write, QD1", "4 KiB random read, QD32", "4 KiB random write, QD32",
            "128 KiB sequential read, QD32"]


# The tool's refusals: no simulator needed.

def test_series_names_its_patches_and_version():
    series = read_series()
    assert series.version == "2.0.13"
    assert [p.name[:4] for p in series.patches] == ["0001", "0002", "0003", "0004", "0005",
                                                    "0006"]


def test_source_that_is_not_a_directory_is_refused(tmp_path):
    with pytest.raises(StudyError, match="no such directory"):
        find_tree(tmp_path / "absent")


def test_source_that_is_not_a_checkout_is_refused(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("")
    with pytest.raises(StudyError, match=r"not a SimpleSSD-Standalone checkout \(no sim/main.cc"):
        find_tree(tmp_path)


def test_checkout_without_its_submodules_is_refused(tmp_path):
    for name in ("CMakeLists.txt", "sim/main.cc", "sil/none/none.cc", "bil/entry.cc"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    with pytest.raises(StudyError, match="submodule simplessd/ is not checked out.*"
                                         "git submodule update --init --recursive"):
        find_tree(tmp_path)
    marker = tmp_path / SUBMODULE_FILES["simplessd"]
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    with pytest.raises(StudyError, match="submodule simplessd/lib/mcpat/ is not checked out"):
        find_tree(tmp_path)


def test_unknown_drive_is_refused_naming_the_drives():
    with pytest.raises(StudyError, match=f"no SimpleSSD drive 'intel-750'.*{DRIVE}.*"
                                         f"{NVME_DRIVE}.*{EMMC}"):
        drive_config("intel-750")


def test_every_validated_drive_has_its_description_and_names_its_interface():
    assert VALIDATED == [DRIVE, NVME_DRIVE, EMMC]
    assert set(DRIVE_INTERFACES) == set(DRIVE_MEASUREMENTS)
    assert DRIVE_INTERFACES == {DRIVE: "sata", NVME_DRIVE: "nvme", EMMC: "emmc"}
    # eMMC 5.0 has no queue: every figure of the phone's device is at depth 1.
    assert {m.workload.depth for m in DRIVE_MEASUREMENTS[EMMC]} == {1}
    for name in VALIDATED:
        assert drive_config(name).is_file()
        assert set(KNOWN_MISSES[name]) <= {m.name for m in DRIVE_MEASUREMENTS[name]}


def test_the_interface_is_the_drivers_and_the_sata_runs_are_as_before():
    """A SATA run's configuration is the one the 850 PRO's published figures were made
    with (Interface = 2); an NVMe run differs only in the interface."""
    workload = Workload("randread", "4K", 32, "64M")
    sata, nvme = simulation_config(workload, "sata"), simulation_config(workload, "nvme")
    assert "\nInterface = 2\n" in sata and "\nInterface = 1\n" in nvme
    assert sata.replace("Interface = 2", "Interface = 1") == nvme
    assert "SubmissionLatency = 0\nCompletionLatency = 0\n" in sata
    assert "iodepth = 32\n" in sata and "randseed = 77\n" in sata
    assert "\nInterface = 4\n" in simulation_config(Workload("read", "4K", 1, "16M"), "emmc")


@pytest.mark.parametrize("workload, interface, message", [
    (Workload("randrw", "4K", 1, "16M"), "sata", "pattern 'randrw': use read, write, randread"),
    (Workload("read", "4K", 64, "16M"), "sata", "queue depth 64: SATA's NCQ allows 1 to 32"),
    (Workload("read", "4K", 1024, "16M"), "nvme",
     r"queue depth 1024: the standalone driver's NVMe I/O queue \(1,024 entries\) allows 1 "
     r"to 1023"),
    (Workload("read", "4K", 2, "16M"), "emmc",
     r"queue depth 2: eMMC 5.0 serves one command at a time \(1 only\)"),
    (Workload("read", "4K", 1, "16M"), "ufs", "interface 'ufs': use sata, nvme or emmc"),
])
def test_workload_outside_the_interface_is_refused(workload, interface, message):
    with pytest.raises(StudyError, match=message):
        simulation_config(workload, interface)


def test_nvme_allows_the_queues_sata_does_not():
    assert "iodepth = 128\n" in simulation_config(Workload("randread", "4K", 128, "64M"), "nvme")


def test_run_without_statistics_is_an_error(tmp_path):
    with pytest.raises(StudyError, match="no request generator statistics"):
        parse_run("SimpleSSD Standalone v2.0\n", tmp_path / "latency.csv")


# The calibration's plan and its files: no simulator needed.

def test_the_plan_fits_two_unpublished_timings_on_two_figures_and_holds_out_four():
    # The phone's eMMC is not calibrated: its misses are its buffer's and queue's.
    assert sorted(PLAN) == [DRIVE, NVME_DRIVE]
    assert CALIBRATED == {DRIVE + "-calibrated": DRIVE, NVME_DRIVE + "-calibrated": NVME_DRIVE}
    for drive, steps in PLAN.items():
        assert [(s.parameter.name, s.figure) for s in steps] == [
            ("tR", "4 KiB random read, QD1"), ("tPROG", "128 KiB sequential write, QD32")]
        fitted = [m.name for m in calibration_figures(drive)]
        assert [m.name for m in held_out(drive)] == HELD_OUT
        assert sorted(fitted + HELD_OUT) == sorted(m.name for m in DRIVE_MEASUREMENTS[drive])
        # What is fitted is what the drive's maker does not publish: the description takes
        # it from SimpleSSD's sample and says so, in the comment above the timings.
        lines = drive_config(drive).read_text().splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("LSBRead ="))
        comment = " ".join(lines[first - 5:first])
        assert "not published for this die" in comment and "[sample]" in comment


def test_a_parameter_is_its_mean_in_the_samples_split():
    """tR and tPROG are each one number, the mean over the LSB and MSB page: at the
    sample's means (52.5 us, 900 us) they give the sample's four times exactly."""
    for drive in PLAN:
        pal = simplessd_sections(drive_config(drive))["pal"]
        assert TR.settings(52_500_000) == {k: int(pal[k]) for k in TR.keys}
        assert TPROG.settings(900_000_000) == {k: int(pal[k]) for k in TPROG.keys}
    assert (TR.low, TR.high, TR.step, TR.points) == (25 * US, 75 * US, US // 10, 501)
    assert (TPROG.low, TPROG.high, TPROG.step, TPROG.points) == (200 * US, 1350 * US, US, 1151)
    assert TR.settings(47_500_000) == {"LSBRead": 36_190_476, "MSBRead": 58_809_524}


def test_bisection_finds_the_figure_on_the_grid_and_says_when_the_range_cannot():
    seen = []
    read = Step(TR, "4 KiB random read, QD1")
    fit = bisect(read, 90.9, "latency_us", lambda mean: 58.2 + mean / US, seen.append)
    assert fit.reached and fit.best.mean == 32_700_000 and abs(fit.best.error) < 1e-9
    assert [t.mean for t in seen[:3]] == [25 * US, 75 * US, 50 * US]  # the bounds, then halves
    assert list(fit.trials) == seen and len(seen) <= 2 + 9
    write = Step(TPROG, "128 KiB sequential write, QD32")
    fit = bisect(write, 5_000, "mb_s", lambda mean: 1e9 / mean)  # 5,000 MB/s: beyond 200 us
    assert not fit.reached and fit.best.mean == 200 * US and len(fit.trials) == 2
    assert "NOT REACHED within 200-1,350 us: the nearer bound kept" in fit.line()


def test_with_settings_changes_the_keys_it_is_given_and_nothing_else():
    text = drive_config(DRIVE).read_text()
    changed = with_settings(text, {"LSBRead": 1, "MSBRead": 2})
    assert changed.count("\n") == text.count("\n")
    assert [a for a, b in zip(text.splitlines(), changed.splitlines()) if a != b] == \
        ["LSBRead = 40000000", "MSBRead = 65000000"]
    with pytest.raises(StudyError, match="0 lines 'Nowhere = ...': expected one"):
        with_settings(text, {"Nowhere": 1})


@pytest.mark.parametrize("calibrated", CALIBRATED_DRIVES)
def test_a_calibrated_file_is_its_drive_with_two_fitted_timings_tagged(calibrated):
    """Every key of the calibrated description is the uncalibrated one's but the four
    fitted times; each pair is its parameter's mean in the sample's split, on the grid,
    within the range, under a `[calibrated: on FIGURE, range ...]` tag."""
    drive = CALIBRATED[calibrated]
    path = drive_config(calibrated)
    base, fitted = simplessd_sections(drive_config(drive)), simplessd_sections(path)
    fitted_keys = set(TR.keys + TPROG.keys)
    assert {s: {k: v for k, v in keys.items() if not (s == "pal" and k in fitted_keys)}
            for s, keys in fitted.items()} == \
        {s: {k: v for k, v in keys.items() if not (s == "pal" and k in fitted_keys)}
         for s, keys in base.items()}
    text = path.read_text()
    lines = text.splitlines()
    assert [line.split(" = ")[0] for line in lines if line.split(" = ")[0] in TIMING_KEYS] == \
        list(TIMING_KEYS)
    for step in PLAN[drive]:
        p = step.parameter
        values = [int(fitted["pal"][k]) for k in p.keys]
        mean = sum(values) // 2
        assert p.settings(mean) == dict(zip(p.keys, values))
        assert p.low <= mean <= p.high and (mean - p.low) % p.step == 0
        first = lines.index(f"{p.keys[0]} = {values[0]}")
        start = max(i for i in range(first) if lines[i].startswith(f"# {p.name}, the "))
        tag = " ".join(line.lstrip("# ") for line in lines[start:first])
        assert f"{p.name}, the {p.what}, {mean / US:,g} us [calibrated: on {step.figure} " in tag
        assert f"range {p.range_text()} (AnandTech's table" in tag
    assert text.startswith(f"# CALIBRATED: {drive}.cfg ")


# The validation.

@pytest.fixture(scope="module")
def build():
    return build_simplessd(Path(SIMPLESSD))


@pytest.fixture(scope="module")
def run_directories() -> dict[tuple[str, str], Path]:
    """Where each run of `runs` was made, by (drive, measurement): its stdout.txt holds
    SimpleSSD's statistics."""
    return {}


@pytest.fixture(scope="module")
def runs(build, tmp_path_factory, run_directories):
    """A function giving each measurement's workload of a drive, run once on the drive
    through its interface (the first time it is asked for), by name."""
    done: dict[str, dict] = {}

    def of(name: str) -> dict:
        if name in done:
            return done[name]
        measured = CALIBRATED.get(name, name)  # a calibrated drive: its drive's figures
        drive, interface = drive_config(name), DRIVE_INTERFACES[measured]
        directory = tmp_path_factory.mktemp(name)
        results = {}
        for number, measurement in enumerate(DRIVE_MEASUREMENTS[measured]):
            results[measurement.name] = run_workload(build.binary, drive, measurement.workload,
                                                     directory / f"{number}", interface)
            run_directories[(name, measurement.name)] = directory / f"{number}"
        print(f"\n{name} ({interface}) in SimpleSSD {build.manifest['key']} (built in "
              f"{build.manifest['build_seconds']} s):")
        for measurement in DRIVE_MEASUREMENTS[measured]:
            result = results[measurement.name]
            print(f"  {measurement.name}: published {measurement.published:.1f} "
                  f"{measurement.metric}, simulated {result.metric(measurement.metric):.1f} "
                  f"({error(result, measurement):+.1%}); {result.requests} requests, "
                  f"{result.host_cpu_s:.1f} s CPU, {result.wall_s:.1f} s wall")
        done[name] = results
        return results
    return of


@pytest.mark.source
@needs_simplessd
def test_build_is_cached_and_records_its_inputs(build):
    manifest = build.manifest
    assert build.binary.is_file()
    assert manifest["simplessd_version"] == "2.0.13"
    assert [p["name"] for p in manifest["patches"]] == [p.name for p in read_series().patches]
    assert build_simplessd(Path(SIMPLESSD)).directory == build.directory


def figures(measurements: dict, misses: dict) -> list:
    """(drive, measurement) parameters, each a strict xfail where `misses` gives it a
    reason (the drive's figures SimpleSSD misses by more than the tolerance)."""
    return [pytest.param(name, m, id=f"{name}: {m.name}",
                         marks=[pytest.mark.xfail(reason=misses[name][m.name], strict=True)]
                         if m.name in misses.get(name, {}) else [])
            for name, figures_of in measurements.items() for m in figures_of]


def assert_within(drive: str, result, measurement, tolerance: float, against: str):
    """SimpleSSD's figure within `tolerance` of the published one (`against` says what
    that is), the message giving both."""
    off = error(result, measurement)
    assert abs(off) <= tolerance, (
        f"{drive}, {measurement.name}: SimpleSSD gives {result.metric(measurement.metric):.1f} "
        f"{measurement.metric}, {against} ({off:+.2%}, allowed ±{tolerance:.0%})")


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("drive, measurement", figures(
    {name: DRIVE_MEASUREMENTS[name] for name in VALIDATED}, KNOWN_MISSES))
def test_drive_matches_its_published_measurement(runs, drive, measurement):
    result = runs(drive)[measurement.name]
    assert result.requests > 0
    assert_within(drive, result, measurement, TOLERANCE, measurement.source)


@pytest.mark.source
@needs_simplessd
def test_sequential_bandwidth_is_the_sata_links(runs):
    """Reading 128 KiB at a time, 32 outstanding, is bounded by the 6 Gb/s link's 600 MB/s
    of payload (8b/10b): the link of patch 0004 is what limits it, not the flash."""
    read = runs(DRIVE)["128 KiB sequential read, QD32"]
    assert 500 < read.mb_s < 600


@pytest.mark.source
@needs_simplessd
def test_nvme_sequential_read_is_the_pcie_links(runs):
    """Through NVMe the same reads are bounded by PCI Express 3.0 x4 as SimpleSSD times
    it (PCIExpress::calculateDelay: 3,513 MB/s of payload in 4 KiB packets), above the
    950 PRO's 2,200 MB/s: the link, not the drive's flash or controller, is what limits
    the model."""
    read = runs(NVME_DRIVE)["128 KiB sequential read, QD32"]
    assert 3_300 < read.mb_s < 3_513


@pytest.mark.source
@needs_simplessd
def test_emmc_reads_stay_under_the_hs400_bus(runs):
    """One command at a time on an HS400 bus: a 512-byte block takes 274 clocks of 5 ns,
    so reads cannot pass 512 B / 1.37 us = 373.7 MB/s, and a 4 KiB read spends at least
    its two commands (106 clocks each) and 8 blocks on the bus."""
    read = runs(EMMC)["512 KiB sequential read, QD1"]
    assert 0 < read.mb_s < 512 / (274 * 5e-9) / 1e6
    assert runs(EMMC)["4 KiB random read, QD1"].mean_latency_us > (2 * 106 + 8 * 274) * 5e-3


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("calibrated, measurement", figures(
    {name: calibration_figures(CALIBRATED[name]) for name in CALIBRATED_DRIVES}, {}))
def test_calibrated_drive_reproduces_its_calibration_figures(runs, calibrated, measurement):
    assert_within(calibrated, runs(calibrated)[measurement.name], measurement,
                  CALIBRATION_TOLERANCE, f"fitted to {measurement.published:.1f}")


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("calibrated, measurement", figures(
    {name: held_out(CALIBRATED[name]) for name in CALIBRATED_DRIVES}, CALIBRATED_MISSES))
def test_calibrated_drive_matches_its_held_out_figures(runs, calibrated, measurement):
    assert_within(f"{calibrated} (held out)", runs(calibrated)[measurement.name], measurement,
                  TOLERANCE, measurement.source)


# What limits the held-out misses (RESULTS.md, "Structural parameters against the held-out
# misses"): SimpleSSD's own statistics of the validation's runs.

def simplessd_stat(run: Path, name: str) -> float:
    """One statistic of a run, from the table SimpleSSD prints at its end."""
    for line in (run / "stdout.txt").read_text().splitlines():
        fields = line.split()
        if fields and fields[0] == name:
            return float(fields[1])
    raise AssertionError(f"{run}: no statistic {name}")


def instructions(run: Path, core: str) -> float:
    return sum(simplessd_stat(run, f"cpu.{core}.insts.{kind}")
               for kind in ("branch", "load", "store", "arithmetic", "fp", "others"))


@pytest.mark.source
@needs_simplessd
def test_nvme_random_reads_at_depth_are_the_host_cores(runs, run_directories):
    """The calibrated 950 PRO's QD32 random read (93,000 IOPS, a third of the drive's
    270,000) is its one host-interface core's rate: that core is busy for the whole run
    while the cache's and the FTL's are mostly idle, and the IOPS are its clock over the
    instructions SimpleSSD's cost table (cpu/cpu.cc) charges a command, about 5,400 (the
    NVMe controller's, its PRP lists', the subsystem's, namespace's and HIL's functions;
    at this depth its 1 us polling loop adds about 10), so no flash timing or channel
    rate moves it. The UBX's three cores are published, one of them for the host."""
    drive = NVME_DRIVE + "-calibrated"
    figure = "4 KiB random read, QD32"
    result, run = runs(drive)[figure], run_directories[(drive, figure)]
    span = result.simulated_s * 1e12
    assert simplessd_stat(run, "cpu.hil0.busy") >= 0.95 * span
    assert simplessd_stat(run, "cpu.icl0.busy") <= 0.3 * span
    assert simplessd_stat(run, "cpu.ftl0.busy") <= 0.3 * span
    per_command = instructions(run, "hil0") / result.requests
    assert 4_500 < per_command < 6_500
    clock = int(simplessd_sections(drive_config(drive))["cpu"]["ClockSpeed"])
    assert result.iops * per_command / clock == pytest.approx(1, abs=0.02)


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("calibrated", CALIBRATED_DRIVES)
def test_a_4kib_random_write_programs_a_whole_logical_page(runs, run_directories, calibrated):
    """SimpleSSD maps and caches a page of each plane of a die together (its logical page,
    PageSize x Plane: 32 KiB), and its cache writes each dirty line to flash alone: the QD32
    random write's 64 MiB of 4 KiB writes cost programs of over four times as many bytes,
    and those programs fill most of the run (programs / dies x the mean program time),
    where a drive mapping 4 KiB would fill each program with eight writes."""
    figure = "4 KiB random write, QD32"
    result, run = runs(calibrated)[figure], run_directories[(calibrated, figure)]
    pal = simplessd_sections(drive_config(calibrated))["pal"]
    logical_page = int(pal["PageSize"]) * int(pal["Plane"])
    programs = simplessd_stat(run, "pal.program.count")
    assert programs * logical_page >= 4 * result.bytes
    dies = int(pal["Channel"]) * int(pal["Package"]) * int(pal["Die"])
    program_ps = (int(pal["LSBWrite"]) + int(pal["MSBWrite"])) / 2
    assert programs / dies * program_ps >= 0.75 * result.simulated_s * 1e12
