"""SimpleSSD as the guest's NVMe drive: gem5-patches/0007's SimpleSSDNVMe (SimpleSSD's own
NVMe controller on gem5's PCI bus), the profile desktop-nvme-ssd-64 ([disk.timing]
interface = "nvme": the 850 PRO's flash with an NVMe front end) and its wiring.

On the host alone: the profile and its refusals, the drive's configuration against the
850 PRO's, the run keys, the gem5 and QEMU parameters, and reclaim_fs.py's wiring of the
device (its functions run against stand-ins for gem5's classes). With GEM5 (a gem5 built
with --simplessd from a series holding 0007, and a guest kernel with CONFIG_BLK_DEV_NVME;
marked gem5): the guest finds its root and swap on the NVMe namespace and swaps to it as
solid state. The kill-and-resume test (tests/test_gem5.py) holds the profile too."""

import re
from pathlib import Path

import pytest

from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.guest import DEVICES, kernel_cmdline
from reclaimstudy.backends.qemu import boot as qemu_boot
from reclaimstudy.config.systems import (SIMPLESSD_DIR, SimplessdTiming, get_system,
                                         simplessd_sections, simplessd_setting)
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256
from tests.gem5_drives import (gem5_binary, needs_gem5_for, patch_file, reclaim_fs_functions,
                               system_toml)

PROFILE = "desktop-nvme-ssd-64"
SATA = "desktop-sata-ssd-64"
REAL = "desktop-nvme-950-pro-64"
PATCH = "0007-simplessd-nvme.patch"
SIMPLESSD = {"key": "9809e9a43ddacadc", "version": "2.0.13", "timing": "simplessd-timing-1"}
WITH_NVME = {**SIMPLESSD, "nvme": "simplessd-nvme-1"}


# --- the profile and its drive ---

def test_the_nvme_profile_is_the_850_pros_flash_behind_nvme_with_root_and_swap_on_it():
    system, sata = get_system(PROFILE), get_system(SATA)
    timing = system.disk.timing
    assert isinstance(timing, SimplessdTiming) and timing.interface == "nvme"
    assert "not a real drive" in timing.drive and "not validated" in timing.validation
    assert system.disk.nvme and not sata.disk.nvme
    assert (system.disk.swap, system.disk.guest_layout) == ("partition", "nvme")
    assert DEVICES[system.disk.guest_layout] == ("/dev/nvme0n1p1", "/dev/nvme0n1p2")
    line = kernel_cmdline("gem5", "idle=halt", system.disk)
    assert "root=/dev/nvme0n1p1 " in line and "reclaim.swap=/dev/nvme0n1p2 " in line
    # Everything else as the SATA profile's, so the two differ only in the interface.
    for part in ("cpu", "caches", "memory"):
        assert getattr(system, part) == getattr(sata, part), part
    assert (system.disk.swap_mib, system.disk.profile) == (sata.disk.swap_mib, sata.disk.profile)
    # SimpleSSD's NVMe controller reports its DRAM cache (VWC); the guest flushes it.
    assert system.disk.reports_write_cache and not sata.disk.reports_write_cache
    assert (system.disk.rotation_rate, system.disk.rotational) == (1, False)


def test_the_interface_is_part_of_what_a_run_is_and_the_sata_drives_identity_stays():
    system, sata = get_system(PROFILE), get_system(SATA)
    identity = system.identity()["disk"]["timing"]
    assert identity["interface"] == "nvme"
    assert identity["config_sha256"] == file_sha256(system.disk.timing.config_path)
    assert "interface" not in sata.identity()["disk"]["timing"]  # as before 0007
    assert system.memory_layout() == {**sata.memory_layout(), "write_cache": True,
                                      "disk_interface": "nvme"}
    assert "disk_interface" not in sata.memory_layout()


