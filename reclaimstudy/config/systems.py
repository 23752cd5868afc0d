"""Hardware profiles (configs/systems/*.toml): CPU, caches, memory, disk.

A profile is composed the way gem5's standard library builds a board: a processor
(`cpu`), a cache hierarchy (`caches`), memory and the disks, each a part of its own,
as in the TOML file. QEMU uses only the memory size, cores and swap size. The allowed
values here are the ones configs/gem5/reclaim_fs.py builds (a test checks they agree).
"""

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (AfterValidator, BeforeValidator, BaseModel, ConfigDict, Field, ValidationError,
                      model_validator)

from reclaimstudy.config.tomlfile import config_error, load, number, one_of, whole_number
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256
from reclaimstudy.paths import CONFIGS

SYSTEMS_DIR = CONFIGS / "systems"
# Our DiskSim parameter files ([disk.timing] model = "disksim"): each sources its drive's
# own files (DiskSim's, never copied here) from the DiskSim build's valid/ folder.
DISKSIM_DIR = CONFIGS / "disksim"
# Our SimpleSSD drive descriptions ([disk.timing] model = "simplessd"): SimpleSSD's own
# configuration format, each a named drive with every number's source.
SIMPLESSD_DIR = CONFIGS / "simplessd"
# How a SimpleSSD drive meets the guest ([disk.timing] interface): "sata", behind gem5's
# IDE disk at queue depth 1 (gem5-patches/0006); "nvme", SimpleSSD's own NVMe controller
# on the PCI bus, its queues as deep as Linux's driver makes them (gem5-patches/0007).
# "emmc", the IDE disk at queue depth 1 behind an eMMC 5.0 bus in HS400 mode instead of
# the SATA link (gem5-patches/0008, the bus of simplessd-patches/0006): a phone's storage.
SIMPLESSD_INTERFACES = ("sata", "nvme", "emmc")
CPU_MODELS = ("atomic", "timing", "o3")
# The [disk.timing] models whose drive reports non-rotating media (ATA IDENTIFY word
# 217 = 1; NVMe namespaces are non-rotational to Linux anyway); the others report rpm.
NON_ROTATING_MODELS = ("flash", "simplessd")
HIERARCHIES = ("none", "private-l1-private-l2", "private-l1-shared-l2")
MEMORY_TYPES = ("DDR3_1600", "DDR4_2400", "LPDDR3_1600")
# Below this the Debian userland, the runtime and a workload's own floor do not fit
# (the 16-application desktop ran at 64 MiB, MemTotal 50.7 MiB).
MIN_MEMORY_MIB = 64
# gem5's X86Board maps at most 3 GiB of memory.
MAX_MEMORY_MIB = 3072
# gem5 v24.0 keeps IdeDisk.delay in an `int` of ticks (picoseconds): past 2^31 - 1 ps
# it wraps around (5000 us runs as 705 us), so longer delays cannot be modelled.
MAX_DISK_DELAY_US = 2147


def _as_tuple(value):
    """A TOML list as the tuple a frozen profile keeps (anything else is left to fail)."""
    return tuple(value) if isinstance(value, list) else value


def _like(pattern: str, example: str):
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.match(value):
            raise ValueError(f"expected a value like {example!r}")
        return value
    return AfterValidator(check)


def _disk_delay(value: float) -> float:
    if value <= 0:
        raise ValueError("allowed: a number > 0")
    if value > MAX_DISK_DELAY_US:
        raise ValueError(f"more than gem5 v24.0 can model; allowed: up to {MAX_DISK_DELAY_US} "
                         f"(IdeDisk keeps the delay in a 32-bit int of picoseconds, so larger "
                         f"values wrap around)")
    return float(value)


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("allowed: a number > 0")
    return value


def _fraction(value: float) -> float:
    if not 0 <= value < 1:
        raise ValueError("allowed: a number from 0 up to (not including) 1")
    return value


