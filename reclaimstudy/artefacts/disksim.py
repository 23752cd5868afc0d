"""Build DiskSim 4.0, the rotating-disk simulator whose drive models were validated against
real drives, from a checkout the user gives.

    ./study disksim --source DIR

DIR is a clone of github.com/westerndigitalcorporation/DiskSim, or its tree
`STABLE/DiskSim_Linux_Generic_2.01.016` itself: DiskSim 4.0 with Western Digital's
64-bit fixes, version 2.01.016. The repository's EXPERIMENTAL trees are refused (the
64-bit-LBA one aborts on every validation trace). The project never contains DiskSim's
source: like gem5 it is a prerequisite, and our own changes to it, if any, are the
`disksim-patches/` series.

The tree is copied into the cache (the user's checkout is never changed), patched, and
built there with its own makefiles; the result is cached under a key made of the
tree's content and the patches, so an unchanged build is never redone. What DiskSim's
make and its validation write into a tree (objects, libraries, generated module
sources, executables, validation outputs) is not part of the source: a checkout built
in place hashes the same as a clean one.
"""

import re
import shutil
import time
from pathlib import Path

from reclaimstudy.artefacts.shared import (CachedBuild, Series, finish_build,
                                           patch_digests, patch_failure, read_patch_series,
                                           source_commit, source_digest)
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256
from reclaimstudy.paths import DISKSIM_PATCHES, cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.progress import console, run_logged

SERIES = DISKSIM_PATCHES / "series"
# The tree we build, inside the repository.
STABLE_TREE = Path("STABLE") / "DiskSim_Linux_Generic_2.01.016"
# Host tools DiskSim's makefiles run (their packages: packaging/host-tools.txt). C goes
# through make's default `cc`, which Debian's gcc package provides.
BUILD_TOOLS = ("make", "gcc", "g++", "ar", "bison", "flex", "perl", "patch")
# Compiler runs in the build log (compiles and links), for the progress bar; 94 here.
COMPILE_STEP = r"^(cc|gcc|g\+\+) "
DEFAULT_STEPS = 94
# Bump when the way DiskSim is built changes, so old cache entries are not reused.
BUILD_RECIPE = 1

# What the build and the validation write into a tree (see the module's docstring).
OUTPUT_DIRS = {"lib", "include", ".git", "__pycache__"}
OUTPUT_SUFFIXES = {".o", ".a", ".d", ".outv", ".outtrace"}
OUTPUT_NAMES = {"lex.libparam.c", "libparam.tab.c", "libparam.tab.h", ".depend",
                "log_sim_results.csv"}
GENERATED_IN_MODULES = {".c", ".h", ".tex"}  # mod.pl's output from the .modspec files


def tree_version(tree: Path) -> str | None:
    """DiskSim's own version string (src/disksim_global.h), None if the file has none."""
    header = tree / "src" / "disksim_global.h"
    try:
        match = re.search(r'#define\s+VERSION\s+"([^"]+)"', header.read_text(errors="replace"))
    except OSError:
        return None
    return match[1] if match else None


def looks_like_tree(path: Path) -> bool:
    return all((path / p).is_file() for p in
               ("Makefile", "src/disksim_interface.h", "src/disksim_global.h", "valid/runvalid"))


def find_tree(source: Path, version: str) -> Path:
    """The DiskSim tree to build: `source` itself, or the STABLE tree in a repository
    clone. Anything else is refused, naming the path and what was expected."""
    source = source.resolve()
    if not source.is_dir():
        raise StudyError(f"--source {source}: no such directory")
    for tree in (source, source / STABLE_TREE):
        if looks_like_tree(tree):
            break
    else:
        raise StudyError(
            f"{source} is not a DiskSim checkout: give a clone of "
            f"github.com/westerndigitalcorporation/DiskSim (it has {STABLE_TREE}) or that "
            f"tree itself (with Makefile, src/disksim_interface.h and valid/runvalid)")
    found = tree_version(tree)
    if found != version:
        raise StudyError(
            f"{tree} is DiskSim {found or '(no version in src/disksim_global.h)'}, but "
            f"disksim-patches/ is made against DiskSim {version}, the repository's "
            f"{STABLE_TREE} (its EXPERIMENTAL 64-bit-LBA tree, 5.00.000, aborts on every "
            f"validation trace): give the repository's root or that tree")
    return tree


def read_series(path: Path = SERIES) -> Series:
    """Patch names in order, and the `# made-against: DiskSim VERSION` line."""
    return read_patch_series(path, "DiskSim")


def is_output(tree: Path, relative: Path) -> bool:
    """Whether a file of the tree is something DiskSim's build or validation wrote."""
    if OUTPUT_DIRS.intersection(relative.parts[:-1]):
        return True
    name = relative.name
    if relative.suffix in OUTPUT_SUFFIXES or name in OUTPUT_NAMES:
        return True
    if relative.parent.name == "modules" and relative.suffix in GENERATED_IN_MODULES:
        return True
    path = tree / relative
    if path.is_symlink():
        return False
    with open(path, "rb") as handle:
        return handle.read(4) == b"\x7fELF"  # an executable the build linked


def source_files(tree: Path) -> list[Path]:
    """Every file of the tree that is source, relative, in a stable order."""
    files = []
    for path in sorted(tree.rglob("*")):
        if path.is_symlink() or path.is_file():
            relative = path.relative_to(tree)
            if not is_output(tree, relative):
                files.append(relative)
    return files