def test_the_nvme_drive_is_the_850_pros_description_with_an_nvme_front_end():
    nvme = simplessd_sections(SIMPLESSD_DIR / "samsung-850-pro-256gb-nvme.cfg")
    sata = simplessd_sections(SIMPLESSD_DIR / "samsung-850-pro-256gb.cfg")
    assert {k: v for k, v in nvme.items() if k != "nvme"} == sata
    front = nvme["nvme"]
    # PCIe 3.x x4; one namespace in 512-byte blocks; SimpleSSD's own data off (gem5's).
    assert (front["PCIEGeneration"], front["PCIELane"]) == ("2", "4")
    assert (front["DefaultNamespace"], front["LBASize"], front["EnableDiskImage"]) == \
        ("1", "512", "0")
    text = (SIMPLESSD_DIR / "samsung-850-pro-256gb-nvme.cfg").read_text()
    assert "NOT A REAL" in text and "[pcie3x4]" in text and "[sample]" in text


def test_the_real_nvme_profile_is_the_950_pro_held_to_its_makers_figures():
    """desktop-nvme-950-pro-64: a real NVMe drive (the Samsung 950 PRO 256 GB), described
    from its own parts and validated through SimpleSSD's NVMe controller; the rest of the
    machine is desktop-nvme-ssd-64's, so the two share a boot's layout and differ only in
    the drive."""
    real, made_up = get_system(REAL), get_system(PROFILE)
    timing = real.disk.timing
    assert isinstance(timing, SimplessdTiming) and timing.interface == "nvme"
    assert timing.config == "samsung-950-pro-256gb.cfg"
    assert "Samsung SSD 950 PRO 256 GB" in timing.drive and "not a real" not in timing.drive
    assert "RESULTS.md, SimpleSSD validation: the Samsung 950 PRO" in timing.validation
    for part in ("cpu", "caches", "memory"):
        assert getattr(real, part) == getattr(made_up, part), part
    assert real.memory_layout() == made_up.memory_layout()
    assert (real.disk.guest_layout, real.disk.reports_write_cache) == ("nvme", True)
    assert real.identity()["disk"]["timing"]["config_sha256"] != \
        made_up.identity()["disk"]["timing"]["config_sha256"]
    # Its [nvme] front end is the one the made-up drive has (SimpleSSD's sample
    # controller on PCIe 3.0 x4); its flash, cache, FTL and CPU are its own.
    real_cfg = simplessd_sections(SIMPLESSD_DIR / "samsung-950-pro-256gb.cfg")
    made_up_cfg = simplessd_sections(SIMPLESSD_DIR / "samsung-850-pro-256gb-nvme.cfg")
    assert real_cfg["nvme"] == made_up_cfg["nvme"]
    assert (real_cfg["cpu"]["ClockSpeed"], real_cfg["pal"]["Channel"],
            real_cfg["pal"]["Package"], real_cfg["pal"]["Block"]) == \
        ("500000000", "8", "2", "2048")


def test_simplessd_setting_reads_one_key_of_one_section(tmp_path):
    cfg = tmp_path / "d.cfg"
    cfg.write_text("# x = 1\n[icl]\nEnableWriteCache = 1  # on\n[nvme]\nLBASize=4096\n")
    assert simplessd_setting(cfg, "icl", "EnableWriteCache") == "1"
    assert simplessd_setting(cfg, "nvme", "LBASize") == "4096"
    assert simplessd_setting(cfg, "nvme", "EnableWriteCache") is None
    assert simplessd_setting(cfg, "global", "x") is None


def _nvme_toml(swap: str = "partition", **timing) -> str:
    return system_toml({"profile": "ssd", "swap": swap, "swap_mib": 256},
                       {"model": "simplessd", "drive": "a drive", "interface": "nvme",
                        "config": "samsung-850-pro-256gb-nvme.cfg",
                        "validation": "as in tests/benchmarks/RESULTS.md", **timing})


