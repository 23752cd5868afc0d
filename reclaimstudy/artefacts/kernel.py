"""Build the study's guest kernel: Debian's linux-source-6.1 + our series + the fragment.

The result (vmlinux for gem5, bzImage for QEMU, the final .config and a manifest) is
cached under a key made of the hashes of every input, so an unchanged kernel is
never rebuilt.
"""

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.artefacts.discard import discard_tree
from reclaimstudy.artefacts.reproducible import kernel_build_env
from reclaimstudy.artefacts.shared import (build_facts, expected_steps, patch_digests,
                                           patch_failure)
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.paths import KERNEL_PATCHES, cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.progress import console, run_logged

SOURCE_PACKAGE = "linux-source-6.1"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
FRAGMENT = KERNEL_PATCHES / "guest.config"
SERIES = KERNEL_PATCHES / "series"
# Bump when the way the kernel is built changes, so old cache entries are not reused.
# 2: a fixed build date, user and host (reproducible.py); before, each build's own.
BUILD_RECIPE = 2
# Host tools the build runs (their packages: packaging/host-tools.txt).
BUILD_TOOLS = ("make", "gcc", "ccache", "bc", "flex", "bison", "patch", "xz", "tar", "perl")
# Rough count of objects a build compiles, for the progress bar until a build has run.
DEFAULT_STEPS = 1400


@dataclass(frozen=True)
class Series:
    package: str
    version: str
    patches: tuple[Path, ...]


@dataclass(frozen=True)
class Kernel:
    """A built kernel in the cache."""
    directory: Path

    @property
    def vmlinux(self) -> Path:
        return self.directory / "vmlinux"

    @property
    def bzimage(self) -> Path:
        return self.directory / "bzImage"

    @property
    def config(self) -> Path:
        return self.directory / "config"

    @property
    def manifest(self) -> dict:
        return json.loads((self.directory / "manifest.json").read_text())

    @property
    def hz(self) -> int:
        """CONFIG_HZ of the build: jiffies per second."""
        hz = read_kconfig(self.config).get("CONFIG_HZ")
        if hz is None:
            raise StudyError(f"{self.config}: no CONFIG_HZ line")
        return int(hz)


def read_series(path: Path = SERIES) -> Series:
    """Parse `series`: patch names in order, and the `# made-against: PACKAGE VERSION` line."""
    made_against = None
    patches = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        match = re.match(r"#\s*made-against:\s*(\S+)\s+(\S+)\s*$", line)
        if match:
            made_against = (match[1], match[2])
        elif line and not line.startswith("#"):
            patch = path.parent / line
            if not patch.is_file():
                raise StudyError(f"{path}:{number}: patch '{line}' does not exist in {path.parent}")
            patches.append(patch)
    if made_against is None:
        raise StudyError(f"{path}: no '# made-against: PACKAGE VERSION' line")
    return Series(made_against[0], made_against[1], tuple(patches))


def read_kconfig(path: Path) -> dict[str, str | None]:
    """Options of a .config or fragment: CONFIG_X -> value, or None for 'is not set'."""
    options = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if match := re.match(r"^(CONFIG_\w+)=(.*)$", line):
            options[match[1]] = match[2]
        elif match := re.match(r"^# (CONFIG_\w+) is not set$", line):
            options[match[1]] = None
    return options


def unmet_options(fragment: dict, config: dict) -> list[str]:
    """Fragment lines the final .config does not honour (kconfig drops them silently)."""
    unmet = []
    for option, wanted in fragment.items():
        got = config.get(option)
        if got != wanted:
            shown_want = "not set" if wanted is None else wanted
            shown_got = "not set" if got is None else got
            unmet.append(f"{option}: wanted {shown_want}, got {shown_got}")
    return unmet


def installed_source_version() -> str:
    if not SOURCE_TARBALL.is_file():
        raise StudyError(
            f"the kernel source {SOURCE_TARBALL} is missing: install it with "
            f"`apt-get install {SOURCE_PACKAGE}` {hostdeps.SETUP_HINT}")
    version = hostdeps.debian_package_version(SOURCE_PACKAGE)
    return version or "unknown (not installed through dpkg)"