def _non_negative(value: float) -> float:
    if value < 0:
        raise ValueError("allowed: a number >= 0")
    return value


Positive = Annotated[float, number(), AfterValidator(_positive)]
NonNegative = Annotated[float, number(), AfterValidator(_non_negative)]
Size = Annotated[str, _like(r"^\d+(KiB|MiB)$", "32KiB")]
Clock = Annotated[str, _like(r"^\d+(\.\d+)?(GHz|MHz)$", "2GHz")]


class Part(BaseModel):
    """One part of a profile: only its own keys, values of their exact kinds."""
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Cpu(Part):
    model: Annotated[str, one_of(CPU_MODELS)]
    cores: Annotated[int, whole_number(1, 8)]
    clock: Clock

    @property
    def hz(self) -> int:
        """The clock in Hz ("2GHz" -> 2_000_000_000)."""
        return round(float(self.clock[:-3]) * {"GHz": 1e9, "MHz": 1e6}[self.clock[-3:]])


class Caches(Part):
    hierarchy: Annotated[str, one_of(HIERARCHIES)]
    l1d: Size | None = None
    l1i: Size | None = None
    l2: Size | None = None

    @model_validator(mode="after")
    def sizes_fit_the_hierarchy(self):
        for level in ("l1d", "l1i", "l2"):
            given = getattr(self, level) is not None
            if self.hierarchy == "none" and given:
                raise ValueError(f"{level} given with hierarchy = 'none'")
            if self.hierarchy != "none" and not given:
                raise ValueError(f"{level} is required with hierarchy = '{self.hierarchy}'")
        return self


class Memory(Part):
    type: Annotated[str, one_of(MEMORY_TYPES)]
    size_mib: Annotated[int, whole_number(MIN_MEMORY_MIB, MAX_MEMORY_MIB)]


class DiskCalibration(Part):
    """What the disk-calib workload measured in the guest: a result, not an input."""
    random_4k_latency_us: Annotated[float, number()]
    sequential_mib_s: Annotated[float, number()]
    measured_with: str


class HddTiming(Part):
    """A rotating drive, for gem5-patches/' HddTiming: figures from a named drive."""
    model: Literal["hdd"]
    drive: str
    rpm: Annotated[int, whole_number(3600, 15000)]
    seek_track_to_track_ms: Positive
    seek_average_ms: Positive
    seek_full_stroke_ms: Positive
    media_mb_s: Positive
    interface_mb_s: Positive
    read_overhead_ms: NonNegative
    write_overhead_ms: NonNegative
    # Sectors of the whole drive: the image sits at its start (0: the image is the stroke).
    stroke_sectors: Annotated[int, whole_number(0, 1 << 40)]
    write_cache_mib: Annotated[int, whole_number(0, 1024)]

    @model_validator(mode="after")
    def seeks_grow(self):
        if not self.seek_track_to_track_ms < self.seek_average_ms < self.seek_full_stroke_ms:
            raise ValueError(
                f"seeks must grow: seek_track_to_track_ms ({self.seek_track_to_track_ms}) < "
                f"seek_average_ms ({self.seek_average_ms}) < seek_full_stroke_ms "
                f"({self.seek_full_stroke_ms})")
        return self


class FlashTiming(Part):
    """A solid-state device, for gem5-patches/' FlashTiming: figures from a named part."""
    model: Literal["flash"]
    device: str
    read_latency_us: Positive
    write_latency_us: Positive
    read_mb_s: Positive
    write_mb_s: Positive
    interface_mb_s: Positive
    read_overhead_us: NonNegative = 0.0
    write_overhead_us: NonNegative = 0.0
    jitter: Annotated[float, number(), AfterValidator(_fraction)] = 0.0


# The rules by which reclaimstudy/artefacts/disksim_media.py rewrites a drive's platters,
# part of a derived drive's identity: a change to them takes the next number.
DISKSIM_MEDIA_VERSION = 1