@pytest.mark.parametrize("swap, timing, message", [
    ("partition", {"interface": "usb"},
     r"\[disk.timing.simplessd\]: interface = 'usb'; allowed: sata, nvme"),
    ("partition", {"config": "samsung-850-pro-256gb.cfg"},
     r"interface = 'nvme': samsung-850-pro-256gb.cfg describes no NVMe front end \(no \[nvme\] "
     r"PCIEGeneration.*samsung-850-pro-256gb-nvme.cfg, or interface = 'sata'"),
    ("partition", {"sector_offset": 2048},
     r"sector_offset = 2048 with interface = 'nvme'.*allowed: 0"),
    ("device", {}, r"swap = 'device': a gem5 process holds one SimpleSSD drive .* allowed: "
                   r"swap = \"partition\", root and swap on the one drive \(the NVMe "
                   r"namespace's two partitions\)"),
])
def test_an_nvme_drive_says_what_it_is_or_is_refused(tmp_path, swap, timing, message):
    (tmp_path / "bad.toml").write_text(_nvme_toml(swap, **timing))
    with pytest.raises(StudyError, match=message):
        get_system("bad", tmp_path)


def test_a_drive_configured_with_other_namespaces_is_refused(tmp_path, monkeypatch):
    cfg = tmp_path / "two.cfg"
    cfg.write_text((SIMPLESSD_DIR / "samsung-850-pro-256gb-nvme.cfg").read_text()
                   .replace("DefaultNamespace = 1", "DefaultNamespace = 2"))
    monkeypatch.setattr("reclaimstudy.config.systems.SIMPLESSD_DIR", tmp_path)
    (tmp_path / "bad.toml").write_text(_nvme_toml(config="two.cfg"))
    with pytest.raises(StudyError, match=r"two.cfg has \[nvme\] DefaultNamespace = 2; allowed: "
                                         r"1 \(the guest's disk is the drive's one namespace\)"):
        get_system("bad", tmp_path)


# --- the gem5 binary: refusals and keys ---

def test_an_nvme_profile_refuses_a_gem5_without_0007_naming_the_fix():
    system = get_system(PROFILE)
    with pytest.raises(StudyError, match=r"desktop-nvme-ssd-64 times its disk with SimpleSSD .*"
                                         r"built without SimpleSSD: build gem5 with SimpleSSD"):
        gem5_backend.require_patches(gem5_binary(), system)
    with pytest.raises(StudyError, match=r"desktop-nvme-ssd-64 puts its SimpleSSD drive on the "
                                         r"PCI bus as an NVMe drive \(\[disk.timing\] interface "
                                         r"= 'nvme'\), which needs gem5-patches/0007 "
                                         r"\(SimpleSSDNVMe\), but GEM5=/opt/gem5.fast was built "
                                         r"without it .*series holds 0007: `./study gem5 "
                                         r"--source GEM5_DIR --simplessd SIMPLESSD_DIR`"):
        gem5_backend.require_patches(gem5_binary(simplessd=SIMPLESSD), system)
    gem5_backend.require_patches(gem5_binary(simplessd=WITH_NVME), system)
    # The SATA drive runs on either build.
    for simplessd in (SIMPLESSD, WITH_NVME):
        gem5_backend.require_patches(gem5_binary(simplessd=simplessd), get_system(SATA))


def test_nvme_runs_are_keyed_by_0007s_device_and_sata_runs_are_not():
    nvme, sata = get_system(PROFILE), get_system(SATA)
    without, with_nvme = gem5_binary(simplessd=SIMPLESSD), gem5_binary(simplessd=WITH_NVME)
    assert without.key_for(sata) == with_nvme.key_for(sata)  # 0007 changes no SATA run
    other = gem5_binary(simplessd={**WITH_NVME, "nvme": "simplessd-nvme-2"})
    assert len({b.key_for(nvme) for b in (with_nvme, other)}) == 2
    assert with_nvme.key_for(nvme) not in (with_nvme.key_for(sata), with_nvme.simulator_key)
    assert with_nvme.identity()["simplessd"]["nvme"] == "simplessd-nvme-1"
    assert "nvme" not in without.identity()["simplessd"]


