"""SimpleSSD 2.0 built by the study tool, standalone, against a named drive's published
measurements (issue 77's first step; RESULTS.md, "SimpleSSD validation").

With SIMPLESSD naming a SimpleSSD-Standalone checkout (its submodules checked out), the
checkout is built with simplessd-patches/ (`./study simplessd --source`), each drive of
configs/simplessd/ runs the workloads its maker's specification measures behind its own
link, and each simulated figure must be within 15% of the published one: the SATA drive
(4 KiB random read and write at queue depth 1 and 32, 128 KiB sequential read and write
at 32) behind the SATA link of patch 0004; the phone's eMMC (4 KiB random read and write,
512 KiB sequential read and write, all at queue depth 1: eMMC 5.0 has no queue) behind
the HS400 eMMC bus of patch 0006. The checks of the tool's own refusals run without it.
"""

import os
from pathlib import Path

import pytest

from reclaimstudy.artefacts.simplessd import SUBMODULE_FILES, build_simplessd, find_tree, read_series
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES, DRIVE_MEASUREMENTS,
                                                         INTERFACE_EMMC, Workload,
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
EMMC = "samsung-emmc-pro-32gb"
# Where SimpleSSD's model of the drive misses the published figure by more than the
# tolerance (RESULTS.md, "SimpleSSD validation", has the numbers). Strict: a change that
# brings one within 15% fails here until it is moved out of this list.
KNOWN_MISSES = {
    "4 KiB random write, QD1": "SimpleSSD acknowledges a write once its DRAM cache holds "
                               "it: 12 us with the SATA link, against 28 us published",
    "4 KiB random read, QD32": "SimpleSSD's 24 dies serve 131,000 IOPS with no host "
                               "overhead, 31% above the drive's 100,000",
    "4 KiB random write, QD32": "SimpleSSD evicts its write cache to flash at 33,000 IOPS, "
                                "37% of the drive's 90,000",
}
# The phone's eMMC's misses (RESULTS.md, "SimpleSSD as a phone's eMMC"), strict likewise.
EMMC_KNOWN_MISSES = {
    "4 KiB random read, QD1": "SimpleSSD reads the page in 92 us (the sample's MLC read "
                              "times and the whole 16 KiB page over the channel) and the "
                              "bus adds 12: 110 us, against the 143 us of 7,000 IOPS",
    "4 KiB random write, QD1": "with no DRAM and a 256 KiB buffer, most writes wait for an "
                               "eviction to flash (940 us a program): 391 us, against "
                               "the 143 us of 7,000 IOPS",
    "512 KiB sequential write, QD1": "at queue depth 1 the 256 KiB buffer keeps about two of "
                                     "the four dies programming: 58 MB/s, against 90",
}


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
    with pytest.raises(StudyError, match=f"no SimpleSSD drive 'intel-750'.*{DRIVE}.*{EMMC}"):
        drive_config("intel-750")


@pytest.mark.parametrize("workload, interface, message", [
    (Workload("randrw", "4K", 1, "16M"), 2, "pattern 'randrw': use read, write, randread"),
    (Workload("read", "4K", 64, "16M"), 2, "queue depth 64: SATA's NCQ allows 1 to 32"),
    (Workload("read", "4K", 2, "16M"), INTERFACE_EMMC,
     r"queue depth 2: eMMC 5.0 serves one command at a time \(1 only\)"),
    (Workload("read", "4K", 1, "16M"), 3, r"interface 3: use 2 \(SATA\) or 4 \(eMMC\)"),
])
def test_workload_outside_the_interface_is_refused(workload, interface, message):
    with pytest.raises(StudyError, match=message):
        simulation_config(workload, interface)


def test_each_drive_is_measured_behind_its_own_link():
    assert set(DRIVE_INTERFACES) == set(DRIVE_MEASUREMENTS)
    assert "Interface = 2" in simulation_config(Workload("read", "4K", 1, "16M"))
    assert "Interface = 4" in simulation_config(Workload("read", "4K", 1, "16M"),
                                                DRIVE_INTERFACES[EMMC])
    # eMMC 5.0 has no queue: every figure of the phone's device is at depth 1.
    assert {m.workload.depth for m in DRIVE_MEASUREMENTS[EMMC]} == {1}


def test_run_without_statistics_is_an_error(tmp_path):
    with pytest.raises(StudyError, match="no request generator statistics"):
        parse_run("SimpleSSD Standalone v2.0\n", tmp_path / "latency.csv")


