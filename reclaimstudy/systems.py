"""Hardware profiles (configs/systems/*.toml): CPU, caches, memory, disk.

A profile is composed the way gem5's standard library builds a board: a processor
(`cpu`), a cache hierarchy (`caches`), memory and the disks, each a part of its own,
as in the TOML file. QEMU uses only the memory size, cores and swap size. The allowed
values here are the ones configs/gem5/reclaim_fs.py builds (a test checks they agree).
"""

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_validator

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.tomlfile import config_error, load, number, one_of, whole_number

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


class Disk(Part):
    profile: str
    # IdeDisk.delay, per DMA descriptor; TOML may give it as a whole number.
    delay_us: Annotated[float, number(), AfterValidator(_disk_delay)]
    swap_mib: Annotated[int, whole_number(16, 65536)]
    calibration: DiskCalibration | None = None


class System(Part):
    name: str
    description: str
    cpu: Cpu
    caches: Caches
    memory: Memory
    disk: Disk
    path: Path | None = None

    def identity(self) -> dict:
        """Everything about the system that can change a result (not its description,
        file or the disk's measured calibration)."""
        return self.model_dump(mode="json", exclude={"description": True, "path": True,
                                                     "disk": {"calibration"}})

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
        onto another clock would skew every time the guest measures.
        """
        return {"memory_type": self.memory.type, "memory_mib": self.memory.size_mib,
                "cores": self.cpu.cores, "clock": self.cpu.clock, "swap_mib": self.disk.swap_mib}


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
