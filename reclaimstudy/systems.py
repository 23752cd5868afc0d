"""Hardware profiles (configs/systems/*.toml): CPU, caches, DRAM, memory size, disk latency.

A profile reads as the composition gem5's standard library builds (processor, cache
hierarchy, memory, board); QEMU uses only its memory size, cores and swap size.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.tomlfile import check_keys, load

SYSTEMS_DIR = CONFIGS / "systems"
CPU_MODELS = ("atomic", "timing", "o3")
HIERARCHIES = ("none", "private-l1-private-l2", "private-l1-shared-l2")
MEMORY_TYPES = ("DDR3_1600", "DDR4_2400", "LPDDR3_1600")
# Below this the Debian userland, the runtime and a workload's own floor do not fit.
MIN_MEMORY_MIB = 96
# gem5's X86Board maps at most 3 GiB of memory.
MAX_MEMORY_MIB = 3072
# gem5 v24.0 keeps IdeDisk.delay in an `int` of ticks (picoseconds): past 2^31 - 1 ps
# it wraps around (5000 us runs as 705 us), so longer delays cannot be modelled.
MAX_DISK_DELAY_US = 2147
SIZE = re.compile(r"^\d+(KiB|MiB)$")
CLOCK = re.compile(r"^\d+(\.\d+)?(GHz|MHz)$")


@dataclass(frozen=True)
class System:
    name: str
    description: str
    cpu_model: str
    cores: int
    clock: str
    hierarchy: str
    l1d: str | None
    l1i: str | None
    l2: str | None
    memory_type: str
    memory_mib: int
    disk_profile: str
    disk_delay_us: float
    swap_mib: int
    path: Path
    # Measured in the guest by the disk-calib workload on gem5 (not an input).
    disk_calibration: dict | None = None

    def identity(self) -> dict:
        """Everything about the system that can change a result."""
        fields = dict(self.__dict__)
        for key in ("path", "description", "disk_calibration"):
            fields.pop(key)
        return fields

    @property
    def clock_hz(self) -> int:
        """The CPU clock in Hz ("2GHz" -> 2_000_000_000)."""
        return round(float(self.clock[:-3]) * {"GHz": 1e9, "MHz": 1e6}[self.clock[-3:]])

    def memory_layout(self) -> dict:
        """What a checkpoint depends on: it can be restored only onto the same layout.

        The clock is part of it because the guest calibrated its TSC at boot: restoring
        onto another clock would skew every time the guest measures.
        """
        return {"memory_type": self.memory_type, "memory_mib": self.memory_mib,
                "cores": self.cores, "clock": self.clock, "swap_mib": self.swap_mib}


def _choice(where: str, key: str, value, allowed) -> str:
    if value not in allowed:
        raise StudyError(f"{where}: {key} = {value!r}; allowed: {', '.join(allowed)}")
    return value


def _integer(where: str, key: str, value, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise StudyError(f"{where}: {key} = {value!r}; allowed: integers {low}..{high}")
    return value


def _pattern(where: str, key: str, value, pattern: re.Pattern, example: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise StudyError(f"{where}: {key} = {value!r}; expected a value like {example!r}")
    return value


def parse_system(name: str, table: dict, path: Path) -> System:
    where = str(path)
    check_keys(where, table, {"description", "cpu", "caches", "memory", "disk"},
               {"description", "cpu", "caches", "memory", "disk"})
    cpu, caches, memory, disk = table["cpu"], table["caches"], table["memory"], table["disk"]
    check_keys(f"{where} [cpu]", cpu, {"model", "cores", "clock"}, {"model", "cores", "clock"})
    check_keys(f"{where} [caches]", caches, {"hierarchy", "l1d", "l1i", "l2"}, {"hierarchy"})
    check_keys(f"{where} [memory]", memory, {"type", "size_mib"}, {"type", "size_mib"})
    check_keys(f"{where} [disk]", disk, {"profile", "delay_us", "swap_mib", "calibration"},
               {"profile", "delay_us", "swap_mib"})
    calibration = disk.get("calibration", {})
    check_keys(f"{where} [disk.calibration]", calibration,
               {"random_4k_latency_us", "sequential_mib_s", "measured_with"},
               {"random_4k_latency_us", "sequential_mib_s", "measured_with"} if calibration else set())
    hierarchy = _choice(f"{where} [caches]", "hierarchy", caches["hierarchy"], HIERARCHIES)
    sizes = {}
    for level in ("l1d", "l1i", "l2"):
        if hierarchy == "none":
            if level in caches:
                raise StudyError(f"{where} [caches]: {level} given with hierarchy = 'none'")
            sizes[level] = None
        elif level not in caches:
            raise StudyError(f"{where} [caches]: {level} is required with hierarchy = '{hierarchy}'")
        else:
            sizes[level] = _pattern(f"{where} [caches]", level, caches[level], SIZE, "32KiB")
    memory_mib = memory["size_mib"]
    if isinstance(memory_mib, int) and memory_mib < MIN_MEMORY_MIB:
        raise StudyError(f"{where} [memory]: size_mib = {memory_mib} is too small; "
                         f"allowed: {MIN_MEMORY_MIB}..{MAX_MEMORY_MIB} MiB")
    delay = disk["delay_us"]
    if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay <= 0:
        raise StudyError(f"{where} [disk]: delay_us = {delay!r}; allowed: a number > 0")
    if delay > MAX_DISK_DELAY_US:
        raise StudyError(f"{where} [disk]: delay_us = {delay!r} is more than gem5 v24.0 can model; "
                         f"allowed: up to {MAX_DISK_DELAY_US} (IdeDisk keeps the delay in a 32-bit "
                         f"int of picoseconds, so larger values wrap around)")
    return System(
        name=name,
        description=table["description"],
        cpu_model=_choice(f"{where} [cpu]", "model", cpu["model"], CPU_MODELS),
        cores=_integer(f"{where} [cpu]", "cores", cpu["cores"], 1, 8),
        clock=_pattern(f"{where} [cpu]", "clock", cpu["clock"], CLOCK, "2GHz"),
        hierarchy=hierarchy, **sizes,
        memory_type=_choice(f"{where} [memory]", "type", memory["type"], MEMORY_TYPES),
        memory_mib=_integer(f"{where} [memory]", "size_mib", memory_mib,
                            MIN_MEMORY_MIB, MAX_MEMORY_MIB),
        disk_profile=str(disk["profile"]),
        disk_delay_us=float(delay),
        swap_mib=_integer(f"{where} [disk]", "swap_mib", disk["swap_mib"], 16, 65536),
        path=path,
        disk_calibration=calibration or None,
    )


def system_names(directory: Path = SYSTEMS_DIR) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.toml"))


def get_system(name: str, directory: Path = SYSTEMS_DIR) -> System:
    path = directory / f"{name}.toml"
    if not path.is_file():
        raise StudyError(f"unknown system '{name}'; allowed (from {directory}): "
                         f"{', '.join(system_names(directory))}")
    return parse_system(name, load(path), path)