class DerivedMedia(Part):
    """A derived DiskSim drive's platters from a later drive (reclaimstudy/artefacts/
    disksim_media.py rewrites DiskSim's model file for it): sectors per track in the outer
    zone (every zone scaled alike), and about how many sectors the drive holds (its
    cylinders and seek distances scaled to fit)."""
    outer_blocks_per_track: Annotated[int, whole_number(16, 100_000)]
    capacity_sectors: Annotated[int, whole_number(1, (1 << 31) - 1)]


class DisksimTiming(Part):
    """A rotating drive simulated by DiskSim 4.0 (gem5-patches/0005; gem5 built with
    `./study gem5 --disksim DIR`): one of our parameter files in configs/disksim/, which
    builds a DiskSim system around a drive DiskSim ships (its files are found in the
    DiskSim build's valid/ folder), and DiskSim's own parameter overrides. A validated
    drive is DiskSim's model as its authors validated it against the real drive, with no
    overrides; a derived one changes it, and says so in its name."""
    model: Literal["disksim"]
    drive: str
    validated: bool
    # A file in configs/disksim/.
    parameters: str
    # The drive's rotation rate, which DiskSim's model must have (gem5 checks it) and the
    # drive reports in ATA IDENTIFY word 217.
    rpm: Annotated[int, whole_number(3600, 15000)]
    # DiskSim's overrides, each [component, parameter, value], e.g.
    # ["disk0", "Bulk sector transfer time", "0.0017"], and where each value comes from.
    overrides: list[list[str]] = []
    sources: str = ""
    devno: Annotated[int, whole_number(0, 15)] = 0
    # Where the disk image starts on the drive (its first sectors: the outer zone).
    sector_offset: Annotated[int, whole_number(0, 1 << 31)] = 0
    # A derived drive's platters, which DiskSim's overrides cannot reach (DerivedMedia).
    media: DerivedMedia | None = None

    @model_validator(mode="after")
    def said_what_it_is(self):
        if not (DISKSIM_DIR / self.parameters).is_file() or "/" in self.parameters:
            raise ValueError(f"parameters = {self.parameters!r}: not a file in {DISKSIM_DIR}")
        for override in self.overrides:
            if len(override) != 3:
                raise ValueError(f"overrides: {override!r} is not [component, parameter, "
                                 f"value]")
        if self.validated and (self.overrides or self.media):
            raise ValueError("a validated drive is DiskSim's model as shipped: no overrides "
                             "and no media (give validated = false and say where the "
                             "values come from)")
        label = "derived, not validated"
        if self.validated == (label in self.drive):
            raise ValueError(f"drive = {self.drive!r}: a drive DiskSim did not validate says "
                             f"'{label}' in its name, and only such a drive does")
        if not self.validated and not self.sources:
            raise ValueError("a derived drive says where its values come from (sources)")
        return self

    @property
    def parameters_path(self) -> Path:
        return DISKSIM_DIR / self.parameters