def kernel_inputs() -> dict:
    """Everything that determines the built kernel, by content."""
    series = read_series()
    installed = installed_source_version()
    if installed != series.version and hostdeps.debian_package_version(SOURCE_PACKAGE):
        # Another version is another kernel key, so every run id would change and a study
        # would quietly start over (an `apt upgrade` does this).
        raise StudyError(
            f"{SOURCE_PACKAGE} {installed} is installed, but {SERIES} was made against "
            f"{series.version}: install that one with `apt-get install --allow-downgrades "
            f"{SOURCE_PACKAGE}={series.version}` (./study does it, as root), or make the "
            f"series against {installed} (kernel-patches/README.md, Changing a patch)")
    return {
        "source_package": SOURCE_PACKAGE,
        "source_version": installed,
        "source_tarball_sha256": file_sha256(SOURCE_TARBALL),
        "series_made_against": f"{series.package} {series.version}",
        "patches": patch_digests(series.patches),
        "fragment_sha256": file_sha256(FRAGMENT),
        "recipe": BUILD_RECIPE,
    }


def kernel_key(inputs: dict) -> str:
    return json_sha256(inputs)[:16]


def current_kernel_key() -> str:
    """The key build_kernel() gives for today's inputs, without building anything."""
    return kernel_key(kernel_inputs())


def kernel_is_cached() -> bool:
    """Whether build_kernel() would answer from the cache today."""
    return (cache_dir() / "kernels" / current_kernel_key() / "manifest.json").is_file()


def configured_hz() -> int:
    """CONFIG_HZ as the fragment chooses it (CONFIG_HZ_<N>=y): what Kernel.hz reads from
    the built config, known before the build."""
    chosen = [int(option[len("CONFIG_HZ_"):]) for option, value in read_kconfig(FRAGMENT).items()
              if re.fullmatch(r"CONFIG_HZ_\d+", option) and value == "y"]
    if len(chosen) != 1:
        raise StudyError(f"{FRAGMENT}: expected one CONFIG_HZ_<N>=y line, found {len(chosen)}")
    return chosen[0]


def extract_source(destination: Path, members: list[str] | None = None) -> Path:
    """Unpack Debian's tarball (or only `members`, paths inside the tree) into `destination`."""
    hostdeps.require_tool("xz")
    destination.mkdir(parents=True, exist_ok=True)
    cmd = ["tar", "-xf", str(SOURCE_TARBALL), "-C", str(destination)]
    if members:
        cmd += [f"linux-source-6.1/{m}" for m in members]
    subprocess.run(cmd, check=True)
    return destination / "linux-source-6.1"


def patched_files(series: Series) -> list[str]:
    """Existing files the series modifies (new files are created by the patches)."""
    files = set()
    for patch in series.patches:
        text = patch.read_text()
        for old, _new in re.findall(r"^--- (\S+)\n\+\+\+ (\S+)$", text, re.M):
            if old != "/dev/null":
                files.add(old.split("/", 1)[1])
    return sorted(files)


def apply_series(source: Path, series: Series, installed_version: str) -> None:
    """Apply every patch with `patch -p1`; on failure say which one and against what."""
    for patch in series.patches:
        output = patch_failure(source, patch)
        if output is not None:
            if installed_version != series.version:
                why = (f"the installed {series.package} is {installed_version}, but the series "
                       f"was made against {series.version}: refresh the patches for "
                       f"{installed_version}, or install {series.package} {series.version}")
            else:
                why = "the installed source is the version the series was made against"
            raise StudyError(f"kernel patch {patch.name} does not apply ({why}).\n"
                             f"{output}")


def make_command(source: Path, *targets: str) -> tuple[list[str], dict]:
    """make for the kernel in `source`, with the compilers going through ccache, and its
    environment. Every new key builds from freshly unpacked source, so without a compiler
    cache a one-line patch change recompiles all of it; with one, only what the change
    touched. BASEDIR keeps the build folder's name (it holds a process id) out of ccache's
    hashes. ccache hands back the object the compiler made, so the kernel is the same.
    The build's date, user and host are fixed (reproducible.py): they seed the guest's
    random pool."""
    env = dict(os.environ, CCACHE_BASEDIR=str(source), CCACHE_NOHASHDIR="true",
               **kernel_build_env())
    return ["make", "ARCH=x86_64", "CC=ccache gcc", "HOSTCC=ccache gcc", *targets], env


