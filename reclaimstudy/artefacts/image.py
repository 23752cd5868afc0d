"""Build the guest's disks: a root ext4 image and a swap image, cached by content hash.

The root image is a minimal Debian (mmdebstrap, cached as a tarball of its own) plus
our /init and runtime (disk-images/guest), the guest programs and workloads
(workloads/, compiled static) and the workloads' data files, whose sizes follow the
system profile's memory. Made with `mke2fs -d`: no loop mounts.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reclaimstudy.artefacts.discard import discard_tree
from reclaimstudy.artefacts.ext4 import make_ext4
from reclaimstudy.artefacts.reproducible import EPOCH
from reclaimstudy.config.systems import System
from reclaimstudy.config.tomlfile import config_error, load
from reclaimstudy.config.workloads import GUEST_DATA, load_workloads
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.paths import DISK_IMAGES, REPO, WORKLOADS, cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.locks import exclusive, shared, unless_shared
from reclaimstudy.util.progress import console, run_logged

ROOTFS_SPEC = DISK_IMAGES / "rootfs.toml"
GUEST_RUNTIME = DISK_IMAGES / "guest"
# Bump when the way images are assembled changes.
# 2: inode tables and journal zeroed by mke2fs (no lazy init in the guest); 3: every
# time in the file system fixed (reproducible.py), so the image is the same bytes anywhere.
IMAGE_RECIPE = 3
# 2: mmdebstrap with SOURCE_DATE_EPOCH (its files' times, logs and the like fixed).
ROOTFS_RECIPE = 2
SYSROOT_RECIPE = 1
# Free room left in the root file system beyond its contents.
ROOT_SLACK_MIB = 96
# Images are 0.5-2 GiB: keep this many of the most recently built, delete older ones.
KEEP_IMAGES = 6


@dataclass(frozen=True)
class Image:
    directory: Path

    @property
    def root(self) -> Path:
        return self.directory / "root.img"

    @property
    def swap(self) -> Path:
        return self.directory / "swap.img"

    @property
    def manifest(self) -> dict:
        return json.loads((self.directory / "manifest.json").read_text())

    def in_cache(self) -> bool:
        return (self.directory / "manifest.json").is_file() and self.root.is_file()

    def mark_used(self) -> None:
        """Pruning keeps the most recently used images: a run marks its image used."""
        os.utime(self.directory / "manifest.json")

    @property
    def use_lock(self) -> Path:
        return self.directory.with_suffix(".use")

    def in_use(self):
        """Held by a run for as long as it needs the image's files: a gem5 run opens them
        again at every segment's restore, so an image pruned under a run in progress
        failed its next segment. Pruning skips an image held so (prune_images)."""
        return shared(self.use_lock)

    @property
    def partitioned(self) -> Path:
        return self.directory / "disk.img"

    def disks(self, swap: str) -> list[Path]:
        """The guest's disks for a profile's swap layout: root and swap as two disks
        ("device"), one disk with root and swap partitions ("partition"), or the root
        disk alone ("zram": the guest swaps to compressed memory)."""
        if swap == "device":
            return [self.root, self.swap]
        if swap == "zram":
            return [self.root]
        if swap == "partition":
            if not self.partitioned.is_file():
                with exclusive(self.directory / "disk.lock", f"partitioned disk {self.partitioned}"):
                    if not self.partitioned.is_file():
                        make_partitioned_disk(self.root, self.swap, self.partitioned)
            return [self.partitioned]
        raise StudyError(f"unknown swap layout {swap!r}: allowed: device, partition, zram")


# Partitions start on 1 MiB boundaries, as fdisk has placed them since 2009 or so.
PARTITION_ALIGN = 1 << 20


def make_partitioned_disk(root: Path, swap: Path, out: Path) -> None:
    """One disk holding `root` then `swap` as MBR partitions 1 and 2 (types 83, 82):
    the 2009 desktop's single spindle, swap right after the root filesystem."""
    hostdeps.require_tool("sfdisk")
    sectors = [path.stat().st_size // 512 for path in (root, swap)]
    starts = [PARTITION_ALIGN // 512]
    starts.append(starts[0] + -(-sectors[0] * 512 // PARTITION_ALIGN) * PARTITION_ALIGN // 512)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "wb") as handle:
        handle.truncate((starts[1] + sectors[1]) * 512)
    table = (f"label: dos\nstart={starts[0]}, size={sectors[0]}, type=83\n"
             f"start={starts[1]}, size={sectors[1]}, type=82\n")
    subprocess.run(["sfdisk", "--quiet", str(partial)], input=table, text=True, check=True,
                   capture_output=True)
    with open(partial, "r+b") as disk:
        for path, start in zip((root, swap), starts):
            disk.seek(start * 512)
            with open(path, "rb") as part:
                shutil.copyfileobj(part, disk, 1 << 20)
    partial.rename(out)


# Files below workloads/ that never reach the guest: documentation and the host-side
# parsers (analysis runs them on a run's records). Editing them must not change the
# image key, which would make every finished run look undone to the next sweep. A
# workload's meta.toml is hashed without the keys only analysis reads (HOST_ONLY_META).
HOST_ONLY_NAMES = {"parse.py", "meta.toml"}
HOST_ONLY_SUFFIXES = {".md"}
HOST_ONLY_META = {"metrics", "regime", "pauses"}


def workloads_meta(root: Path = WORKLOADS, left_out: frozenset[str] = frozenset()) -> dict:
    """Every workload's meta.toml as the image build reads it (no analysis keys), but
    those of `left_out`."""
    return {path.parent.name: {k: v for k, v in load(path).items() if k not in HOST_ONLY_META}
            for path in sorted(root.glob("*/meta.toml")) if path.parent.name not in left_out}


def left_out(system: System, root: Path = WORKLOADS) -> frozenset[str]:
    """The workloads an image for `system` leaves out: those that need more cores than
    it has (min_cores) and the opt-in ones it does not name (opt_in_workloads). They are
    not in its key either, so adding one leaves every other image, and the runs on it,
    as they were."""
    workloads = load_workloads(root)
    unknown = sorted(name for name in system.opt_in_workloads
                     if name not in workloads or not workloads[name].opt_in)
    if unknown:
        raise StudyError(f"system {system.name}: opt_in_workloads names "
                         f"{', '.join(unknown)}, not an opt-in workload (meta.toml's "
                         f"opt_in); opt-in workloads: "
                         f"{', '.join(sorted(w.name for w in workloads.values() if w.opt_in)) or 'none'}")
    return frozenset(w.name for w in workloads.values()
                     if w.min_cores > system.cpu.cores
                     or w.opt_in and w.name not in system.opt_in_workloads)


def guest_file(relative: Path) -> bool:
    return (relative.name not in HOST_ONLY_NAMES and relative.suffix not in HOST_ONLY_SUFFIXES
            and "__pycache__" not in relative.parts)


def tree_sha256(root: Path, skip: set[str] | frozenset[str] = frozenset()) -> str:
    """Hash of the path, mode and content of every file below `root` that the guest gets."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_dir() or relative.parts[0] in skip or not guest_file(relative):
            continue
        digest.update(f"{relative}\0{path.stat().st_mode & 0o777}\0{file_sha256(path)}\0".encode())
    return digest.hexdigest()


class RootfsSpec(BaseModel):
    """disk-images/rootfs.toml: the Debian userland, as mmdebstrap makes it."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    mirror: str
    components: str
    variant: str
    packages: list[str] = Field(min_length=1)
    build_packages: list[str] = Field(min_length=1)  # the sysroot's (guest programs' headers)
    exclude: list[str] = []


def rootfs_spec() -> dict:
    """The spec as written (its keys hashed as they are: rootfs_key), once checked."""
    spec = load(ROOTFS_SPEC)
    try:
        RootfsSpec.model_validate(spec)
    except ValidationError as error:
        raise config_error(ROOTFS_SPEC, error, RootfsSpec) from None
    return spec


def debian_source(spec: dict) -> str:
    """The one apt source the userland comes from: the spec's suite of its mirror (or of
    RECLAIMSTUDY_DEBIAN_MIRROR, a mirror of the same archive: not part of the key, as
    the tarball's checksum, recorded in each run, tells whether it gave the same)."""
    mirror = os.environ.get("RECLAIMSTUDY_DEBIAN_MIRROR") or spec["mirror"]
    return f"deb {mirror} {spec['suite']} {spec['components']}"


def rootfs_key() -> str:
    spec = {k: v for k, v in rootfs_spec().items() if k != "build_packages"}  # the sysroot's
    return json_sha256({"spec": spec, "recipe": ROOTFS_RECIPE})[:16]


def rootfs_tarball() -> tuple[Path, dict]:
    """The cached Debian userland tarball, made with mmdebstrap when missing."""
    spec = rootfs_spec()
    key = rootfs_key()
    directory = cache_dir() / "rootfs"
    tarball = directory / f"{key}.tar"
    manifest_path = directory / f"{key}.json"
    if tarball.is_file() and manifest_path.is_file():
        return tarball, json.loads(manifest_path.read_text())
    with exclusive(cache_dir() / "rootfs" / f"{key}.lock", f"rootfs {key}"):
        if tarball.is_file() and manifest_path.is_file():
            return tarball, json.loads(manifest_path.read_text())
        return _make_rootfs(spec, key, tarball, manifest_path)


def sysroot_key() -> str:
    spec = rootfs_spec()
    return json_sha256({"suite": spec["suite"], "components": spec["components"],
                        "packages": spec["build_packages"], "recipe": SYSROOT_RECIPE})[:16]


def guest_sysroot() -> tuple[Path, dict]:
    """The cached sysroot the guest programs are built against (Debian's libc6-dev and
    what it needs, extracted, not installed), made with mmdebstrap when missing; and its
    manifest (the packages' versions)."""
    spec, key = rootfs_spec(), sysroot_key()
    directory = cache_dir() / "sysroot" / key
    manifest_path = directory.with_suffix(".json")
    if directory.is_dir() and manifest_path.is_file():
        return directory, json.loads(manifest_path.read_text())
    with exclusive(directory.with_suffix(".lock"), f"sysroot {key}"):
        if directory.is_dir() and manifest_path.is_file():
            return directory, json.loads(manifest_path.read_text())
        mmdebstrap = hostdeps.require_tool("mmdebstrap")
        if os.geteuid() != 0:  # as another user mmdebstrap would leave files it cannot own
            raise StudyError("building the guest programs' sysroot needs root (mmdebstrap); "
                             "run ./study as root")
        for stale in directory.parent.glob(f"{key}.partial-*"):  # of builds that died
            shutil.rmtree(stale, ignore_errors=True)
        partial = directory.with_name(f"{key}.partial-{os.getpid()}")
        console.print(f"sysroot {key}: mmdebstrap {spec['suite']} (extract) "
                      f"{', '.join(spec['build_packages'])}")
        # The downloaded packages are kept (not cleaned) only to read their versions.
        run_logged([mmdebstrap, "--variant=extract", "--format=directory",
                    f"--include={','.join(spec['build_packages'])}", "--skip=cleanup/apt/cache",
                    spec["suite"], str(partial), debian_source(spec)],
                   cwd=partial.parent, log_path=directory.with_suffix(".log"),
                   label="sysroot", step_pattern=r"^I: ", expected_steps=8,
                   env={**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH)})
        archives = partial / "var/cache/apt/archives"
        versions = dict(sorted(_deb_name_version(deb.name) for deb in archives.glob("*.deb")))
        unnamed = [package for package in spec["build_packages"] if package not in versions]
        if unnamed:
            raise StudyError(f"sysroot {key}: no version found for {', '.join(unnamed)} among "
                             f"the packages mmdebstrap downloaded ({archives}); see "
                             f"{directory.with_suffix('.log')}")
        for deb in archives.glob("*.deb"):
            deb.unlink()
        shutil.rmtree(directory, ignore_errors=True)
        partial.rename(directory)
        manifest = {"key": key, "packages": versions}
        write_whole(manifest_path, json.dumps(manifest, indent=2) + "\n")
        return directory, manifest


def write_whole(path: Path, text: str) -> None:
    """Write `path` so that a reader (or a build killed mid-write) never sees half of it:
    a cached manifest that exists is taken as complete."""
    partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
    partial.write_text(text)
    os.replace(partial, path)


def _deb_name_version(filename: str) -> tuple[str, str]:
    """('libcrypt1', '1:4.4.33-2') from apt's 'libcrypt1_1%3a4.4.33-2_amd64.deb'."""
    name, version, _ = filename.split("_")
    return name, urllib.parse.unquote(version)


def guest_compiler(sysroot: Path) -> str:
    """The machine's gcc with headers, start files and libraries from `sysroot` only
    (--sysroot alone moves the headers; gcc would still link the machine's libc.a)."""
    lib = sysroot / "usr/lib/x86_64-linux-gnu"
    return f"gcc --sysroot={sysroot} -B{lib}/ -L{lib}"


def _make_rootfs(spec: dict, key: str, tarball: Path, manifest_path: Path) -> tuple[Path, dict]:
    directory = tarball.parent
    mmdebstrap = hostdeps.require_tool("mmdebstrap")
    if os.geteuid() != 0:
        raise StudyError("building the guest userland needs root (mmdebstrap and device nodes "
                         "in the image); run ./study as root")
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f"{key}.tar.partial-{os.getpid()}"
    started = time.monotonic()
    console.print(f"rootfs {key}: mmdebstrap {spec['suite']} ({spec['variant']}) "
                  f"+ {', '.join(spec['packages'])}")
    cmd = [mmdebstrap, f"--variant={spec['variant']}", "--format=tar",
           f"--include={','.join(spec['packages'])}"]
    cmd += [f"--dpkgopt=path-exclude=/{p}/*" for p in spec.get("exclude", [])]
    cmd += [spec["suite"], str(partial), debian_source(spec)]
    # mmdebstrap's reproducible mode: the same packages give the same tarball.
    run_logged(cmd, cwd=directory, log_path=directory / f"{key}.log", label="mmdebstrap",
               step_pattern=r"^I: ", expected_steps=12,
               env={**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH)})
    status = subprocess.run(["tar", "-xOf", str(partial), "./var/lib/dpkg/status"],
                            capture_output=True, text=True, check=True).stdout
    manifest = {"key": key, "spec": spec, "packages": _dpkg_versions(status),
                "seconds": round(time.monotonic() - started, 1),
                "sha256": file_sha256(partial)}
    partial.rename(tarball)
    write_whole(manifest_path, json.dumps(manifest, indent=2) + "\n")
    return tarball, manifest


def _dpkg_versions(status: str) -> dict[str, str]:
    versions = {}
    for stanza in status.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line
                      and not line.startswith(" "))
        if "Package" in fields and fields.get("Status", "").endswith(" installed"):
            versions[fields["Package"]] = fields.get("Version", "")
    return dict(sorted(versions.items()))


def data_files(memory_mib: int, left_out: frozenset[str] = frozenset()) -> list[dict]:
    """Every workload's data files with their sizes for this memory size, but those of
    the workloads the image leaves out."""
    files = []
    for workload in load_workloads().values():
        if workload.name in left_out:
            continue
        for data in workload.data:
            files.append({"workload": workload.name, "name": data.name,
                          "bytes": data.size_bytes(memory_mib)})
    return files


def write_data_file(path: Path, size: int, label: str) -> None:
    """Pseudo-random bytes from a generator seeded by the file's label: real blocks, reproducible."""
    generator = np.random.Generator(np.random.PCG64(int.from_bytes(
        hashlib.sha256(label.encode()).digest()[:8], "little")))
    chunk = 16 << 20
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        left = size
        while left > 0:
            n = min(chunk, left)
            handle.write(generator.bytes(n))
            left -= n


def generate_data(tree: Path, programs: Path, memory_mib: int, work: Path,
                  compiler: str, left_out: frozenset[str] = frozenset()) -> None:
    """Run each workload's generate hook: `HOOK OUT MEMORY_MIB`, on the host.

    Hooks may be Python (run with this environment's interpreter and the project on
    the path) or any program; RECLAIM_PROGRAMS names the just-built guest programs,
    which are static and so run here too, and CC the compiler a hook that builds guest
    programs uses (guest_compiler).
    """
    env = dict(os.environ, PYTHONPATH=str(REPO), RECLAIM_PROGRAMS=str(programs), CC=compiler,
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    for workload in load_workloads().values():
        if not workload.generate or workload.name in left_out:
            continue
        out = tree / GUEST_DATA.lstrip("/") / workload.name
        console.print(f"  data {workload.name}: {workload.generate}")
        run_logged([str(workload.directory / workload.generate), str(out), str(memory_mib)],
                   cwd=workload.directory, log_path=work / f"generate-{workload.name}.log",
                   label=f"{workload.name} data", env=env)


def image_inputs(system: System) -> dict:
    """Everything that determines a system's image, by content; builds nothing."""
    skipped = left_out(system)
    return {
        "rootfs_key": rootfs_key(),
        "sysroot_key": sysroot_key(),
        "guest_runtime_sha256": tree_sha256(GUEST_RUNTIME),
        "workloads_sha256": tree_sha256(WORKLOADS, skip={"build"} | skipped),
        "workloads_meta": workloads_meta(left_out=skipped),
        "memory_mib": system.memory_mib,  # the workloads' generate hooks size data by it
        "data_files": data_files(system.memory_mib, skipped),
        "swap_mib": system.disk.swap_mib,
        "recipe": IMAGE_RECIPE,
    }


def _du_mib(tree: Path) -> float:
    total = 0
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total / (1 << 20)


def image_key(inputs: dict) -> str:
    return json_sha256(inputs)[:16]


def build_image(system: System, force: bool = False) -> Image:
    """Return the cached root + swap images for `system`, building them if needed."""
    for tool in ("mke2fs", "mkswap", "make", "gcc", "tar"):
        hostdeps.require_tool(tool)
    tarball, rootfs = rootfs_tarball()
    inputs = image_inputs(system)
    key = image_key(inputs)
    images = cache_dir() / "images"
    final = images / key
    if (final / "manifest.json").is_file() and not force:
        console.print(f"image {key}: cached in {final}")
        return Image(final)
    with exclusive(images / f"{key}.lock", f"image {key}"):
        if (final / "manifest.json").is_file() and not force:
            return Image(final)
        return _assemble(system, tarball, rootfs, inputs, key, final)


def _assemble(system: System, tarball: Path, rootfs: dict, inputs: dict, key: str,
              final: Path) -> Image:
    images = final.parent
    started = time.monotonic()
    work = images / f"{key}.building-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "tree"
    tree.mkdir(parents=True)
    console.print(f"image {key}: assembling for {system.memory_mib} MiB of memory in {work}")
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(tree)], check=True)

    reclaim = tree / "usr/lib/reclaim"
    sysroot, sysroot_manifest = guest_sysroot()
    compiler = guest_compiler(sysroot)
    # Only the workloads the image is for (the Makefile builds every folder's by default).
    skipped = left_out(system)
    names = [f"NAMES={' '.join(sorted(set(workloads_meta()) - skipped))}"] if skipped else []
    run_logged(["make", "-C", str(WORKLOADS), f"OUT={reclaim}", f"CC={compiler}",
                f"-j{os.cpu_count() or 1}", *names],
               cwd=WORKLOADS, log_path=work / "workloads.log", label="guest programs")
    shutil.copy2(GUEST_RUNTIME / "init", tree / "init")
    shutil.copy2(GUEST_RUNTIME / "runjob", reclaim / "runjob")
    shutil.copy2(GUEST_RUNTIME / "zram-swap", reclaim / "zram-swap")
    generate_data(tree, reclaim / "workloads", system.memory_mib, work, compiler, skipped)
    for spec in inputs["data_files"]:
        target = tree / GUEST_DATA.lstrip("/") / spec["workload"] / spec["name"]
        console.print(f"  data {spec['workload']}/{spec['name']}: {spec['bytes'] >> 20} MiB")
        write_data_file(target, spec["bytes"], f"{spec['workload']}/{spec['name']}")

    size_mib = int(_du_mib(tree) * 1.15) + ROOT_SLACK_MIB
    out = work / "out"
    out.mkdir()
    make_ext4(tree, out / "root.img", size_mib)
    swap_mib = system.disk.swap_mib
    if swap_mib is not None:  # a zram profile's swap is made in the guest, at boot
        swap = out / "swap.img"
        with open(swap, "wb") as handle:
            handle.truncate(swap_mib << 20)
        subprocess.run(["mkswap", "-q", "-L", "swap", "-U",
                        "00000000-0000-4000-8000-000000000003", str(swap)],
                       check=True, capture_output=True)

    manifest = dict(inputs)
    manifest.update({
        "key": key,
        "rootfs_packages": rootfs["packages"],
        "sysroot_packages": sysroot_manifest["packages"],
        "root_mib": size_mib,
        "root_sha256": file_sha256(out / "root.img"),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_seconds": round(time.monotonic() - started, 1),
    })
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if final.exists():
        shutil.rmtree(final)
    out.rename(final)
    discard_tree(work)
    swap_said = (f"{swap_mib} MiB swap" if swap_mib is not None else
                 f"no swap area: {system.disk.zram_mib} MiB of zram at boot")
    console.print(f"image {key}: built in {manifest['build_seconds']:.0f} s "
                  f"({size_mib} MiB root, {swap_said}) -> {final}")
    prune_images(images)
    return Image(final)