def simplessd_sections(path: Path) -> dict[str, dict[str, str]]:
    """A SimpleSSD configuration file (its INI format: `[section]`, `key = value`, `#`
    comments) as its sections' keys and values (a key given twice: its first value)."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = sections.setdefault(header[1], {})
        elif current is not None and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            current.setdefault(name, value)
    return sections


def simplessd_setting(path: Path, section: str, key: str) -> str | None:
    """A key's value in one section of a SimpleSSD configuration file, or None when it is
    not given."""
    return simplessd_sections(path).get(section, {}).get(key)


class SimplessdTiming(Part):
    """A solid-state drive simulated by SimpleSSD 2.0 (gem5 built with `./study gem5
    --simplessd DIR`): one of our drive descriptions in configs/simplessd/ (SimpleSSD's
    configuration: flash, FTL, cache, firmware CPU, link), how far it was validated
    against the drive's published measurements (tests/benchmarks/RESULTS.md), and how it
    meets the guest: a SATA drive behind the IDE disk at queue depth 1
    (gem5-patches/0006), or an NVMe drive on the PCI bus, SimpleSSD's own NVMe controller
    with queues as deep as Linux's driver makes them (gem5-patches/0007), or a phone's
    eMMC behind the IDE disk at queue depth 1 with an eMMC bus for the link
    (gem5-patches/0008; the guest sees an ATA disk, sda, not an mmcblk device)."""
    model: Literal["simplessd"]
    drive: str
    # A file in configs/simplessd/.
    config: str
    # Which published figures the description meets, and where that is recorded.
    validation: str
    interface: Annotated[str, one_of(SIMPLESSD_INTERFACES)] = "sata"
    # Where the disk image starts on the drive (SATA only: an NVMe drive's namespace is
    # the guest's disk from its first block).
    sector_offset: Annotated[int, whole_number(0, 1 << 31)] = 0

    @model_validator(mode="after")
    def said_what_it_is(self):
        if not (SIMPLESSD_DIR / self.config).is_file() or "/" in self.config:
            raise ValueError(f"config = {self.config!r}: not a file in {SIMPLESSD_DIR}")
        if "RESULTS.md" not in self.validation:
            raise ValueError("validation: say which published figures the drive meets and "
                             "where that is recorded (tests/benchmarks/RESULTS.md)")
        if self.interface == "sata" and simplessd_setting(self.config_path, "sata",
                                                          "SATAMode") is None:
            raise ValueError(
                f"interface = 'sata': {self.config} describes no SATA link (no [sata] "
                f"SATAMode), so it is not a SATA drive (a phone's eMMC, for one, is "
                f"described for its own bus); give a SATA drive, e.g. "
                f"samsung-850-pro-256gb.cfg")
        if self.interface == "emmc" and simplessd_setting(self.config_path, "sata",
                                                          "SATAMode") is not None:
            raise ValueError(
                f"interface = 'emmc': {self.config} describes a SATA link ([sata] "
                f"SATAMode), so it is a SATA drive, not an eMMC device; give a phone's "
                f"eMMC, e.g. samsung-emmc-pro-32gb.cfg, or interface = 'sata'")
        if self.interface == "nvme":
            if simplessd_setting(self.config_path, "nvme", "PCIEGeneration") is None:
                raise ValueError(
                    f"interface = 'nvme': {self.config} describes no NVMe front end (no "
                    f"[nvme] PCIEGeneration: its PCIe link, controller loop and namespace); "
                    f"give a drive that has one, e.g. samsung-850-pro-256gb-nvme.cfg, or "
                    f"interface = 'sata'")
            namespaces = simplessd_setting(self.config_path, "nvme", "DefaultNamespace")
            if namespaces not in (None, "1"):
                raise ValueError(
                    f"interface = 'nvme': {self.config} has [nvme] DefaultNamespace = "
                    f"{namespaces}; allowed: 1 (the guest's disk is the drive's one "
                    f"namespace)")
            if self.sector_offset:
                raise ValueError(
                    f"sector_offset = {self.sector_offset} with interface = 'nvme': the "
                    f"NVMe drive's namespace is the guest's disk from its first block; "
                    f"allowed: 0 (or leave it out)")
        return self

    @property
    def config_path(self) -> Path:
        return SIMPLESSD_DIR / self.config

    @property
    def nvme(self) -> bool:
        return self.interface == "nvme"

    @property
    def reports_write_cache(self) -> bool:
        """Whether the guest is told the drive caches writes: SimpleSSD's NVMe controller
        reports a volatile write cache (Identify Controller, VWC) when its cache takes
        writes ([icl] EnableWriteCache), and Linux then sends it flushes; behind SATA
        (0006) no cache is reported, as for DiskSim's drives."""
        if not self.nvme:
            return False
        return simplessd_setting(self.config_path, "icl", "EnableWriteCache") in (
            "1", "true", "True")


