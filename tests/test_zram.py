"""zram as a profile's swap ([disk] swap = "zram"): the profile's checks, its identity
and checkpoint layout, what the backends give the guest, and the guest's set-up script
(disk-images/guest/zram-swap) run on the host against a stand-in for the kernel's
device. All host-only; the kernel's side is in tests/test_kernel.py."""

import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

from reclaimstudy.artefacts.image import GUEST_RUNTIME, Image
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.guest import kernel_cmdline
from reclaimstudy.config import systems
from reclaimstudy.errors import StudyError
from tests.gem5_drives import system_toml

ZRAM_SWAP = GUEST_RUNTIME / "zram-swap"


def test_the_zram_profile_is_desktop_hdd_64_with_its_swap_in_memory():
    zram, hdd = systems.get_system("desktop-zram-64"), systems.get_system("desktop-hdd-64")
    assert (zram.disk.swap, zram.disk.zram_mib, zram.disk.compressor) == ("zram", 128, "lzo-rle")
    assert zram.disk.swap_mib is None
    # ChromeOS's rule: twice the memory.
    assert zram.disk.zram_mib == 2 * zram.memory_mib
    # The same machine and root disk: only the swap differs.
    same = {"cpu", "caches", "memory"}
    assert {k: v for k, v in zram.identity().items() if k in same} == \
        {k: v for k, v in hdd.identity().items() if k in same}
    assert zram.disk.timing == hdd.disk.timing


ZRAM_DISK = ('[disk]\nprofile = "hdd"\ndelay_us = 2000\nswap = "zram"\nzram_mib = 128\n'
             'compressor = "lz4"\n')


def _profile(disk: str) -> str:
    return ('description = "x"\n[cpu]\nmodel = "timing"\ncores = 1\nclock = "2GHz"\n'
            '[caches]\nhierarchy = "none"\n[memory]\nsize_mib = 64\ntype = "DDR3_1600"\n'
            + disk)


@pytest.mark.parametrize("disk, message", [
    (ZRAM_DISK.replace('"lz4"', '"lz5"'),
     "compressor = 'lz5'; allowed: lzo-rle, lzo, lz4, zstd"),
    (ZRAM_DISK.replace("zram_mib = 128", "zram_mib = 8"),
     "zram_mib = 8; allowed: integers 16..65536"),
    (ZRAM_DISK + "swap_mib = 256\n",
     "swap_mib = 256 with swap = 'zram': zram swaps to memory, the disk holds no swap area"),
    (ZRAM_DISK.replace("zram_mib = 128\n", ""), "swap = 'zram' needs zram_mib"),
    (ZRAM_DISK.replace('compressor = "lz4"\n', "").replace("zram_mib = 128\n", ""),
     "swap = 'zram' needs zram_mib and compressor"),
    (ZRAM_DISK.replace('"zram"', '"device"') + "swap_mib = 256\n",
     "zram_mib and compressor given with swap = 'device': only a zram profile has them"),
    (ZRAM_DISK.replace('"zram"', '"partition"').replace("zram_mib = 128\n", "")
     .replace('compressor = "lz4"\n', ""), "swap = 'partition' needs swap_mib"),
    (ZRAM_DISK.replace('"zram"', '"ram"'), "swap = 'ram'; allowed: device, partition, zram"),
])
def test_a_zram_profile_is_checked_naming_the_value_and_what_is_allowed(tmp_path, disk,
                                                                         message):
    (tmp_path / "bad.toml").write_text(_profile(disk))
    with pytest.raises(StudyError, match=re.escape(message)):
        systems.get_system("bad", tmp_path)


def test_every_compressor_a_profile_may_name_loads(tmp_path):
    for compressor in systems.ZRAM_COMPRESSORS:
        (tmp_path / "z.toml").write_text(_profile(ZRAM_DISK.replace("lz4", compressor)))
        assert systems.get_system("z", tmp_path).disk.compressor == compressor


def _simplessd_zram(interface: str) -> str:
    config = {"sata": "samsung-850-pro-256gb.cfg", "nvme": "samsung-850-pro-256gb-nvme.cfg"}
    return system_toml({"profile": "ssd", "swap": "zram", "zram_mib": 128, "compressor": "lz4"},
                       {"model": "simplessd", "drive": "a drive", "interface": interface,
                        "config": config[interface],
                        "validation": "as in tests/benchmarks/RESULTS.md"})


def test_zram_beside_a_sata_simplessd_drive_keeps_root_on_its_one_disk(tmp_path):
    """SimpleSSD allows one drive a gem5 process: with zram it holds root alone."""
    (tmp_path / "z.toml").write_text(_simplessd_zram("sata"))
    disk = systems.get_system("z", tmp_path).disk
    assert (disk.swap, disk.guest_layout, disk.nvme) == ("zram", "zram", False)
    line = kernel_cmdline("gem5", "", disk)
    assert "root=/dev/sda " in line and "reclaim.swap=/dev/zram0 reclaim.zram=128,lz4" in line