def image_record(manifest: dict) -> dict:
    """What a run.json says of its image: its ids, its root file system's checksum, and
    the Debian packages in it (the userland) and behind it (the guest programs' sysroot),
    so a run names every package version that made it."""
    return {**{key: manifest[key] for key in ("key", "rootfs_key", "root_sha256")},
            "rootfs_packages": manifest.get("rootfs_packages", {}),
            "sysroot_packages": manifest.get("sysroot_packages", {})}


def prune_images(images: Path, keep: int = KEEP_IMAGES) -> list[Path]:
    """Delete all but the `keep` most recently used images (built, or marked used by a
    run), never one a run holds (Image.in_use, from any process: sweeps in other work
    trees share the cache); the next run that needs a deleted image builds it again
    (runs.execute checks, holding it)."""
    built = sorted((p.parent for p in images.glob("*/manifest.json")),
                   key=lambda d: (d / "manifest.json").stat().st_mtime, reverse=True)
    removed = []
    for directory in built[keep:]:
        with unless_shared(Image(directory).use_lock) as unused:
            if unused:
                shutil.rmtree(directory, ignore_errors=True)
                removed.append(directory)
    held = len(built[keep:]) - len(removed)
    if removed or held:
        console.print(f"image cache: removed {len(removed)} older image(s), kept {keep}"
                      + (f" and {held} a run is using" if held else ""))
    return removed