def test_identify_reads_the_marker_0007_writes():
    py = patch_file(PATCH, "src/dev/storage/SimpleSSDNVMe.py")
    marker = re.search(r'^RECLAIMSTUDY_SIMPLESSD_NVME = "(.*)"$', py, re.M)
    assert marker and marker[1] == WITH_NVME["nvme"]
    identify = (gem5_backend.IDENTIFY).read_text()
    assert '"m5.objects.SimpleSSDNVMe").RECLAIMSTUDY_SIMPLESSD_NVME' in identify


# --- what the gem5 script and QEMU are given ---

class FakeImage:
    def disks(self, swap):
        return {"device": [Path("/r"), Path("/s")], "partition": [Path("/d")]}[swap]


def test_the_gem5_params_put_the_partitioned_disk_on_the_nvme_drive():
    system = get_system(PROFILE)
    kernel = type("K", (), {"vmlinux": Path("/k")})()
    line = kernel_cmdline("gem5", "a", system.disk)
    params = gem5_backend.gem5_params("run", system, kernel, FakeImage(), Path("/c"), "timing",
                                      line, job="J")
    timing = params["disk_timing"]
    assert timing["interface"] == "nvme" and timing["model"] == "simplessd"
    assert timing["config_path"] == str(system.disk.timing.config_path)
    assert params["disks"] == ["/d"]
    assert "root=/dev/nvme0n1p1" in params["kernel_args"]
    assert "reclaim.swap=/dev/nvme0n1p2" in params["kernel_args"]


def test_qemu_gives_the_guest_the_same_disk_as_an_nvme_drive(tmp_path):
    boot = qemu_boot.Boot(bzimage=Path("/bz"), cmdline="c", memory_mib=64, disks=[Path("/d")],
                          console_log=tmp_path / "console", interface="nvme")
    command = qemu_boot.command(boot, "tcg")
    assert command[command.index("-device") + 1] == "nvme,drive=nvme0,serial=reclaimstudy0"
    assert "file=/d,format=raw,if=none,id=nvme0" in command
    assert not any("if=ide" in word for word in command)
    ide = qemu_boot.command(qemu_boot.Boot(bzimage=Path("/bz"), cmdline="c", memory_mib=64,
                                           disks=[Path("/d")], console_log=tmp_path / "c"),
                            "tcg")
    assert "file=/d,format=raw,if=ide,index=0,media=disk" in ide and "-device" not in ide


class Stub:
    """A gem5 SimObject's stand-in: its parameters as attributes."""

    def __init__(self, **params):
        self.__dict__.update(params)


class Bus:
    mem_side_ports = "iobus.mem_side_ports"
    cpu_side_ports = "iobus.cpu_side_ports"


def _board(cores: int = 1):
    table = Stub(base_entries=["entry0", "entry1"])
    processor = Stub(get_num_cores=lambda: cores)
    return Stub(pc=Stub(pci_host="pci_host"), workload=Stub(intel_mp_table=table),
                get_io_bus=lambda: Bus, get_processor=lambda: processor)