def test_zram_on_an_nvme_drive_is_refused_until_its_layout_is_checked(tmp_path):
    (tmp_path / "z.toml").write_text(_simplessd_zram("nvme"))
    with pytest.raises(StudyError, match=re.escape(
            "swap = 'zram' with [disk.timing] interface = 'nvme': not supported yet. It would "
            "put root on the NVMe namespace unpartitioned (/dev/nvme0n1)")) as refused:
        systems.get_system("z", tmp_path)
    assert "allowed: swap = \"partition\" on an NVMe drive" in str(refused.value)


def test_the_size_and_compressor_are_in_the_run_identity_and_the_checkpoint_layout():
    zram = systems.get_system("desktop-zram-64")
    assert zram.identity()["disk"]["zram_mib"] == 128
    assert zram.identity()["disk"]["compressor"] == "lzo-rle"
    assert "swap_mib" not in zram.identity()["disk"]
    for change in ({"compressor": "lz4"}, {"zram_mib": 96}):
        other = zram.changed(disk=change)
        assert other.identity() != zram.identity(), change
        # zram is set up before gem5's checkpoint: another device is another boot.
        assert other.memory_layout() != zram.memory_layout(), change
    # A disk's profile has no zram keys in its identity (its runs keep their ids).
    assert not {"zram_mib", "compressor"} & set(systems.get_system("desktop-hdd-64")
                                                 .identity()["disk"])


def test_the_guest_gets_root_on_its_disk_and_swap_on_zram_sized_and_compressed():
    zram = systems.get_system("desktop-zram-64")
    line = kernel_cmdline("qemu", "no_timer_check", zram.disk).split()
    assert "root=/dev/sda" in line and "reclaim.swap=/dev/zram0" in line
    assert "reclaim.zram=128,lzo-rle" in line
    hdd = kernel_cmdline("qemu", "", systems.get_system("desktop-hdd-64").disk)
    assert "reclaim.swap=/dev/sda2" in hdd and "reclaim.zram" not in hdd


def test_a_zram_profile_has_the_root_disk_alone(tmp_path):
    image = Image(tmp_path)
    assert image.disks("zram") == [image.root]
    with pytest.raises(StudyError, match="allowed: device, partition, zram"):
        image.disks("tape")


def test_gem5_takes_a_zram_profile_with_its_root_disk_timed_and_no_swap_drive():
    """gem5 times the one root drive; zram is memory, and its compression is the
    kernel's code on the simulated CPU: nothing to time beside it."""
    zram = systems.get_system("desktop-zram-64")
    kernel = type("K", (), {"vmlinux": Path("/k")})()
    params = gem5_backend.gem5_params("run", zram, kernel, Image(Path("/i")), Path("/c"),
                                      "timing", "a b", job="J")
    assert params["disks"] == ["/i/root.img"]
    assert params["disk_timing"]["model"] == "hdd"
    assert params["memory"] == {"type": "DDR3_1600", "size_mib": 64}
    keys = {compressor: gem5_backend._checkpoint_key(
        "g", "k", "i", 1000, zram.changed(disk={"compressor": compressor}))
        for compressor in ("lzo-rle", "lz4")}
    assert keys["lzo-rle"] != keys["lz4"]


def test_init_runs_the_set_up_script_where_the_image_puts_it():
    init = (GUEST_RUNTIME / "init").read_text()
    assert "sh /usr/lib/reclaim/zram-swap " in init
    assert re.search(r'reclaim\.zram=\*\) zram=\$\{word#reclaim\.zram=\}', init)
    assert "grep -q \"^$swap \" /proc/swaps || fail" in init
    image_py = (Path(systems.__file__).parents[1] / "artefacts/image.py").read_text()
    assert 'GUEST_RUNTIME / "zram-swap", reclaim / "zram-swap"' in image_py


