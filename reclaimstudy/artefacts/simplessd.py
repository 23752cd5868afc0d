"""Build SimpleSSD 2.0, the SSD simulator (flash translation layer, write cache, garbage
collection, channel and die parallelism), standalone, from a checkout the user gives.

    ./study simplessd --source DIR

DIR is a clone of github.com/SimpleSSD/SimpleSSD-Standalone with its submodules checked
out (`git submodule update --init --recursive`): the standalone driver (a synthetic and
trace workload generator), SimpleSSD itself in `simplessd/` (release 2.0.13, the
submodule commit of the driver's 2.0 branch) and McPAT in `simplessd/lib/mcpat`. The
project never contains SimpleSSD's source: like gem5 and DiskSim it is a prerequisite,
and our own changes to it are the `simplessd-patches/` series.

The tree is copied into the cache (the user's checkout is never changed), patched, and
built there with its own CMake files; the result is cached under a key made of the
tree's content and the patches, so an unchanged build is never redone. Git's own files
and CMake build folders are not source: a checkout built in place hashes the same as a
clean one.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

from reclaimstudy.artefacts.shared import (CachedBuild, Series, finish_build,
                                           patch_digests, patch_failure, read_patch_series,
                                           source_digest)
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256
from reclaimstudy.paths import REPO, cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.progress import console, run_logged

PATCHES = REPO / "simplessd-patches"
SERIES = PATCHES / "series"
# SimpleSSD's release the series is made against, and its commit (the driver's 2.0
# branch points its `simplessd` submodule there; SimpleSSD's tag v2.0.13).
SIMPLESSD_COMMIT = "73ad8ad5220ce5ebfeb055687d0328765a046c0f"
BUILD_TOOLS = ("cmake", "make", "gcc", "g++", "patch")
# Compiler runs in the build log (CMake's "Building CXX object" lines), for the
# progress bar: 118 for 2.0.13 with the series.
COMPILE_STEP = r"Building (CXX|C) object "
DEFAULT_STEPS = 118
# Bump when the way SimpleSSD is built changes, so old cache entries are not reused.
BUILD_RECIPE = 1

# Files that make a checkout one we can build, relative to its root.
REQUIRED = ("CMakeLists.txt", "sim/main.cc", "sil/none/none.cc", "bil/entry.cc")
SUBMODULE_FILES = {
    "simplessd": "simplessd/CMakeLists.txt",
    "simplessd/lib/mcpat": "simplessd/lib/mcpat/mcpat.h",
}
# What is not source in a checkout: git's files and the build folders people make.
NOT_SOURCE_DIRS = {".git", "build", "__pycache__"}


def find_tree(source: Path) -> Path:
    """The SimpleSSD-Standalone checkout to build, with its submodules; anything else is
    refused, naming the path and what was expected."""
    source = source.resolve()
    if not source.is_dir():
        raise StudyError(f"--source {source}: no such directory")
    missing = [f for f in REQUIRED if not (source / f).is_file()]
    if missing:
        raise StudyError(
            f"{source} is not a SimpleSSD-Standalone checkout (no {', '.join(missing)}): "
            f"give a clone of github.com/SimpleSSD/SimpleSSD-Standalone")
    for submodule, marker in SUBMODULE_FILES.items():
        if not (source / marker).is_file():
            raise StudyError(
                f"{source}: its submodule {submodule}/ is not checked out (no {marker}): "
                f"run `git submodule update --init --recursive` in it")
    commit = submodule_commit(source)
    if commit is not None and commit != SIMPLESSD_COMMIT:
        raise StudyError(
            f"{source}/simplessd is at commit {commit}, but simplessd-patches/ is made "
            f"against SimpleSSD 2.0.13 ({SIMPLESSD_COMMIT}, the submodule commit of "
            f"SimpleSSD-Standalone's 2.0 branch): check that commit out in simplessd/")
    return source


def submodule_commit(tree: Path) -> str | None:
    """The commit checked out in the tree's simplessd/ (None if it is not a git work tree)."""
    if not (tree / "simplessd" / ".git").exists():
        return None
    result = subprocess.run(["git", "-c", f"safe.directory={tree / 'simplessd'}", "-C",
                             str(tree / "simplessd"), "rev-parse", "HEAD"],
                            capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def read_series(path: Path = SERIES) -> Series:
    """Patch names in order, and the `# made-against: SimpleSSD VERSION` line."""
    return read_patch_series(path, "SimpleSSD")


def source_files(tree: Path) -> list[Path]:
    """Every file of the tree that is source, relative, in a stable order."""
    files = []
    for directory, subdirs, names in os.walk(tree):
        subdirs[:] = sorted(d for d in subdirs if d not in NOT_SOURCE_DIRS
                            and not d.startswith("cmake-build"))
        for name in sorted(names):
            if name == ".git":  # a submodule's pointer file
                continue
            files.append((Path(directory) / name).relative_to(tree))
    return sorted(files)



def build_inputs(source: Path) -> tuple[Path, dict]:
    """The tree to build and everything that determines the build, by content."""
    series = read_series()
    tree = find_tree(source)
    return tree, {
        "simplessd_version": series.version,
        "simplessd_commit": submodule_commit(tree),
        "source_sha256": source_digest(tree, source_files(tree)),
        "patches": patch_digests(series.patches),
        "recipe": BUILD_RECIPE,
    }


class SimpleSSDBuild(CachedBuild):
    """A finished build in the cache: the standalone simulator."""

    @property
    def binary(self) -> Path:
        """`simplessd-standalone SIM.cfg SSD.cfg OUTDIR`: the workload (SIM.cfg's
        [global] and [generator] or [trace]) run on the drive SSD.cfg describes."""
        return self.directory / "build" / "simplessd-standalone"

    @property
    def include_dirs(self) -> tuple[Path, ...]:
        """SimpleSSD's headers, as its own sources include them ("hil/hil.hh"), and the
        DRAMPower headers they include (the driver's copy; gem5's own comes first in a
        gem5 build)."""
        return (self.tree / "simplessd", self.tree / "lib" / "drampower" / "src")

    @property
    def libraries(self) -> tuple[Path, ...]:
        """SimpleSSD and the McPAT it calls, in link order, for a host simulator that
        embeds it (gem5-patches/0006). Its DRAM model also calls DRAMPower, which the
        standalone driver compiles in itself and gem5 links anyway (ext/drampower)."""
        return (self.directory / "build" / "libsimplessd.a",
                self.directory / "build" / "libmcpat.a")

    def products(self) -> tuple[Path, ...]:
        return (self.binary, *self.libraries)


def build_simplessd(source: Path, jobs: int | None = None) -> SimpleSSDBuild:
    """The cached build of the SimpleSSD-Standalone checkout `source`, building it first
    if needed (`jobs` parallel compiles; default all cores)."""
    for tool in BUILD_TOOLS:
        hostdeps.require_tool(tool)
    if jobs is not None and jobs < 1:
        raise StudyError(f"--jobs {jobs}: give 1 or more parallel compiles")
    console.print(f"SimpleSSD: hashing the source in {source}")
    tree, inputs = build_inputs(source)
    key = json_sha256(inputs)[:16]
    builds_dir = cache_dir() / "simplessd"
    work = builds_dir / key
    if (work / "manifest.json").is_file():
        console.print(f"SimpleSSD {key}: cached in {work}")
        return SimpleSSDBuild(work)
    with exclusive(builds_dir / f"{key}.lock", f"SimpleSSD build {key}"):
        if (work / "manifest.json").is_file():
            return SimpleSSDBuild(work)  # built by the process we waited for
        return _build(tree, inputs, key, work, jobs or os.cpu_count() or 1)


def _build(tree: Path, inputs: dict, key: str, work: Path, jobs: int) -> SimpleSSDBuild:
    built = SimpleSSDBuild(work)
    started = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)  # a build that died starts again from a copy
    console.print(f"SimpleSSD {key}: copying {tree} and applying {len(inputs['patches'])} patches")
    for relative in source_files(tree):
        target = built.tree / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / relative, target, follow_symlinks=False)
    for patch in read_series().patches:
        output = patch_failure(built.tree, patch)
        if output is not None:
            raise StudyError(f"SimpleSSD patch {patch.name} does not apply to SimpleSSD "
                             f"{inputs['simplessd_version']} in {built.tree}:\n{output}")
    patched = source_digest(built.tree, source_files(built.tree))
    build_dir = work / "build"
    build_dir.mkdir(parents=True)
    console.print(f"SimpleSSD {key}: cmake and make -j{jobs} (log in {work}/build.log; "
                  f"about 2.5 CPU-minutes)")
    run_logged(["cmake", "-DCMAKE_BUILD_TYPE=Release", str(built.tree)], cwd=build_dir,
               log_path=work / "cmake.log", label="SimpleSSD cmake")
    steps = run_logged(["make", f"-j{jobs}"], cwd=build_dir, log_path=work / "build.log",
                       label="SimpleSSD build", step_pattern=COMPILE_STEP,
                       expected_steps=DEFAULT_STEPS)
    finish_build(built, "SimpleSSD", inputs, key=key, source=tree, patched=patched,
                 started=started, jobs=jobs, steps=steps, compiler="g++")
    return built