DiskTiming = Annotated[HddTiming | FlashTiming | DisksimTiming | SimplessdTiming,
                       Field(discriminator="model")]
# Where the swap area lives: a disk of its own, a partition after the root filesystem
# on the same disk (one spindle: paging and file IO share the head), or zram, a
# compressed block device in the guest's own memory (the swap of phones and ChromeOS).
SWAP_LAYOUTS = ("device", "partition", "zram")
# The compressors a zram profile may name: those the guest kernel builds in, each with
# the option that builds it (kernel-patches/guest.config; tests/test_kernel.py holds
# the fragment and the built kernel to this table).
ZRAM_COMPRESSORS = {"lzo-rle": "CONFIG_CRYPTO_LZO", "lzo": "CONFIG_CRYPTO_LZO",
                    "lz4": "CONFIG_CRYPTO_LZ4", "zstd": "CONFIG_CRYPTO_ZSTD"}
# How the guest meets its root and swap, one of these per profile, decided by
# Disk.guest_layout alone (reclaimstudy/backends/guest.py DEVICES names each one's
# devices): root and swap on two IDE disks ("device"); one IDE disk, root then swap
# partition ("partition"); that partitioned disk as an NVMe drive's namespace ("nvme",
# gem5-patches/0007); or root on the one IDE disk and swap on zram ("zram").
GUEST_LAYOUTS = ("device", "partition", "nvme", "zram")


