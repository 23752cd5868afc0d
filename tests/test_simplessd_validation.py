"""SimpleSSD 2.0 built by the study tool, standalone, against a named drive's published
measurements (issue 77's first step; RESULTS.md, "SimpleSSD validation").

With SIMPLESSD naming a SimpleSSD-Standalone checkout (its submodules checked out), the
checkout is built with simplessd-patches/ (`./study simplessd --source`), each drive of
configs/simplessd/ that has published measurements runs the workloads its maker's
specification measures (4 KiB random read and write at queue depth 1 and 32, 128 KiB
sequential read and write at 32) behind its own interface (the Samsung 850 PRO behind
the SATA link of patch 0004, the Samsung 950 PRO behind SimpleSSD's NVMe controller),
and each simulated figure must be within 15% of the published one. The checks of the
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
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES,
                                                         DRIVE_MEASUREMENTS, Workload,
                                                         drive_config, error, parse_run,
                                                         run_workload, simulation_config)
from reclaimstudy.errors import StudyError

SIMPLESSD = os.environ.get("SIMPLESSD")
needs_simplessd = pytest.mark.skipif(
    not SIMPLESSD, reason="SIMPLESSD is not set: name a SimpleSSD-Standalone checkout "
                          "(github.com/SimpleSSD/SimpleSSD-Standalone, submodules checked out) "
                          "to build SimpleSSD and validate its drive")
TOLERANCE = 0.15
DRIVE = "samsung-850-pro-256gb"
NVME_DRIVE = "samsung-950-pro-256gb"
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
}
VALIDATED = sorted(DRIVE_MEASUREMENTS)


# The tool's refusals: no simulator needed.

def test_series_names_its_patches_and_version():
    series = read_series()
    assert series.version == "2.0.13"
    assert [p.name[:4] for p in series.patches] == ["0001", "0002", "0003", "0004", "0005"]


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
                                         f"{NVME_DRIVE}"):
        drive_config("intel-750")


def test_every_validated_drive_has_its_description_and_names_its_interface():
    assert VALIDATED == [DRIVE, NVME_DRIVE]
    assert set(DRIVE_INTERFACES) == set(DRIVE_MEASUREMENTS)
    assert DRIVE_INTERFACES == {DRIVE: "sata", NVME_DRIVE: "nvme"}
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


@pytest.mark.parametrize("workload, interface, message", [
    (Workload("randrw", "4K", 1, "16M"), "sata", "pattern 'randrw': use read, write, randread"),
    (Workload("read", "4K", 64, "16M"), "sata", "queue depth 64: SATA's NCQ allows 1 to 32"),
    (Workload("read", "4K", 1024, "16M"), "nvme",
     r"queue depth 1024: the standalone driver's NVMe I/O queue \(1,024 entries\) allows 1 "
     r"to 1023"),
    (Workload("read", "4K", 1, "16M"), "ufs", "interface 'ufs': use sata or nvme"),
])
def test_workload_outside_the_interface_is_refused(workload, interface, message):
    with pytest.raises(StudyError, match=message):
        simulation_config(workload, interface)


def test_nvme_allows_the_queues_sata_does_not():
    assert "iodepth = 128\n" in simulation_config(Workload("randread", "4K", 128, "64M"), "nvme")


def test_run_without_statistics_is_an_error(tmp_path):
    with pytest.raises(StudyError, match="no request generator statistics"):
        parse_run("SimpleSSD Standalone v2.0\n", tmp_path / "latency.csv")


# The validation.

@pytest.fixture(scope="module")
def build():
    return build_simplessd(Path(SIMPLESSD))


@pytest.fixture(scope="module")
def runs(build, tmp_path_factory):
    """A function giving each measurement's workload of a drive, run once on the drive
    through its interface (the first time it is asked for), by name."""
    done: dict[str, dict] = {}

    def of(name: str) -> dict:
        if name in done:
            return done[name]
        drive, interface = drive_config(name), DRIVE_INTERFACES[name]
        directory = tmp_path_factory.mktemp(name)
        results = {}
        for number, measurement in enumerate(DRIVE_MEASUREMENTS[name]):
            results[measurement.name] = run_workload(build.binary, drive, measurement.workload,
                                                     directory / f"{number}", interface)
        print(f"\n{name} ({interface}) in SimpleSSD {build.manifest['key']} (built in "
              f"{build.manifest['build_seconds']} s):")
        for measurement in DRIVE_MEASUREMENTS[name]:
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


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("drive, measurement", [
    pytest.param(name, m, id=f"{name}: {m.name}",
                 marks=[pytest.mark.xfail(reason=KNOWN_MISSES[name][m.name], strict=True)]
                 if m.name in KNOWN_MISSES[name] else [])
    for name in VALIDATED for m in DRIVE_MEASUREMENTS[name]])
def test_drive_matches_its_published_measurement(runs, drive, measurement):
    result = runs(drive)[measurement.name]
    simulated = result.metric(measurement.metric)
    assert result.requests > 0
    assert abs(error(result, measurement)) <= TOLERANCE, (
        f"{drive}, {measurement.name}: SimpleSSD gives {simulated:.1f} {measurement.metric}, "
        f"{measurement.source} ({error(result, measurement):+.1%}, allowed ±{TOLERANCE:.0%})")


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
