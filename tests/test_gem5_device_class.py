"""The guest sees each drive's class: gem5-patches/0001 reports a modelled drive's
rotation rate in ATA IDENTIFY word 217 (a hard disk its rpm, flash 1), and Linux marks
a disk non-rotational, and swap on it solid state (SWP_SOLIDSTATE), only for 1. Before
disk-timing-2 the word was 0 on every profile, so the flash profiles were rotating disks
to the guest.

The profiles' side is checked here on the host; the guest's needs GEM5 set to a gem5
built by `./study gem5 --source DIR`, and is skipped, saying so, otherwise (each profile
boots once)."""

import re
from pathlib import Path

import pytest

from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.guest import DEVICES
from reclaimstudy.campaigns import runs
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import (DisksimTiming, FlashTiming, HddTiming,
                                         SimplessdTiming, get_system, system_names)
from reclaimstudy.config.workloads import get_workload
from tests.gem5_drives import needs_gem5_for


def test_every_profile_says_what_its_drive_reports_and_how_the_guest_sees_it():
    for name in system_names():
        disk = get_system(name).disk
        if isinstance(disk.timing, (HddTiming, DisksimTiming)):
            assert (disk.rotation_rate, disk.rotational) == (disk.timing.rpm, True), name
        elif isinstance(disk.timing, (FlashTiming, SimplessdTiming)):
            assert (disk.rotation_rate, disk.rotational) == (1, False), name
        else:  # gem5's own delay per descriptor: word 217 stays 0, "not reported"
            assert disk.timing is None and disk.delay_us is not None, name
            assert (disk.rotation_rate, disk.rotational) == (0, True), name
    rates = {name: get_system(name).disk.rotation_rate for name in (
        "desktop-hdd-64", "desktop-hdd2001-64", "desktop-ssd-64", "desktop-ssd-96",
        "mobile-lpddr", "ci-tiny", "desktop-ssd-128-stock-disk", "desktop-disksim-ibm18es-64",
        "desktop-sata-ssd-64")}
    assert rates == {"desktop-hdd-64": 7200, "desktop-hdd2001-64": 7200, "desktop-ssd-64": 1,
                     "desktop-ssd-96": 1, "mobile-lpddr": 1, "ci-tiny": 0,
                     "desktop-ssd-128-stock-disk": 0, "desktop-disksim-ibm18es-64": 7200,
                     "desktop-sata-ssd-64": 1}


def test_the_gem5_params_of_every_profile_carry_what_word_217_is_made_from():
    """reclaim_fs.py builds an HddTiming (whose rpm the drive reports) or a FlashTiming
    (which reports 1) from `disk_timing`, or no model (0) without it."""
    kernel = type("K", (), {"vmlinux": Path("/k")})()
    image = type("I", (), {"disks": lambda self, swap: {"device": [Path("/r"), Path("/s")],
                                                       "partition": [Path("/d")],
                                                       "zram": [Path("/r")]}[swap]})()
    for name in system_names():
        system = get_system(name)
        params = gem5_backend.gem5_params("run", system, kernel, image, Path("/c"), "timing",
                                          "a b", job="J")
        timing = params["disk_timing"]
        if timing is None:
            assert system.disk.rotation_rate == 0, name
        elif timing["model"] in ("hdd", "disksim"):  # DiskSim: gem5 checks its model's rpm
            assert timing["rpm"] == system.disk.rotation_rate > 1, name
        else:  # SimpleSSDTiming reports 1 whatever its configuration
            assert timing["model"] in ("flash", "simplessd"), name
            assert system.disk.rotation_rate == 1, name


def test_the_series_the_patches_write_is_the_one_every_run_requires():
    """The run identity knows the patches only by the name they write in the binary
    (DiskTiming.RECLAIMSTUDY_SERIES, Gem5.simulator_key), so the study tool must require
    the name the series writes now: disk-timing-2 is 0001 with word 217."""
    from reclaimstudy.artefacts.gem5 import read_series
    written = None
    for patch in read_series().patches:
        for line in patch.read_text().splitlines():
            match = re.fullmatch(r'\+RECLAIMSTUDY_SERIES = "(.*)"', line)
            if match:
                written = match.group(1)
    assert written == gem5_backend.SERIES
    assert set(gem5_backend.REQUIRED) == set(written.split())
    assert gem5_backend.DISK_TIMING == "disk-timing-2"


needs_patched_gem5 = needs_gem5_for("desktop-ssd-64")