class Disk(Part):
    profile: str
    # gem5's own IdeDisk.delay, per DMA descriptor, when there is no `timing`; TOML may
    # give it as a whole number.
    delay_us: Annotated[float, number(), AfterValidator(_disk_delay)] | None = None
    timing: DiskTiming | None = None
    swap: Annotated[str, one_of(SWAP_LAYOUTS)] = "device"
    # The swap area on the disk; a zram profile has none (zram_mib sizes its swap).
    swap_mib: Annotated[int, whole_number(16, 65536)] | None = None
    # zram (swap = "zram"): the device's size before compression (its disksize: how much
    # swap the guest sees) and its compressor.
    zram_mib: Annotated[int, whole_number(16, 65536)] | None = None
    compressor: Annotated[str, one_of(tuple(ZRAM_COMPRESSORS))] | None = None
    calibration: DiskCalibration | None = None

    @property
    def reports_write_cache(self) -> bool:
        """Whether the drive tells the guest it caches writes (gem5-patches/' IDENTIFY
        bits): Linux reads it once, at boot, and flushes by it ever after. A DiskSim drive
        reports none: DiskSim's interface has no FLUSH CACHE, so its buffer's write-back
        (the validated IBM 18ES acknowledges writes once in its buffer) is the drive's
        own, as on a drive whose cache the host is not told of."""
        if isinstance(self.timing, SimplessdTiming):
            return self.timing.reports_write_cache
        return isinstance(self.timing, HddTiming) and self.timing.write_cache_mib > 0

    @property
    def nvme(self) -> bool:
        """Whether the drive is SimpleSSD's NVMe controller on the PCI bus
        (gem5-patches/0007) rather than a disk behind gem5's IDE controller."""
        return isinstance(self.timing, SimplessdTiming) and self.timing.nvme

    @property
    def guest_layout(self) -> str:
        """How the guest meets its root and swap (GUEST_LAYOUTS; decided here alone, and
        every backend names the devices by it: reclaimstudy/backends/guest.py DEVICES):
        the swap layout on IDE disks, or on an NVMe drive its partitioned namespace (the
        checks allow an NVMe drive no other swap layout)."""
        layout = "nvme" if self.nvme else self.swap
        assert layout in GUEST_LAYOUTS, layout
        return layout

    @property
    def rotation_rate(self) -> int:
        """What the drive reports in ATA IDENTIFY word 217 (gem5-patches/0001): a hard
        disk its rpm, flash 1 ("non-rotating media"), gem5's own delay 0 (not reported).
        Linux marks a disk non-rotational (queue/rotational 0, and swap on it solid
        state) only for 1; it learns this at boot, and the drive model is part of every
        boot's key (_checkpoint_key, backends/gem5/backend.py)."""
        timing = self.timing
        if timing is None:
            return 0
        if timing.model in NON_ROTATING_MODELS:
            return 1
        assert isinstance(timing, (HddTiming, DisksimTiming)), timing.model
        return timing.rpm

    @property
    def rotational(self) -> bool:
        """Whether the guest sees the disk as rotating (/sys/block/*/queue/rotational)."""
        return self.rotation_rate != 1

    @model_validator(mode="after")
    def one_timing(self):
        if (self.delay_us is None) == (self.timing is None):
            raise ValueError("give exactly one of delay_us (gem5's fixed delay per DMA "
                             "descriptor) and [disk.timing] (gem5-patches/' request model)")
        if isinstance(self.timing, SimplessdTiming) and self.swap == "device":
            raise ValueError(f"swap = {self.swap!r}: a gem5 process holds one SimpleSSD drive "
                             f"(SimpleSSD keeps its host hook and firmware CPU in globals); "
                             f"allowed: swap = \"partition\", root and swap on the one drive"
                             + (" (the NVMe namespace's two partitions)" if self.nvme else
                                ", or swap = \"zram\", swap in memory"))
        return self

    @model_validator(mode="after")
    def swap_sized_where_it_is(self):
        if self.swap == "zram":
            if self.swap_mib is not None:
                raise ValueError(f"swap_mib = {self.swap_mib} with swap = 'zram': zram swaps to "
                                 f"memory, the disk holds no swap area; allowed: zram_mib "
                                 f"(the zram device's size)")
            missing = [key for key in ("zram_mib", "compressor") if getattr(self, key) is None]
            if missing:
                raise ValueError(f"swap = 'zram' needs {' and '.join(missing)} (zram_mib: the "
                                 f"device's size in MiB before compression; compressor: one "
                                 f"of {', '.join(ZRAM_COMPRESSORS)})")
            if self.nvme:
                raise ValueError(
                    "swap = 'zram' with [disk.timing] interface = 'nvme': not supported yet. "
                    "It would put root on the NVMe namespace unpartitioned (/dev/nvme0n1) "
                    "with swap in memory, a guest layout that neither gem5-patches/0007's "
                    "wiring nor any boot has been checked with; allowed: swap = "
                    "\"partition\" on an NVMe drive (root and swap the namespace's "
                    "partitions), or zram with a SATA drive (interface = 'sata') or any "
                    "other disk timing")
            return self
        given = [key for key in ("zram_mib", "compressor") if getattr(self, key) is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} given with swap = {self.swap!r}: only a "
                             f"zram profile has them (swap = 'zram')")
        if self.swap_mib is None:
            raise ValueError(f"swap = {self.swap!r} needs swap_mib (the swap area's size in "
                             f"MiB)")
        return self


