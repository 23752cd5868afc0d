"""SimpleSSD 2.0 built by the study tool, standalone, against a named drive's published
measurements (issue 77's first step; RESULTS.md, "SimpleSSD validation").

With SIMPLESSD naming a SimpleSSD-Standalone checkout (its submodules checked out), the
checkout is built with simplessd-patches/ (`./study simplessd --source`), the drive of
configs/simplessd/ runs the workloads its maker's specification measures (4 KiB random
read and write at queue depth 1 and 32, 128 KiB sequential read and write at 32) behind
the SATA link of patch 0004, and each simulated figure must be within 15% of the
published one. The checks of the tool's own refusals run without it.
"""

import os
from pathlib import Path

import pytest

from reclaimstudy.artefacts.simplessd import SUBMODULE_FILES, build_simplessd, find_tree, read_series
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_MEASUREMENTS, Workload,
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
    with pytest.raises(StudyError, match=f"no SimpleSSD drive 'intel-750'.*{DRIVE}"):
        drive_config("intel-750")


@pytest.mark.parametrize("workload, message", [
    (Workload("randrw", "4K", 1, "16M"), "pattern 'randrw': use read, write, randread"),
    (Workload("read", "4K", 64, "16M"), "queue depth 64: SATA's NCQ allows 1 to 32"),
])
def test_workload_outside_the_interface_is_refused(workload, message):
    with pytest.raises(StudyError, match=message):
        simulation_config(workload)


def test_run_without_statistics_is_an_error(tmp_path):
    with pytest.raises(StudyError, match="no request generator statistics"):
        parse_run("SimpleSSD Standalone v2.0\n", tmp_path / "latency.csv")


# The validation.

@pytest.fixture(scope="module")
def build():
    return build_simplessd(Path(SIMPLESSD))


@pytest.fixture(scope="module")
def runs(build, tmp_path_factory):
    """Each measurement's workload run once on the drive, by name."""
    drive = drive_config(DRIVE)
    directory = tmp_path_factory.mktemp("simplessd")
    results = {}
    for number, measurement in enumerate(DRIVE_MEASUREMENTS[DRIVE]):
        results[measurement.name] = run_workload(build.binary, drive, measurement.workload,
                                                 directory / f"{number}")
    print(f"\n{DRIVE} in SimpleSSD {build.manifest['key']} (built in "
          f"{build.manifest['build_seconds']} s):")
    for measurement in DRIVE_MEASUREMENTS[DRIVE]:
        result = results[measurement.name]
        print(f"  {measurement.name}: published {measurement.published:.1f} "
              f"{measurement.metric}, simulated {result.metric(measurement.metric):.1f} "
              f"({error(result, measurement):+.1%}); {result.requests} requests, "
              f"{result.host_cpu_s:.1f} s CPU, {result.wall_s:.1f} s wall")
    return results


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