# Run by the job before the workload (a run's --job-extra): what the guest sees of its
# disks and its swap, one console line each.
SHOW = r"""
for queue in /sys/block/sd*/queue/rotational; do
  disk=${queue#/sys/block/}
  echo "device-class: rotational ${disk%%/*} $(cat "$queue")"
done
sed 's/^/device-class: swaps /' /proc/swaps
swapon --show=NAME,TYPE,SIZE --noheadings --raw | sed 's/^/device-class: swapon /'
dmesg | grep 'swap on' | sed 's/^/device-class: kernel /'
"""
# mm/swapfile.c (6.1), at swapon: flags "SS" (SWP_SOLIDSTATE), "D", "s", "c", "FS".
SWAP_ADDED = re.compile(r"Adding (\d+)k swap on (\S+)\.  Priority:(-?\d+) extents:(\d+) "
                        r"across:(\d+)k ?(\S*)\s*$")


def guest_view(console: str) -> dict:
    view = {"rotational": {}, "swaps": [], "swapon": [], "kernel": []}
    for line in console.splitlines():
        line = line.rstrip("\r")
        if not line.startswith("device-class: "):
            continue
        kind, _, rest = line[len("device-class: "):].partition(" ")
        if kind == "rotational":
            disk, value = rest.split()
            view["rotational"][disk] = int(value)
        else:
            view[kind].append(rest)
    return view


def test_guest_view_reads_the_lines_the_job_prints():
    console = ("[    1.0] random kernel line\n"
               "device-class: rotational sda 0\r\ndevice-class: rotational sdb 0\n"
               "device-class: swaps Filename\t\tType\t\tSize\t\tUsed\t\tPriority\n"
               "device-class: swaps /dev/sdb  partition\t262140\t\t0\t\t-2\n"
               "device-class: swapon /dev/sdb partition 256M\n"
               "device-class: kernel [    1.181061] Adding 262140k swap on /dev/sdb.  "
               "Priority:-2 extents:1 across:262140k SSFS\n")
    view = guest_view(console)
    assert view["rotational"] == {"sda": 0, "sdb": 0}
    assert view["swapon"] == ["/dev/sdb partition 256M"]
    [added] = view["kernel"]
    assert SWAP_ADDED.search(added).group(2, 6) == ("/dev/sdb", "SSFS")
    assert SWAP_ADDED.search(added.replace(" SSFS", " ")).group(6) == ""


def device_class_view(system_name: str, tmp_path: Path, show: str = SHOW) -> dict:
    """What the guest of a short gem5 job on `system_name` shows of its drives and swap
    (`show` run before the workload)."""
    workload = get_workload("pte-flags")
    spec = runs.RunSpec("device-class", get_system(system_name), get_policy("baseline"),
                        workload, workload.arguments({"pages": 8}), 0, "gem5", job_extra=show)
    record = runs.execute(spec, gem5_backend.Gem5Backend(), results=tmp_path, timeout_s=3600)
    assert record["status"] == "ok", record["reason"]
    view = guest_view((tmp_path / "device-class" / record["run_id"] / "console.log")
                      .read_text(errors="replace"))
    print(f"{system_name}: guest: {view}")
    return view


def assert_swaps_to(view: dict, swap: str, solid_state: bool) -> None:
    """The guest swaps to `swap` alone, and the kernel took it as solid state or not."""
    assert [line.split()[0] for line in view["swapon"]] == [swap], view
    added = [m for m in map(SWAP_ADDED.search, view["kernel"]) if m]
    assert [m.group(2) for m in added] == [swap], view
    assert added[0].group(6).startswith("SS") == solid_state, view


@pytest.mark.gem5
@needs_patched_gem5
@pytest.mark.parametrize("system_name",
                         ["desktop-hdd-64", "desktop-ssd-64", "mobile-lpddr", "ci-tiny"])
def test_the_guest_sees_its_drives_class_and_swaps_to_flash_as_solid_state(system_name,
                                                                           tmp_path):
    system = get_system(system_name)
    view = device_class_view(system_name, tmp_path)
    disks = {"device": {"sda", "sdb"}, "partition": {"sda"}}[system.disk.swap]
    assert view["rotational"] == {disk: int(system.disk.rotational) for disk in disks}, view
    swap = DEVICES[system.disk.guest_layout][1]
    assert [line.split()[0] for line in view["swaps"][1:]] == [swap], view
    assert_swaps_to(view, swap, solid_state=not system.disk.rotational)