def configure(source: Path, log_dir: Path) -> None:
    """allnoconfig with the fragment forced in, then check every fragment line survived."""
    cmd, env = make_command(source, f"KCONFIG_ALLCONFIG={FRAGMENT}", "allnoconfig")
    run_logged(cmd, cwd=source, log_path=log_dir / "config.log", label="kernel config", env=env)
    unmet = unmet_options(read_kconfig(FRAGMENT), read_kconfig(source / ".config"))
    if unmet:
        raise StudyError(f"kconfig dropped options of {FRAGMENT} (unmet dependencies?):\n  "
                         + "\n  ".join(unmet))


def build_kernel(jobs: int | None = None, force: bool = False) -> Kernel:
    """Return the cached kernel for the current inputs, building it first if needed."""
    for tool in BUILD_TOOLS:
        hostdeps.require_tool(tool)
    inputs = kernel_inputs()
    key = kernel_key(inputs)
    kernels_dir = cache_dir() / "kernels"
    final = kernels_dir / key
    if (final / "manifest.json").is_file() and not force:
        console.print(f"kernel {key}: cached in {final}")
        return Kernel(final)
    with exclusive(kernels_dir / f"{key}.lock", f"kernel {key}"):
        if (final / "manifest.json").is_file() and not force:
            return Kernel(final)  # built by the process we waited for
        return _build(inputs, key, final, jobs)


def _build(inputs: dict, key: str, final: Path, jobs: int | None) -> Kernel:
    kernels_dir = final.parent
    jobs = jobs or os.cpu_count() or 1
    work = kernels_dir / f"{key}.building-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    started = time.monotonic()
    console.print(f"kernel {key}: building {inputs['source_version']} + "
                  f"{len(inputs['patches'])} patches with {jobs} jobs (log in {work})")
    series = read_series()
    if inputs["source_version"] != series.version:
        console.print(f"kernel {key}: the installed {series.package} is "
                      f"{inputs['source_version']}, the series was made against "
                      f"{series.version}: another kernel, whose runs get other ids than the "
                      f"ones made on {series.version} (packaging/bootstrap.sh installs it)")
    source = extract_source(work)
    apply_series(source, series, inputs["source_version"])
    configure(source, work)
    cmd, env = make_command(source, f"-j{jobs}", "vmlinux", "bzImage")
    steps = run_logged(
        cmd, cwd=source, env=env, log_path=work / "build.log", label="kernel build",
        step_pattern=r"^\s+(CC|AS|LD|AR)\s", expected_steps=expected_steps(kernels_dir, DEFAULT_STEPS))

    outputs = work / "out"
    outputs.mkdir()
    shutil.copy2(source / "vmlinux", outputs / "vmlinux")
    shutil.copy2(source / "arch/x86/boot/bzImage", outputs / "bzImage")
    shutil.copy2(source / ".config", outputs / "config")
    shutil.copy2(source / "System.map", outputs / "System.map")
    for log in ("config.log", "build.log"):
        shutil.copy2(work / log, outputs / log)
    manifest = dict(inputs)
    manifest.update({
        "key": key,
        "config_sha256": file_sha256(outputs / "config"),
        "vmlinux_sha256": file_sha256(outputs / "vmlinux"),
        "vmlinux_bytes": (outputs / "vmlinux").stat().st_size,
        "bzimage_sha256": file_sha256(outputs / "bzImage"),
        **build_facts(started, jobs, steps, "gcc"),
        "compiler_cache": subprocess.run(["ccache", "--version"], capture_output=True,
                                         text=True).stdout.splitlines()[0],
    })
    # The manifest is written last and the directory renamed into place, so a
    # build that dies half-way never looks complete.
    (outputs / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if final.exists():
        shutil.rmtree(final)
    outputs.rename(final)
    discard_tree(work)
    console.print(f"kernel {key}: built in {manifest['build_seconds']:.0f} s -> {final}")
    return Kernel(final)