class System(Part):
    name: str
    description: str
    cpu: Cpu
    caches: Caches
    memory: Memory
    disk: Disk
    # Opt-in workloads (meta.toml's opt_in) this system's image holds beside the others:
    # a variant of an experiment that needs its own programs or data runs on a profile
    # that names it, and every other profile's image, and its runs, stay as they were.
    opt_in_workloads: Annotated[tuple[str, ...], BeforeValidator(_as_tuple)] = ()
    path: Path | None = None

    def identity(self) -> dict:
        """Everything about the system that can change a result (not its description,
        file or the disk's measured calibration)."""
        data = self.model_dump(mode="json", exclude={"description": True, "path": True,
                                                     "disk": {"calibration"}})
        # Keys that came with the request-level disk model are left out at their
        # defaults, so a system described the same way keeps the identity it had.
        disk = data["disk"]
        if disk["timing"] is None:
            del disk["timing"]
        elif isinstance(self.disk.timing, DisksimTiming):
            # Our parameter file by its content (the drive's own files are DiskSim's: the
            # DiskSim build's key covers them).
            disk["timing"]["parameters_sha256"] = file_sha256(self.disk.timing.parameters_path)
            if self.disk.timing.media is None:  # as before derived media
                del disk["timing"]["media"]
            else:  # the rewrite's rules are part of the drive
                disk["timing"]["media"]["rewrite"] = DISKSIM_MEDIA_VERSION
        elif isinstance(self.disk.timing, SimplessdTiming):
            # Our drive description by its content (not the validation's wording).
            disk["timing"]["config_sha256"] = file_sha256(self.disk.timing.config_path)
            del disk["timing"]["validation"]
            if self.disk.timing.interface == "sata":  # as before 0007's NVMe drive
                del disk["timing"]["interface"]
        if disk["swap"] == "device":
            del disk["swap"]
        # In only where named, so a profile that names none keeps the identity it had
        # (its image key holds what the workloads are).
        if not data["opt_in_workloads"]:
            del data["opt_in_workloads"]
        # A zram profile's size and compressor are in (its swap_mib, None, is not); a
        # disk's profile keeps the identity it had before zram.
        for key in ("swap_mib", "zram_mib", "compressor"):
            if disk[key] is None:
                del disk[key]
        return data

    def changed(self, **parts) -> "System":
        """A copy with some keys of its parts replaced, checked again: e.g.
        changed(name="x", cpu={"clock": "1.5GHz"})."""
        data = self.model_dump()
        for key, value in parts.items():
            data[key] = {**data[key], **value} if isinstance(value, dict) else value
        try:
            return System.model_validate(data)
        except ValidationError as error:
            raise config_error(self.path, error, System) from None

    @property
    def memory_mib(self) -> int:
        return self.memory.size_mib

    def memory_layout(self) -> dict:
        """What a checkpoint depends on: it can be restored only onto the same layout.

        The clock is part of it because the guest calibrated its TSC at boot: restoring
        onto another clock would skew every time the guest measures. So is a drive's
        write cache, which the guest learns at boot: a disk that reports none shares no
        boot with one that does (a run restored across them would cache writes the guest
        never flushes). So is an NVMe drive (gem5-patches/0007): its guest boots with
        another disk controller and device names. Each is said only when there is one, so
        other layouts keep their keys.
        """
        layout = {"memory_type": self.memory.type, "memory_mib": self.memory.size_mib,
                  "cores": self.cpu.cores, "clock": self.cpu.clock}
        # The guest sets zram up at boot, before the checkpoint: its size and compressor
        # are in the checkpoint's memory, as a disk's swap size is in its image.
        if self.disk.swap == "zram":
            layout.update(zram_mib=self.disk.zram_mib, compressor=self.disk.compressor)
        else:
            layout["swap_mib"] = self.disk.swap_mib
        layout["swap"] = self.disk.swap
        if self.disk.reports_write_cache:
            layout["write_cache"] = True
        if self.disk.nvme:
            layout["disk_interface"] = "nvme"
        return layout


def parse_system(name: str, table: dict, path: Path) -> System:
    try:
        return System.model_validate({**table, "name": name, "path": path})
    except ValidationError as error:
        raise config_error(path, error, System) from None


def system_names(directory: Path = SYSTEMS_DIR) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.toml"))


def get_system(name: str, directory: Path = SYSTEMS_DIR) -> System:
    path = directory / f"{name}.toml"
    if not path.is_file():
        raise StudyError(f"unknown system '{name}'; allowed (from {directory}): "
                         f"{', '.join(system_names(directory))}")
    return parse_system(name, load(path), path)