def repository_commit(tree: Path) -> str | None:
    """The checked-out commit of the repository holding the tree (None if unknown)."""
    candidates = [tree]
    if tree.parent.name == STABLE_TREE.parent.name:
        candidates.append(tree.parent.parent)
    for directory in candidates:
        if (directory / ".git").exists():
            return source_commit(directory)
    return None


def build_inputs(source: Path) -> tuple[Path, dict]:
    """The tree to build and everything that determines the build, by content."""
    series = read_series()
    tree = find_tree(source, series.version)
    return tree, {
        "disksim_version": series.version,
        "source_commit": repository_commit(tree),
        "source_sha256": source_digest(tree, source_files(tree)),
        "patches": patch_digests(series.patches),
        "recipe": BUILD_RECIPE,
    }


class DisksimBuild(CachedBuild):
    """A finished build in the cache: the program, what embedding it links, its validation."""

    @property
    def binary(self) -> Path:
        """The standalone simulator: `disksim PARV OUTV FORMAT TRACE SYNTH`."""
        return self.tree / "src" / "disksim"

    @property
    def rms(self) -> Path:
        """DiskSim's own comparison of two response-time distributions (runvalid's)."""
        return self.tree / "src" / "rms"

    @property
    def syssim(self) -> Path:
        """DiskSim's example of a system simulator driving it (src/syssim_driver.c)."""
        return self.tree / "src" / "syssim"

    @property
    def validation_dir(self) -> Path:
        """valid/: runvalid, the drives' parameter files and their measured traces."""
        return self.tree / "valid"

    @property
    def include_dirs(self) -> tuple[Path, ...]:
        """For `#include "disksim_interface.h"`: include/ has the header, but it includes
        disksim_reqflags.h, which only src/ has."""
        return (self.tree / "include", self.tree / "src")

    @property
    def internal_include_dirs(self) -> tuple[Path, ...]:
        """For DiskSim's own headers as well (disksim_disk.h: a drive's running
        statistics), which include diskmodel's, libparam's and libddbg's."""
        return (*self.include_dirs, self.tree / "diskmodel" / "include",
                self.tree / "libparam" / "include", self.tree / "libddbg" / "include")

    @property
    def interface_object(self) -> Path:
        """disksim_interface.o, the embedding API (also a member of libdisksim.a)."""
        return self.tree / "src" / "disksim_interface.o"

    @property
    def libraries(self) -> tuple[Path, ...]:
        """Static libraries an embedding links, in link order (then -lm). libdisksim.a
        is C++ (DiskSim's src/ is compiled with g++), the other three are C."""
        return (self.tree / "src" / "libdisksim.a",
                self.tree / "diskmodel" / "lib" / "libdiskmodel.a",
                self.tree / "libparam" / "lib" / "libparam.a",
                self.tree / "libddbg" / "lib" / "libddbg.a")

    def products(self) -> tuple[Path, ...]:
        return (self.binary, self.rms, self.syssim, self.interface_object,
                self.include_dirs[0] / "disksim_interface.h", *self.libraries)


def build_disksim(source: Path) -> DisksimBuild:
    """The cached build of the DiskSim checkout `source`, building it first if needed."""
    for tool in BUILD_TOOLS:
        hostdeps.require_tool(tool)
    console.print(f"DiskSim: hashing the source in {source}")
    tree, inputs = build_inputs(source)
    key = json_sha256(inputs)[:16]
    builds_dir = cache_dir() / "disksim"
    work = builds_dir / key
    if (work / "manifest.json").is_file():
        console.print(f"DiskSim {key}: cached in {work}")
        return DisksimBuild(work)
    with exclusive(builds_dir / f"{key}.lock", f"DiskSim build {key}"):
        if (work / "manifest.json").is_file():
            return DisksimBuild(work)  # built by the process we waited for
        return _build(tree, inputs, key, work)


def _build(tree: Path, inputs: dict, key: str, work: Path) -> DisksimBuild:
    built = DisksimBuild(work)
    started = time.monotonic()
    # DiskSim's makefiles rebuild only what is missing, but a half-generated module file
    # would look finished: a build that died is started again from a fresh copy (it
    # takes well under a minute).
    shutil.rmtree(work, ignore_errors=True)
    console.print(f"DiskSim {key}: copying {tree} and applying {len(inputs['patches'])} patches")
    for relative in source_files(tree):
        target = built.tree / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / relative, target, follow_symlinks=False)
    for patch in read_series().patches:
        output = patch_failure(built.tree, patch)
        if output is not None:
            raise StudyError(f"DiskSim patch {patch.name} does not apply to DiskSim "
                             f"{inputs['disksim_version']} in {built.tree}:\n{output}")
    # What the build starts from: the user's source with our patches (what its outputs
    # must hash back to, since they are not source).
    patched = source_digest(built.tree, source_files(built.tree))
    console.print(f"DiskSim {key}: make (log in {work}/build.log; about 20 s on one core)")
    steps = run_logged(["make"], cwd=built.tree, log_path=work / "build.log",
                       label="DiskSim build", step_pattern=COMPILE_STEP,
                       expected_steps=DEFAULT_STEPS)
    finish_build(built, "DiskSim", inputs, key=key, source=tree, patched=patched,
                 started=started, jobs=1, steps=steps, compiler="gcc")
    return built
