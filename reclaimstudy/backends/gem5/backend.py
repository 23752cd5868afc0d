"""The gem5 backend: the study's instrument, with modelled CPU, caches, DRAM and disk.

gem5 is a prerequisite the user provides: an X86 build of gem5 v24.0 named by the
GEM5 environment variable. A study boots once per (gem5, kernel, image, memory layout)
and checkpoints right after boot; every run restores that checkpoint onto its
system profile and gets its job through readfile (configs/gem5/reclaim_fs.py).
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.artefacts import disksim_media
from reclaimstudy.artefacts.image import Image, build_image, image_inputs, image_key, image_record
from reclaimstudy.artefacts.kernel import Kernel, build_kernel, configured_hz, current_kernel_key
from reclaimstudy.artefacts.shared import compilers_of, links_tcmalloc
from reclaimstudy.backends.base import Backend, Outcome, Prepared
from reclaimstudy.backends.gem5.checkpoint import drive_state, lower_interrupt_pins
from reclaimstudy.backends.gem5.segments import CONSOLE, backlog_max, run_segmented
from reclaimstudy.backends.guest import kernel_cmdline
from reclaimstudy.config.systems import DisksimTiming, SimplessdTiming, System
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.paths import CONFIGS, cache_dir
from reclaimstudy.results import gem5_stats
from reclaimstudy.results.record import run_seed
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.progress import console
from reclaimstudy.util.subprocesses import run_measured

NAME = "gem5"
CONFIG_SCRIPT = CONFIGS / "gem5" / "reclaim_fs.py"
IDENTIFY = CONFIGS / "gem5" / "identify.py"
# What a run's identity knows of CONFIG_SCRIPT, per drive model: the script's sha256 as of
# the last change to what that model's systems simulate. A change that only adds another
# model's path (DiskSim's, SimpleSSD's, NVMe's, eMMC's) leaves every other model's runs
# their ids, where hashing the whole file gave every run of every study a new id at each
# new device.
# SCRIPT_SHA256 is the file as it is: tests/test_gem5_checkpoint.py fails when the file
# changes, so that each change is a decision about these keys (a model whose path changed
# what it simulates takes the new hash: its runs start again). "multi-core" is the script
# as of the last change to what a system of more than one core simulates, whatever its
# drive (0009's flag updates, turned on for such a system alone; the console drained
# after `m5 exit`, DRAIN_MAX_S): script_key.
SCRIPT_SHA256 = "e9213796baa952cdccafddc334d461f0fc6dca8ded76d37d4b5202cd8674beb0"
SCRIPT_KEYS = {
    "analytic": "8669441db6b0aef830e351c758642ca0bca520b7edf87b24f3361be475259fef",
    "disksim": "f3339f2dc77a64ab92c34ecd37222722c02bbd7933dc248ac8b2fef735ef1f88",
    # A derived DiskSim drive with rewritten platters ([disk.timing.media]): its files
    # found in a folder of their own (search_path).
    "disksim-media": "e9213796baa952cdccafddc334d461f0fc6dca8ded76d37d4b5202cd8674beb0",
    "simplessd": "351f1ac912ac1dfd274124c39c329bd469179a9f42a7a487d276a5e4a1eb41e6",
    "simplessd-nvme": "864bf609a5d2a9eaf6dbc047af930de59af92541fd75b3c6c99bb1e80a7c2f1a",
    "simplessd-emmc": "d4806c0ac1c6954753a8d6cfeaacec68b7082952d255589f2edca7265bafacfb",
    "multi-core": "fd7aaf7b3b09b735449a98714dc055bf7ee1ba1fcf27729788e23b1785a4f13b",
}
IDENTITY_MARK = "RECLAIM-GEM5-IDENTITY "
EXPECTED_VERSION = "24.0"

BOOT_SIM_SECONDS = 30.0
BOOT_HOST_SECONDS = 3600.0
DEFAULT_TIMEOUT_S = 4 * 3600.0
MISSING_HINT = (
    "the gem5 backend needs an X86 build of gem5 v24.0 with gem5-patches/: "
    "`./study gem5 --source DIR` builds one from a gem5 v24.0.0.1 checkout and prints the "
    "`export GEM5=...` to run. Without gem5, `--backend qemu` runs the same jobs "
    "functionally, with no hardware timing.")
UNPATCHED_HINT = (
    "build one with `./study gem5 --source DIR` (DIR: a gem5 v24.0.0.1 checkout; it applies "
    "gem5-patches/ to a copy and builds it) and export the GEM5 it prints")


def gem5_kernel_args(kernel_hz: int, system: System) -> str:
    """idle=halt against the mwait_idle oops reported after CPU switches, and a fixed
    loops-per-jiffy so the guest skips calibration. gem5's TSC counts CPU cycles
    (src/arch/x86/isa.cc), so udelay()'s delay_tsc needs clock / HZ. gem5's stdlib
    default, lpj=7999923, fits 2 GHz at HZ=250: at our HZ=1000 it made every udelay
    four times too long (libata's per-command delays took 40 us instead of 10).

    With more than one core, tsc=reliable: gem5's CPU (vendor "HygonGenuine", no
    constant_tsc flag) on more than one possible CPU makes 6.1's unsynchronized_tsc()
    mark the TSC unstable at boot, and the guest then keeps time with refined-jiffies,
    one tick (1 ms) at a time: every timing the guest took was a whole number of
    milliseconds (ebizzy's 14 ms phases read as 13 or 15). gem5's cores count cycles of
    one clock from tick 0, so their TSCs agree; one core keeps its arguments (and its
    boot checkpoints and runs)."""
    smp = " tsc=reliable" if system.cpu.cores > 1 else ""
    return f"idle=halt lpj={system.cpu.hz // kernel_hz}{smp}"


@dataclass(frozen=True)
class Gem5:
    path: Path
    version: str
    sha256: str
    build: dict
    # The gem5-patches/ series built in (None: a stock gem5).
    series: str | None = None
    tcmalloc: bool | None = None
    compilers: tuple[str, ...] = ()
    # The DiskSim linked in (`./study gem5 --disksim DIR`; gem5-patches/0005), as its
    # identify run reports it (None: none).
    disksim: dict | None = None
    # The SimpleSSD linked in (`./study gem5 --simplessd DIR`; gem5-patches/0006), as its
    # identify run reports it (None: none).
    simplessd: dict | None = None
    # gem5-patches/0009's version of the page walker's atomic flag updates
    # (X86TLB.RECLAIMSTUDY_PTE_ATOMIC; None: a gem5 without it).
    pte_atomic: str | None = None

    @property
    def variant(self) -> str:
        """opt, fast, debug... from gem5's own binary names (gem5.VARIANT)."""
        name = self.path.name
        return name.split(".", 1)[1] if name.startswith("gem5.") else "unknown"

    def identity(self) -> dict:
        identity = {"version": self.version, "sha256": self.sha256, "patches": self.series,
                    "variant": self.variant, "tcmalloc": self.tcmalloc,
                    "compilers": list(self.compilers), "simulator": self.simulator_key}
        if self.disksim:
            identity["disksim"] = self.disksim_identity
        if self.simplessd:
            simplessd = dict(self.simplessd_identity or {})
            if self.simplessd_nvme:
                simplessd["nvme"] = self.simplessd_nvme
            if self.simplessd_emmc:
                simplessd["emmc"] = self.simplessd_emmc
            identity["simplessd"] = simplessd
        if self.pte_atomic:
            identity["pte_atomic"] = self.pte_atomic
        return identity

    @property
    def disksim_identity(self) -> dict | None:
        """The DiskSim in this binary as a run is keyed by: its build's key (DiskSim's
        source, disksim-patches/, recipe) and gem5-patches/0005's model version; not
        where its files lie."""
        if not self.disksim:
            return None
        return {key: self.disksim.get(key) for key in ("key", "version", "timing")}

    @property
    def simplessd_identity(self) -> dict | None:
        """The SimpleSSD in this binary as a run is keyed by: its build's key (SimpleSSD's
        source, simplessd-patches/, recipe) and gem5-patches/0006's model version."""
        if not self.simplessd:
            return None
        return {key: self.simplessd.get(key) for key in ("key", "version", "timing")}

    @property
    def simplessd_nvme(self) -> str | None:
        """gem5-patches/0007's device version in this binary (SimpleSSDNVMe's
        RECLAIMSTUDY_SIMPLESSD_NVME), None without it."""
        return (self.simplessd or {}).get("nvme")

    @property
    def simplessd_emmc(self) -> str | None:
        """gem5-patches/0008's eMMC bus version in this binary (SimpleSSDTiming's
        RECLAIMSTUDY_SIMPLESSD_EMMC), None without it."""
        return (self.simplessd or {}).get("emmc")

    def key_for(self, system: System) -> str:
        """The simulator key of a run on `system`: the binary's, and for a drive timed by
        DiskSim or SimpleSSD that simulator in it as well (an NVMe drive's with 0007's
        device version too, an eMMC drive's with 0008's bus version). Other runs keep the
        binary's key whether or not either is linked in (their simulation does not touch
        it), and a SATA SimpleSSD drive's runs theirs whether or not 0007 or 0008 is
        built in. A system of more than one core adds 0009's version (its walkers set
        the page-table flags atomically); one core keeps its key with or without 0009,
        which is off there."""
        key = self._drive_key(system)
        if system.cpu.cores > 1:
            return json_sha256({"simulator": key, "pte_atomic": self.pte_atomic})[:16]
        return key

    def _drive_key(self, system: System) -> str:
        if uses_disksim(system):
            return json_sha256({"simulator": self.simulator_key,
                                "disksim": self.disksim_identity})[:16]
        if uses_simplessd(system):
            simplessd = self.simplessd_identity
            if system.disk.nvme:
                simplessd = {**(simplessd or {}), "nvme": self.simplessd_nvme}
            if system.disk.timing.interface == "emmc":
                simplessd = {**(simplessd or {}), "emmc": self.simplessd_emmc}
            return json_sha256({"simulator": self.simulator_key,
                                "simplessd": simplessd})[:16]
        return self.simulator_key

    @property
    def simulator_key(self) -> str:
        """What the simulation depends on: release, our patch series, variant, build
        options, malloc and compiler; what run ids and checkpoints are keyed by. Not the
        binary's hash: gem5 embeds its compile time (base/date.cc), so every rebuild of
        the same source hashes differently, and a study carried on after a rebuild (a
        new machine) would redo every run. The binary's sha256 stays in each run.json."""
        return json_sha256({"version": self.version, "patches": self.series,
                            "variant": self.variant, "options": self.build,
                            "tcmalloc": self.tcmalloc, "compilers": list(self.compilers)})[:16]



# What gem5-patches/ 0001-0004 write in the series' name (DiskTiming.RECLAIMSTUDY_SERIES),
# and why no run may go without them. The name is all the run identity knows of the
# patches (Gem5.simulator_key): a patch changed in what it simulates bumps its marker.
DISK_TIMING = "disk-timing-2"
INTERRUPT_SHADOW = "sti-shadow-1"
PTE_FLAGS = "pte-ad-1"
CHECKPOINT_STATE = "ckpt-state-2"
SERIES = " ".join((DISK_TIMING, INTERRUPT_SHADOW, PTE_FLAGS, CHECKPOINT_STATE))
# gem5-patches/0009's version (X86TLB.RECLAIMSTUDY_PTE_ATOMIC), named apart from SERIES:
# one-core runs do not use it, so it is in the key of multi-core runs alone (key_for).
PTE_ATOMIC = "pte-ad-smp-1"
REQUIRED = {
    INTERRUPT_SHADOW: ("0002", "gem5 v24.0.0.1 takes an interrupt between STI and HLT, so "
                       "the idle guest can halt with work queued and sleep until its next "
                       "timer (hundreds of ms while a disk waits)"),
    PTE_FLAGS: ("0003", "gem5 v24.0.0.1 never sets the accessed flag in a leaf page-table "
                "entry (nor the dirty flag), so once Linux has cleared it every mapped page "
                "looks unreferenced to reclaim, however often it is used"),
    CHECKPOINT_STATE: ("0004", "without it every checkpoint restore (each segment boundary "
                       "of a run) empties the modelled disk's write cache and queue, puts "
                       "its head back at sector 0 and its random source back at the seed"),
    DISK_TIMING: ("0001", "its first version (disk-timing-1) left ATA IDENTIFY word 217, "
                  "the media rotation rate, at 0, so the guest saw every drive, flash too, "
                  "as rotating"),
}


def uses_disksim(system: System) -> bool:
    return isinstance(system.disk.timing, DisksimTiming)


def uses_simplessd(system: System) -> bool:
    return isinstance(system.disk.timing, SimplessdTiming)


DISKSIM_HINT = (
    "build gem5 with DiskSim linked in: `./study gem5 --source GEM5_DIR --disksim "
    "DISKSIM_DIR` (DISKSIM_DIR: a clone of github.com/westerndigitalcorporation/DiskSim), "
    "and export the GEM5 it prints")
SIMPLESSD_HINT = (
    "build gem5 with SimpleSSD linked in: `./study gem5 --source GEM5_DIR --simplessd "
    "SIMPLESSD_DIR` (SIMPLESSD_DIR: a clone of github.com/SimpleSSD/SimpleSSD-Standalone "
    "with its submodules), and export the GEM5 it prints")
NVME_HINT = (
    "build gem5 again from this checkout, whose gem5-patches/series holds 0007: `./study "
    "gem5 --source GEM5_DIR --simplessd SIMPLESSD_DIR`, and export the GEM5 it prints")
EMMC_HINT = NVME_HINT.replace("holds 0007", "holds 0008")
PTE_ATOMIC_HINT = (
    "build gem5 again from this checkout, whose gem5-patches/series holds 0009: `./study "
    "gem5 --source GEM5_DIR` (with the --disksim or --simplessd the profile's drive needs), "
    "and export the GEM5 it prints")


def require_patches(gem5: Gem5, system: System) -> None:
    """Every run needs 0002's interrupt shadow, 0003's page-table flags, 0004's
    checkpointed state and 0001's current version (the drive's class in IDENTIFY); a
    request-level disk needs 0001's model too, and a system of more than one core
    0009's atomic flag updates and caches (or the atomic CPU)."""
    if system.disk.timing is not None and gem5.series is None:
        raise StudyError(
            f"system {system.name} models its disk per request ([disk.timing] model = "
            f"{system.disk.timing.model!r}), which needs gem5 built with gem5-patches/, but "
            f"GEM5={gem5.path} is a stock gem5: {UNPATCHED_HINT}")
    if uses_disksim(system) and not gem5.disksim:
        raise StudyError(
            f"system {system.name} times its disk with DiskSim ([disk.timing] model = "
            f"'disksim', {system.disk.timing.drive}), but GEM5={gem5.path} was built "
            f"without DiskSim: {DISKSIM_HINT}")
    if uses_simplessd(system) and not gem5.simplessd:
        raise StudyError(
            f"system {system.name} times its disk with SimpleSSD ([disk.timing] model = "
            f"'simplessd', {system.disk.timing.drive}), but GEM5={gem5.path} was built "
            f"without SimpleSSD: {SIMPLESSD_HINT}")
    if system.disk.nvme and not gem5.simplessd_nvme:
        raise StudyError(
            f"system {system.name} puts its SimpleSSD drive on the PCI bus as an NVMe drive "
            f"([disk.timing] interface = 'nvme'), which needs gem5-patches/0007 "
            f"(SimpleSSDNVMe), but GEM5={gem5.path} was built without it (SimpleSSD "
            f"{(gem5.simplessd or {}).get('key')} linked in, with 0006's IDE drive only): "
            f"{NVME_HINT}")
    if (uses_simplessd(system) and system.disk.timing.interface == "emmc"
            and not gem5.simplessd_emmc):
        raise StudyError(
            f"system {system.name} puts its SimpleSSD drive behind an eMMC bus "
            f"([disk.timing] interface = 'emmc'), which needs gem5-patches/0008, but "
            f"GEM5={gem5.path} was built without it (SimpleSSD "
            f"{(gem5.simplessd or {}).get('key')} linked in, its IDE drive behind SATA "
            f"only): {EMMC_HINT}")
    have = (gem5.series or "").split()  # SERIES
    for marker, (patch, why) in REQUIRED.items():
        if marker not in have:
            built = f"built with series {gem5.series!r}" if gem5.series else "a stock gem5"
            raise StudyError(f"GEM5={gem5.path} is {built}, without gem5-patches/{patch} "
                             f"({marker}): {why}: {UNPATCHED_HINT}")
    if system.cpu.cores > 1:
        require_atomic_flags(gem5, system)


def require_atomic_flags(gem5: Gem5, system: System) -> None:
    """A system of more than one core needs atomic updates of page-table entries: by
    Linux's locked instructions, which only a cache can make atomic in gem5 (or the
    atomic CPU, which runs one core at a time), and by the walkers' flag updates
    (gem5-patches/0009, which reclaim_fs.py turns on for such a system)."""
    if system.caches.hierarchy == "none" and system.cpu.model != "atomic":
        raise StudyError(
            f"system {system.name} has {system.cpu.cores} {system.cpu.model} cores and no "
            f"caches ([caches] hierarchy = 'none'): with no cache to hold a line, gem5 makes "
            f"no read-modify-write atomic between cores, not Linux's locked instructions nor "
            f"the page walkers' flag updates; give it a cache hierarchy "
            f"(private-l1-private-l2 or private-l1-shared-l2), or the atomic CPU")
    if not gem5.pte_atomic:
        raise StudyError(
            f"system {system.name} has {system.cpu.cores} cores, which needs "
            f"gem5-patches/0009 (the page walkers' atomic accessed/dirty flag updates, "
            f"X86TLB.RECLAIMSTUDY_PTE_ATOMIC = {PTE_ATOMIC!r}): without it a walker's "
            f"plain write of the flags can undo another core's change to the entry (Linux "
            f"clearing it, the page then freed while still mapped), but GEM5={gem5.path} "
            f"was built without 0009: {PTE_ATOMIC_HINT}")


def _build_info(path: Path) -> dict:
    """Version and build options, from our identify script run by the binary itself
    (gem5 v24.0.0.1's own `-B` fails)."""
    with tempfile.TemporaryDirectory() as outdir:
        try:
            result = subprocess.run([str(path), "--quiet", f"--outdir={outdir}", str(IDENTIFY)],
                                    capture_output=True, text=True, timeout=300)
        except OSError as error:
            raise StudyError(f"GEM5={path} cannot be run ({error}); {MISSING_HINT}") from None
    for line in result.stdout.splitlines():
        if line.startswith(IDENTITY_MARK):
            return json.loads(line[len(IDENTITY_MARK):])
    raise StudyError(f"GEM5={path} did not run a gem5 configuration script "
                     f"(exit {result.returncode}: {result.stderr.strip()[-300:]}); {MISSING_HINT}")


def find_gem5() -> Gem5:
    """The user's gem5 from GEM5, checked to be an X86 build; never a silent fallback."""
    value = os.environ.get("GEM5")
    if not value:
        raise StudyError(f"GEM5 is not set: {MISSING_HINT}")
    path = Path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise StudyError(f"GEM5={value} is not an executable file: {MISSING_HINT}")
    stat = path.stat()
    memo_path = cache_dir() / "gem5-binaries.json"
    memo = json.loads(memo_path.read_text()) if memo_path.is_file() else {}
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if key not in memo:
        info = _build_info(path)
        memo[key] = {"sha256": file_sha256(path), "tcmalloc": links_tcmalloc(path),
                     "compilers": compilers_of(path), **info}
        memo_path.write_text(json.dumps(memo, indent=1) + "\n")
    elif "compilers" not in memo[key]:  # remembered before we recorded these
        memo[key].update(tcmalloc=links_tcmalloc(path), compilers=compilers_of(path))
        memo_path.write_text(json.dumps(memo, indent=1) + "\n")
    entry = memo[key]
    options = entry["options"]
    isas = {options.get("TARGET_ISA", "").lower()} | \
        {k[4:-4].lower() for k, v in options.items() if k.startswith("USE_") and
         k.endswith("_ISA") and v in ("True", "1", "y")}
    if "x86" not in isas:
        raise StudyError(f"GEM5={value} is not an X86 build of gem5 (its ISAs: "
                         f"{', '.join(sorted(i for i in isas if i)) or 'unknown'}): {MISSING_HINT}")
    if not entry["version"].startswith(EXPECTED_VERSION):
        console.print(f"warning: GEM5 is gem5 {entry['version']}; the study was made with "
                      f"v{EXPECTED_VERSION} (Linux >= 6.8 and other details differ across versions)")
    return Gem5(path, entry["version"], entry["sha256"], options,
                entry.get("reclaimstudy_series"), entry.get("tcmalloc"),
                tuple(entry.get("compilers", ())), entry.get("disksim"),
                entry.get("simplessd"), entry.get("pte_atomic"))


# The boot's drives draw from a seed no run uses (runs: 1 + repetition): a run restoring
# the boot takes over its drives' place, and 0004 reseeds them from the run's own seed.
BOOT_DISK_SEED = 0


def gem5_params(mode: str, system: System, kernel: Kernel, image: Image, checkpoint: Path,
                cpu: str, kernel_args: str, job: str | None = None, disk_seed: int = 1,
                max_sim_seconds: float = BOOT_SIM_SECONDS,
                max_host_seconds: float = BOOT_HOST_SECONDS) -> dict:
    """Everything configs/gem5/reclaim_fs.py needs, as plain JSON."""
    run = mode == "run"
    return {
        "mode": mode,
        "kernel": str(kernel.vmlinux),
        # Root and swap disks, or one disk holding both ([disk] swap = "partition").
        "disks": [str(path) for path in image.disks(system.disk.swap)],
        "kernel_args": kernel_args.split(),
        "cpu": cpu,
        "cores": system.cpu.cores,
        "clock": system.cpu.clock,
        # The boot has no caches; the run gets the profile's.
        "caches": system.caches.model_dump() if run else {"hierarchy": "none"},
        "memory": system.memory.model_dump(),
        "disk_delay_us": system.disk.delay_us,
        # gem5-patches/' request-level model, seeded (None: gem5's delay per descriptor).
        "disk_timing": disk_timing_params(system),
        "disk_seed": disk_seed,
        "checkpoint": str(checkpoint),
        "readfile_contents": job,
        "max_sim_seconds": max_sim_seconds,
        "max_host_seconds": max_host_seconds,
        "guard_interval_ms": 10.0,
    }


def disk_timing_params(system: System) -> dict | None:
    """The profile's [disk.timing] for reclaim_fs.py; a DiskSim drive's parameter file
    and a SimpleSSD drive's configuration with their paths on this machine."""
    if system.disk.timing is None:
        return None
    timing = system.disk.timing.model_dump()
    if uses_disksim(system):
        timing["parameters_path"] = str(system.disk.timing.parameters_path)
    if uses_simplessd(system):
        timing["config_path"] = str(system.disk.timing.config_path)
    return timing


def run_params(spec, prepared: Prepared, job: str, timeout_s: float,
               max_sim_seconds: float = 3600.0) -> dict:
    """A run's parameters: the spec's system restored from its boot checkpoint."""
    system, kernel = spec.system, prepared.parts["kernel"]
    return gem5_params("run", system, kernel, prepared.parts["image"],
                       prepared.parts["checkpoint"] / "cpt", system.cpu.model,
                       kernel_cmdline(NAME, gem5_kernel_args(kernel.hz, system), system.disk),
                       job=job, disk_seed=run_seed(spec.repetition),
                       max_sim_seconds=max_sim_seconds, max_host_seconds=timeout_s)


def with_derived_drive(gem5: Gem5, params: dict) -> dict:
    """A derived DiskSim drive's platters ([disk.timing.media]): its model file rewritten
    from the DiskSim linked into this gem5 (artefacts/disksim_media.py), in a folder gem5's
    DiskSim searches instead of that build's valid/."""
    timing = params.get("disk_timing") or {}
    if timing.get("model") != "disksim" or not timing.get("media"):
        return params
    if not gem5.disksim:
        raise StudyError(f"a derived DiskSim drive ({timing['drive']}) needs a gem5 built with "
                         f"DiskSim: {DISKSIM_HINT}")
    folder = disksim_media.derived_drive_dir(
        Path(gem5.disksim["valid_dir"]), Path(timing["parameters_path"]),
        timing["media"]["outer_blocks_per_track"], timing["media"]["capacity_sectors"])
    return {**params, "disk_timing": {**timing, "search_path": str(folder)}}


def simulate(gem5: Gem5, params: dict, outdir: Path, timeout_s: float) -> dict:
    """Run gem5 on reclaim_fs.py; return result.json plus host measurements (and, for a
    restore, the interrupt pins lowered in its checkpoint and its drives' state there:
    checkpoint.py)."""
    outdir.mkdir(parents=True, exist_ok=True)
    params = with_derived_drive(gem5, params)
    restoring = params["mode"] == "run"
    lowered = lower_interrupt_pins(Path(params["checkpoint"])) if restoring else []
    drives = drive_state(Path(params["checkpoint"])) if restoring else {}
    params_path = outdir / "params.json"
    params_path.write_text(json.dumps(params, indent=2) + "\n")
    measured = run_measured(
        [str(gem5.path), "--outdir", str(outdir), "--redirect-stdout", "--redirect-stderr",
         str(CONFIG_SCRIPT), str(params_path)], timeout_s=timeout_s, log_path=outdir / "gem5.log")
    result_path = outdir / "result.json"
    result = json.loads(result_path.read_text()) if result_path.is_file() else {
        "status": "crashed", "detail": f"gem5 exited {measured['exit_code']} without a result "
                                       f"(see {outdir}/simerr.txt)"}
    if measured["timed_out"]:
        result = {"status": "host-timeout", "detail": f"killed after {timeout_s:.0f} s"}
    # Which binary made it: a run carried to a new machine (campaigns/carry.py) is made by two.
    measured = {**measured, "gem5_sha256": gem5.sha256}
    return {**result, "host": measured, "pins_lowered": lowered, "drives_at_restore": drives}


def kvm_usable(gem5: Gem5, system: System, kernel: Kernel, image: Image) -> tuple[bool, str]:
    """Whether gem5's KVM CPU runs here; the verdict is cached per gem5 binary and host."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is missing or not accessible"
    memo_path = cache_dir() / "gem5-kvm-verdict.json"
    key = f"{gem5.sha256}:{os.uname().release}"
    memo = json.loads(memo_path.read_text()) if memo_path.is_file() else {}
    if key not in memo:
        probe = cache_dir() / "gem5-kvm-probe"
        shutil.rmtree(probe, ignore_errors=True)
        params = gem5_params("boot", system, kernel, image, probe / "cpt", "kvm",
                             kernel_cmdline(NAME, gem5_kernel_args(kernel.hz, system), system.disk),
                             max_sim_seconds=0.5,
                             max_host_seconds=60)
        result = simulate(gem5, params, probe / "out", timeout_s=120)
        log = (probe / "out" / "simerr.txt")
        text = log.read_text(errors="replace") if log.is_file() else ""
        usable = result["status"] in ("checkpoint", "sim-time-limit") and "panic" not in text
        first_panic = next((line for line in text.splitlines() if "panic" in line), "")
        memo[key] = {"usable": usable,
                     "reason": "a KVM probe boot ran" if usable else
                     f"gem5's KVM CPU failed here: {first_panic or result['status']}"}
        memo_path.write_text(json.dumps(memo, indent=1) + "\n")
    return memo[key]["usable"], memo[key]["reason"]


def checkpoint_key(gem5: Gem5, kernel: Kernel, image: Image, system: System) -> str:
    return _checkpoint_key(gem5.key_for(system), kernel.manifest["key"], image.manifest["key"],
                           kernel.hz, system)


def _checkpoint_key(simulator_key: str, kernel_key: str, image_key: str, kernel_hz: int,
                    system: System) -> str:
    # The drive model too: 0004 saves its state (head, cache, queue) in the checkpoint,
    # which only a drive of the same model and parameters can take over.
    # (A DiskSim drive's with our parameter file's hash: System.identity.)
    timing = system.identity()["disk"].get("timing")
    return json_sha256({"gem5": simulator_key, "kernel": kernel_key, "image": image_key,
                        "layout": system.memory_layout(), "drive": timing,
                        "boot_disk_seed": BOOT_DISK_SEED,
                        "args": gem5_kernel_args(kernel_hz, system),
                        "script": script_key(system)})[:16]


def script_key(system: System) -> str:
    """CONFIG_SCRIPT as the run identity knows it for this system's drive, and for a
    system of more than one core with the script's multi-core path too (SCRIPT_KEYS)."""
    drive = _drive_script_key(system)
    if system.cpu.cores > 1:
        return json_sha256({"drive": drive, "multi-core": SCRIPT_KEYS["multi-core"]})
    return drive


def _drive_script_key(system: System) -> str:
    if uses_disksim(system):
        return SCRIPT_KEYS["disksim-media" if system.disk.timing.media else "disksim"]
    if uses_simplessd(system):
        if system.disk.nvme:
            return SCRIPT_KEYS["simplessd-nvme"]
        return SCRIPT_KEYS["simplessd-" + system.disk.timing.interface
                           if system.disk.timing.interface == "emmc" else "simplessd"]
    return SCRIPT_KEYS["analytic"]  # our analytic model, or gem5's own fixed delay


def ensure_checkpoint(gem5: Gem5, kernel: Kernel, image: Image, system: System) -> Path:
    """The post-boot checkpoint for this layout: made once (KVM where it works, else atomic)."""
    key = checkpoint_key(gem5, kernel, image, system)
    final = cache_dir() / "checkpoints" / key
    if (final / "manifest.json").is_file():
        return final
    with exclusive(final.with_name(f"{key}.lock"), f"checkpoint {key}"):
        if (final / "manifest.json").is_file():
            return final
        return _boot_and_checkpoint(gem5, kernel, image, system, key, final)


def _boot_and_checkpoint(gem5: Gem5, kernel: Kernel, image: Image, system: System, key: str,
                         final: Path) -> Path:
    usable, why = kvm_usable(gem5, system, kernel, image)
    cpu = "kvm" if usable else "atomic"
    if not usable:
        console.print(f"gem5: booting on the atomic CPU ({why}); a boot takes minutes")
    work = final.with_name(f"{key}.building-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    params = gem5_params("boot", system, kernel, image, work / "cpt", cpu,
                         kernel_cmdline(NAME, f"{gem5_kernel_args(kernel.hz, system)} "
                                              "reclaim.checkpoint=1", system.disk),
                         disk_seed=BOOT_DISK_SEED)
    console.print(f"gem5: boot + checkpoint {key} ({system.memory_mib} MiB "
                  f"{system.memory.type}, {cpu} CPU)")
    result = simulate(gem5, params, work / "boot", timeout_s=BOOT_HOST_SECONDS + 300)
    if result["status"] != "checkpoint":
        raise StudyError(f"gem5 boot for checkpoint {key} failed: {result['status']} "
                         f"{result.get('detail', '')}; logs in {work / 'boot'}")
    # Lowered once here, in the shared cache, so every run restores the same file and
    # the runs' own records list only what their own checkpoints needed.
    lowered = lower_interrupt_pins(work / "cpt")
    manifest = {"key": key, "gem5": gem5.identity(), "kernel": kernel.manifest["key"],
                "pins_lowered": lowered,
                "image": image.manifest["key"], "layout": system.memory_layout(), "cpu": cpu,
                "boot_sim_seconds": result["sim_seconds"],
                "boot_host_seconds": result["host"]["wall_seconds"],
                "boot_peak_rss_mib": result["host"]["max_rss_mib"],
                "made_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if final.exists():
        shutil.rmtree(final)
    work.rename(final)
    console.print(f"gem5: checkpoint {key} saved after {result['host']['wall_seconds']:.0f} s")
    return final


class Gem5Backend(Backend):
    name = NAME
    console_file = CONSOLE

    def identity(self, spec) -> dict:
        gem5 = find_gem5()
        require_patches(gem5, spec.system)
        kernel, image = current_kernel_key(), image_key(image_inputs(spec.system))
        return {"kernel": kernel, "image": image, "gem5": gem5.key_for(spec.system),
                "checkpoint": _checkpoint_key(gem5.key_for(spec.system), kernel, image,
                                              configured_hz(), spec.system)}

    def prepare(self, spec) -> Prepared:
        gem5 = find_gem5()
        require_patches(gem5, spec.system)
        kernel = build_kernel()
        image = build_image(spec.system)
        checkpoint = ensure_checkpoint(gem5, kernel, image, spec.system)
        checkpoint_manifest = json.loads((checkpoint / "manifest.json").read_text())
        return Prepared(
            identity={"kernel": kernel.manifest["key"], "image": image.manifest["key"],
                      "gem5": gem5.key_for(spec.system), "checkpoint": checkpoint_manifest["key"]},
            record={
                "kernel": {key: kernel.manifest[key] for key in
                           ("key", "source_version", "config_sha256", "vmlinux_sha256")},
                "image": image_record(image.manifest),
                "gem5": {"path": str(gem5.path), **gem5.identity()},
                "checkpoint": checkpoint_manifest,
            },
            parts={"gem5": gem5, "kernel": kernel, "image": image, "checkpoint": checkpoint})

    def run(self, spec, prepared: Prepared, job: Path, run_dir: Path,
            timeout_s: float | None = None, work: Path | None = None) -> Outcome:
        timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        gem5, boot = prepared.parts["gem5"], prepared.parts["checkpoint"] / "cpt"
        params = run_params(spec, prepared, job.read_text(), timeout_s)
        schedule = spec.checkpoints()
        if schedule:
            if work is None:
                raise StudyError(f"{spec.point()}: a run with checkpoints needs a folder to "
                                 f"keep them in")
            result = run_segmented(lambda p, out, t: simulate(gem5, p, out, timeout_s=t),
                                   params, boot, schedule["every_sim_s"], work, run_dir,
                                   timeout_s)
        else:
            result = simulate(gem5, params, run_dir, timeout_s=timeout_s + 300)
            gem5_console = run_dir / self.console_file
            if gem5_console.is_file():
                gem5_console.rename(run_dir / "console.log")
        info = {"status": result["status"], "detail": result.get("detail", ""),
                "sim_seconds": result.get("sim_seconds"), **result["host"],
                "pins_lowered": result["pins_lowered"],
                "drive_backlog_max": result.get("drive_backlog_max")
                or backlog_max([result["drives_at_restore"]]),
                **{k: result[k] for k in ("segments", "resumed_at_segment") if k in result}}
        failure = None if result["status"] == "exit" else \
            f"gem5 {result['status']}: {result.get('detail', '')}".strip()
        return Outcome(failure, info)

    def check_outputs(self, run_dir: Path, phases: int) -> str | None:
        return gem5_stats.blocks_problem(run_dir / "stats.txt", phases)