# The validation.

@pytest.fixture(scope="module")
def build():
    return build_simplessd(Path(SIMPLESSD))


def _run_drive(build, name: str, directory: Path) -> dict:
    """Each of drive `name`'s measurements' workloads run once behind its link, by name."""
    drive = drive_config(name)
    results = {}
    for number, measurement in enumerate(DRIVE_MEASUREMENTS[name]):
        results[measurement.name] = run_workload(build.binary, drive, measurement.workload,
                                                 directory / f"{number}",
                                                 DRIVE_INTERFACES[name])
    print(f"\n{name} in SimpleSSD {build.manifest['key']} (built in "
          f"{build.manifest['build_seconds']} s):")
    for measurement in DRIVE_MEASUREMENTS[name]:
        result = results[measurement.name]
        print(f"  {measurement.name}: published {measurement.published:.1f} "
              f"{measurement.metric}, simulated {result.metric(measurement.metric):.1f} "
              f"({error(result, measurement):+.1%}); {result.requests} requests, "
              f"{result.host_cpu_s:.1f} s CPU, {result.wall_s:.1f} s wall")
    return results


@pytest.fixture(scope="module")
def runs(build, tmp_path_factory):
    """Each of the SATA drive's measurements' workloads run once, by name."""
    return _run_drive(build, DRIVE, tmp_path_factory.mktemp("simplessd"))


@pytest.fixture(scope="module")
def emmc_runs(build, tmp_path_factory):
    """Each of the phone's eMMC's measurements' workloads run once, by name."""
    return _run_drive(build, EMMC, tmp_path_factory.mktemp("simplessd-emmc"))


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
@pytest.mark.parametrize("measurement", [
    pytest.param(m, id=m.name, marks=[pytest.mark.xfail(reason=KNOWN_MISSES[m.name], strict=True)]
                 if m.name in KNOWN_MISSES else [])
    for m in DRIVE_MEASUREMENTS[DRIVE]])
def test_drive_matches_its_published_measurement(runs, measurement):
    result = runs[measurement.name]
    simulated = result.metric(measurement.metric)
    assert result.requests > 0
    assert abs(error(result, measurement)) <= TOLERANCE, (
        f"{DRIVE}, {measurement.name}: SimpleSSD gives {simulated:.1f} {measurement.metric}, "
        f"{measurement.source} ({error(result, measurement):+.1%}, allowed ±{TOLERANCE:.0%})")


@pytest.mark.source
@needs_simplessd
def test_sequential_bandwidth_is_the_sata_links(runs):
    """Reading 128 KiB at a time, 32 outstanding, is bounded by the 6 Gb/s link's 600 MB/s
    of payload (8b/10b): the link of patch 0004 is what limits it, not the flash."""
    read = runs["128 KiB sequential read, QD32"]
    assert 500 < read.mb_s < 600


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("measurement", [
    pytest.param(m, id=m.name,
                 marks=[pytest.mark.xfail(reason=EMMC_KNOWN_MISSES[m.name], strict=True)]
                 if m.name in EMMC_KNOWN_MISSES else [])
    for m in DRIVE_MEASUREMENTS[EMMC]])
def test_emmc_matches_its_published_measurement(emmc_runs, measurement):
    result = emmc_runs[measurement.name]
    simulated = result.metric(measurement.metric)
    assert result.requests > 0
    assert abs(error(result, measurement)) <= TOLERANCE, (
        f"{EMMC}, {measurement.name}: SimpleSSD gives {simulated:.1f} {measurement.metric}, "
        f"{measurement.source} ({error(result, measurement):+.1%}, allowed ±{TOLERANCE:.0%})")


@pytest.mark.source
@needs_simplessd
def test_emmc_reads_stay_under_the_hs400_bus(emmc_runs):
    """One command at a time on an HS400 bus: a 512-byte block takes 274 clocks of 5 ns,
    so reads cannot pass 512 B / 1.37 us = 373.7 MB/s, and a 4 KiB read spends at least
    its two commands (106 clocks each) and 8 blocks on the bus."""
    read = emmc_runs["512 KiB sequential read, QD1"]
    assert 0 < read.mb_s < 512 / (274 * 5e-9) / 1e6
    assert emmc_runs["4 KiB random read, QD1"].mean_latency_us > (2 * 106 + 8 * 274) * 5e-3