def test_the_gem5_script_puts_the_drive_on_the_pci_bus_with_its_interrupt_routed(monkeypatch):
    import sys
    import types
    objects = types.ModuleType("m5.objects")
    objects.SimpleSSDNVMe = Stub  # type: ignore[attr-defined]
    objects.X86IntelMPIOIntAssignment = Stub  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "m5", types.ModuleType("m5"))
    monkeypatch.setitem(sys.modules, "m5.objects", objects)
    script = reclaim_fs_functions(
        ("NVME_PCI_DEV", "NVME_IOAPIC_PIN", "simplessd_nvme", "attach_nvme"),
        {"CowDiskImage": Stub, "RawDiskImage": Stub, "X86Board": object})
    timing = gem5_backend.disk_timing_params(get_system(PROFILE))
    nvme = script["simplessd_nvme"](timing, "/images/disk.img", True)
    assert (nvme.pci_bus, nvme.pci_dev, nvme.pci_func) == (0, 5, 0)
    assert nvme.InterruptLine == script["NVME_IOAPIC_PIN"] == 17
    assert nvme.config == timing["config_path"]
    assert nvme.input_log == "simplessd-nvme-inputs.txt"
    assert nvme.image.read_only is False and nvme.image.child.read_only is True
    assert nvme.image.child.image_file == "/images/disk.img"
    assert script["simplessd_nvme"](timing, "/i", False).input_log == ""

    board = _board(cores=2)
    script["attach_nvme"](board, nvme)
    assert board.pc.nvme is nvme and nvme.host == "pci_host"
    assert (nvme.pio, nvme.dma) == (Bus.mem_side_ports, Bus.cpu_side_ports)
    table = board.workload.intel_mp_table
    inta = table.nvme_inta
    assert table.base_entries == ["entry0", "entry1", inta]
    # PCI bus 0, device 5, pin INTA (0), to the I/O APIC (its ID is the core count on
    # gem5's X86Board) input 17, level and polarity as PCI's.
    assert (inta.interrupt_type, inta.source_bus_id, inta.source_bus_irq) == ("INT", 0, 5 << 2)
    assert (inta.dest_io_apic_id, inta.dest_io_apic_intin) == (2, 17)
    assert (inta.polarity, inta.trigger) == ("ConformPolarity", "ConformTrigger")


def test_the_devices_python_class_agrees_with_the_script_and_the_guest():
    """The PCI function the script puts the drive at, its interrupt line, and what the
    patch's class tells the guest (an NVMe class code, no capability list: INTx only)."""
    py = patch_file(PATCH, "src/dev/storage/SimpleSSDNVMe.py")
    values = dict(re.findall(r"^    (\w+) = (0x[0-9A-Fa-f]+|\d+)$", py, re.M))
    assert int(values["InterruptLine"]) == 17
    assert (int(values["ClassCode"], 16), int(values["SubClassCode"], 16),
            int(values["ProgIF"], 16)) == (0x01, 0x08, 0x02)
    assert int(values["Status"], 16) & 0x10 == 0 and int(values["CapabilityPtr"], 16) == 0
    assert int(values["InterruptPin"], 16) == 1
    assert 'BAR0 = PciMemBar(size="16KiB")' in py and "BAR1 = PciMemUpperBar()" in py
    assert re.search(r"bar0_address = Param.Addr\(\s*0xFE000000", py)


def test_the_series_holds_0007_after_0006_with_its_files():
    from reclaimstudy.artefacts import gem5 as gem5_build
    names = [p.name for p in gem5_build.read_series().patches]
    assert names[names.index("0006-simplessd-timing.patch") + 1] == PATCH
    text = (gem5_build.GEM5_PATCHES / PATCH).read_text()
    for name in ("SimpleSSDNVMe.py", "simplessd_nvme.hh", "simplessd_nvme.cc",
                 "simplessd_nvme_drive.hh", "simplessd_nvme_drive.cc"):
        assert f"+++ b/src/dev/storage/{name}\n" in text, name
    # Built only beside 0006's model, with SimpleSSD linked in.
    assert "    SimObject('SimpleSSDNVMe.py', sim_objects=['SimpleSSDNVMe'])" in text


# --- inside gem5 (GEM5: a gem5 built with --simplessd and 0007) ---

needs_nvme_gem5 = needs_gem5_for(PROFILE, "./study gem5 --source GEM5_DIR --simplessd "
                                          "SIMPLESSD_DIR")


@pytest.mark.gem5
@needs_nvme_gem5
def test_the_guest_finds_root_and_swap_on_the_nvme_namespace_and_swaps_as_solid_state(tmp_path):
    from tests.test_gem5_device_class import SHOW, assert_swaps_to, device_class_view

    view = device_class_view(PROFILE, tmp_path,
                             SHOW.replace("/sys/block/sd*/", "/sys/block/nvme*/"))
    assert view["rotational"] == {"nvme0n1": 0}, view
    assert_swaps_to(view, DEVICES["nvme"][1], solid_state=True)