class StandInZram:
    """A folder in place of /sys/block/zram0 for zram-swap, and fake mkswap and swapon.

    comp_algorithm is a FIFO a thread serves as the kernel's file behaves, in the order
    the script must use it: it takes the written name, then answers one read with the
    list, the selected one in brackets (the old one when `refuse` is set, or when the
    device already has a size: zram's EBUSY). disksize is a plain file (a folder in its
    place makes writing it fail). mkswap and swapon log their arguments."""

    def __init__(self, root: Path, refuse: bool = False, disksize_fails: bool = False):
        self.sysfs = root / "zram0"
        self.sysfs.mkdir()
        self.fifo = self.sysfs / "comp_algorithm"
        os.mkfifo(self.fifo)
        if disksize_fails:
            (self.sysfs / "disksize").mkdir()
        self.log = root / "commands.log"
        self.bin = root / "bin"
        self.bin.mkdir()
        for tool, status in (("mkswap", 0), ("swapon", 0)):
            self.fake(tool, status)
        self.refuse = refuse
        self.written: list[str] = []
        self.disksize_when_written: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def fake(self, tool: str, status: int) -> None:
        path = self.bin / tool
        path.write_text(f'#!/bin/sh\necho "{tool} $*" >> {self.log}\nexit {status}\n')
        path.chmod(0o755)

    def _serve(self) -> None:
        with open(self.fifo) as handle:
            self.written.append(handle.read().strip())
        disksize = self.sysfs / "disksize"
        self.disksize_when_written.append(disksize.read_text() if disksize.is_file() else "")
        busy = self.disksize_when_written[-1].strip() not in ("", "0")
        selected = "lzo-rle" if self.refuse or busy else self.written[-1]
        listing = " ".join(f"[{name}]" if name == selected else name
                           for name in ("lzo", "lzo-rle", "lz4", "zstd"))
        with open(self.fifo, "w") as handle:
            handle.write(listing + "\n")

    def run(self, *args: str) -> subprocess.CompletedProcess:
        self.thread.start()
        env = dict(os.environ, ZRAM_SYSFS=str(self.sysfs), ZRAM_DEVICE="/dev/zram0",
                   PATH=f"{self.bin}:{os.environ['PATH']}")
        try:
            return subprocess.run(["sh", str(ZRAM_SWAP), *args], env=env, capture_output=True,
                                  text=True, timeout=20)
        finally:
            self._release()

    def _release(self) -> None:
        """Unblock whoever still waits on the FIFO (the thread, or a reader the script
        left behind) when the script did not use the file as it should."""
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            try:
                os.close(os.open(self.fifo, flags))
            except OSError:  # no one waits on that side
                pass
        self.thread.join(timeout=2)

    def commands(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.is_file() else []


def test_zram_swap_sets_the_compressor_then_the_size_then_swaps_on_with_a_priority(tmp_path):
    zram = StandInZram(tmp_path)
    done = zram.run("128", "lz4")
    assert done.returncode == 0, done.stderr
    assert zram.written == ["lz4"]
    assert zram.disksize_when_written == [""]  # the compressor came before the size
    assert (zram.sysfs / "disksize").read_text().strip() == str(128 << 20)
    assert zram.commands() == [
        "mkswap -q -L zram -U 00000000-0000-4000-8000-000000000004 /dev/zram0",
        "swapon -p 100 /dev/zram0"]


def test_zram_swap_stops_when_the_kernel_does_not_select_the_compressor(tmp_path):
    zram = StandInZram(tmp_path, refuse=True)
    done = zram.run("128", "zstd")
    assert done.returncode == 1
    assert ("zram-swap: comp_algorithm reads 'lzo [lzo-rle] lz4 zstd', not 'zstd' selected"
            in done.stderr)
    assert not (zram.sysfs / "disksize").exists() and zram.commands() == []


@pytest.mark.parametrize("failing, message", [
    ("disksize", f"zram-swap: disksize: the kernel refused {128 << 20} bytes (128 MiB)"),
    ("mkswap", "zram-swap: mkswap /dev/zram0 failed"),
    ("swapon", "zram-swap: swapon -p 100 /dev/zram0 failed"),
])
def test_zram_swap_stops_at_the_step_that_fails_naming_it(tmp_path, failing, message):
    zram = StandInZram(tmp_path, disksize_fails=failing == "disksize")
    if failing != "disksize":
        zram.fake(failing, 1)
    done = zram.run("128", "lz4")
    assert done.returncode == 1 and message in done.stderr, done.stderr
    if failing != "swapon":  # nothing after the failed step
        assert not any(line.startswith("swapon") for line in zram.commands())


@pytest.mark.parametrize("args, message", [
    (("12x", "lz4"), "zram-swap: size '12x' is not a whole number of MiB"),
    (("128",), "zram-swap: usage: zram-swap MIB COMPRESSOR (got 1 arguments)"),
])
def test_zram_swap_refuses_what_it_cannot_set(tmp_path, args, message):
    done = subprocess.run(["sh", str(ZRAM_SWAP), *args], capture_output=True, text=True,
                          env=dict(os.environ, ZRAM_SYSFS=str(tmp_path)), timeout=20)
    assert done.returncode == 1 and message in done.stderr


def test_zram_swap_says_when_the_kernel_has_no_zram(tmp_path):
    done = subprocess.run(["sh", str(ZRAM_SWAP), "128", "lz4"], capture_output=True,
                          text=True, env=dict(os.environ, ZRAM_SYSFS=str(tmp_path / "none")),
                          timeout=20)
    assert done.returncode == 1
    assert f"zram-swap: no {tmp_path}/none: this kernel has no zram device (CONFIG_ZRAM)" \
        in done.stderr
