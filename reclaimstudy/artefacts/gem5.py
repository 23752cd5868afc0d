"""Build gem5 with our patch series (`gem5-patches/`) from a checkout the user gives.

    ./study gem5 --source DIR [--variant opt|fast] [--jobs N] [--disksim DISKSIM_DIR]
                 [--simplessd SIMPLESSD_DIR]

The checkout must be gem5 v24.0.0.1 (the version the series is made against). It is
copied into the cache (the user's tree is never changed), patched, and built there
with scons; the result is cached under a key made of the source's content, the
patches and the variant, so an unchanged build is never redone. A build that dies
is resumed by running the command again: scons rebuilds only what is missing.

With --disksim, DiskSim 4.0 is built first from that checkout (disksim.py) and linked
in: gem5-patches/0005's DiskSimTiming, a drive timed by DiskSim's validated models. The
DiskSim build's key is then part of the gem5 build's key (and of the binary's identity:
the build writes it into the tree as src/dev/storage/reclaimstudy_disksim.py, which
gem5 embeds as m5.objects.reclaimstudy_disksim). Without --disksim nothing of it is
built and the key is made as before.

--simplessd does the same for SimpleSSD 2.0 (simplessd.py; a SimpleSSD-Standalone
checkout): gem5-patches/0006's SimpleSSDTiming, a solid-state drive timed by SimpleSSD,
linked in through src/dev/storage/reclaimstudy_simplessd.py, its build's key part of
the gem5 build's key.
"""

import json
import os
import re
import shutil
import time
from pathlib import Path

from reclaimstudy.artefacts.shared import (CachedBuild, Series, build_facts, expected_steps,
                                           links_tcmalloc, patch_digests, patch_failure,
                                           read_patch_series, source_commit, source_digest)
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.paths import GEM5_PATCHES, cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.locks import exclusive
from reclaimstudy.util.progress import console, run_logged

SERIES = GEM5_PATCHES / "series"
VARIANTS = ("opt", "fast")
# Host tools the build runs (their packages: packaging/host-tools.txt).
BUILD_TOOLS = ("patch", "scons", "g++", "m4", "/usr/bin/python3-config")
# gem5 embeds Python; Debian's, whatever `python3` comes first on PATH.
PYTHON = "/usr/bin/python3"
# Objects an X86 build compiles, for the progress bar until a build has run here.
DEFAULT_STEPS = 1900
# Bump when the way gem5 is built changes, so old cache entries are not reused.
BUILD_RECIPE = 1
# Not part of the source: scons' outputs, version control, Python caches.
SKIPPED = {"build", ".git", "__pycache__", ".sconsign.dblite", ".sconf_temp"}
PREPARED = ".reclaimstudy-prepared"
# Written into the tree for gem5-patches/0005's SConscript (and embedded in the binary).
DISKSIM_MODULE = Path("src") / "dev" / "storage" / "reclaimstudy_disksim.py"
# Written into the tree for gem5-patches/0006's SConscript (and embedded in the binary).
SIMPLESSD_MODULE = Path("src") / "dev" / "storage" / "reclaimstudy_simplessd.py"


def read_series(path: Path = SERIES) -> Series:
    """Patch names in order, and the `# made-against: gem5 VERSION` line."""
    return read_patch_series(path, "gem5")


def source_version(source: Path) -> str:
    """gem5's own version string, from src/base/version.cc."""
    version_file = source / "src" / "base" / "version.cc"
    if not version_file.is_file():
        raise StudyError(f"{source} is not a gem5 source checkout (no src/base/version.cc)")
    match = re.search(r'gem5Version\s*=\s*"([^"]+)"', version_file.read_text())
    if not match:
        raise StudyError(f"{version_file}: no gem5Version string")
    return match[1]


def source_files(source: Path) -> list[Path]:
    """Every file of the checkout, relative, in a stable order."""
    files = []
    for root, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        files += [Path(root, n).relative_to(source) for n in sorted(names) if n not in SKIPPED]
    return files



def check_version(source: Path, series: Series) -> str:
    version = source_version(source)
    if version != series.version:
        raise StudyError(
            f"{source} is gem5 {version}, but gem5-patches/ is made against gem5 "
            f"{series.version}: check out that release (its tag is v{series.version}) "
            f"and give that checkout")
    return version


def build_inputs(source: Path, variant: str, disksim=None, simplessd=None) -> dict:
    """Everything that determines the built binary, by content. `disksim`: the
    DisksimBuild linked in, `simplessd` the SimpleSSDBuild (each only when there is one,
    so a build without them has the key it always had)."""
    if variant not in VARIANTS:
        raise StudyError(f"unknown gem5 variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    series = read_series()
    version = check_version(source, series)
    inputs: dict = {
        "gem5_version": version,
        "source_commit": source_commit(source),
        "source_sha256": source_digest(source, source_files(source)),
        "patches": patch_digests(series.patches),
        "variant": variant,
        "recipe": BUILD_RECIPE,
    }
    if disksim is not None:
        inputs["disksim"] = disksim_identity(disksim)
    if simplessd is not None:
        inputs["simplessd"] = simplessd_identity(simplessd)
    return inputs


def disksim_identity(disksim) -> dict:
    """What a gem5 binary says of the DiskSim linked into it: what made it, never where
    it lies (the same on every machine)."""
    m = disksim.manifest
    return {"key": m["key"], "version": m["disksim_version"],
            "source_commit": m["source_commit"],
            "patches": [p["name"] for p in m["patches"]]}


def disksim_module(disksim) -> str:
    """src/dev/storage/reclaimstudy_disksim.py: for gem5-patches/0005's SConscript, the
    DiskSim build's headers and libraries; for runs, its identity and its valid/ folder
    (the drives' parameter files a profile's parameter file sources)."""
    info = {**disksim_identity(disksim),
            "include_dirs": [str(p) for p in disksim.internal_include_dirs],
            "libraries": [str(p) for p in disksim.libraries],
            "valid_dir": str(disksim.validation_dir)}
    return ("# Written by reclaimstudy/artefacts/gem5.py: the DiskSim build linked into this gem5\n"
            "# (gem5-patches/0005).\n"
            f"RECLAIMSTUDY_DISKSIM = {json.dumps(info, indent=1)}\n")


def simplessd_identity(simplessd) -> dict:
    """What a gem5 binary says of the SimpleSSD linked into it: what made it (its build's
    key covers SimpleSSD's source and simplessd-patches/), never where it lies."""
    m = simplessd.manifest
    return {"key": m["key"], "version": m["simplessd_version"],
            "source_commit": m["simplessd_commit"],
            "patches": [p["name"] for p in m["patches"]]}


def simplessd_module(simplessd) -> str:
    """src/dev/storage/reclaimstudy_simplessd.py: for gem5-patches/0006's SConscript, the
    SimpleSSD build's headers and libraries; for runs, its identity."""
    info = {**simplessd_identity(simplessd),
            "include_dirs": [str(p) for p in simplessd.include_dirs],
            "libraries": [str(p) for p in simplessd.libraries]}
    return ("# Written by reclaimstudy/artefacts/gem5.py: the SimpleSSD build linked into this\n"
            "# gem5 (gem5-patches/0006).\n"
            f"RECLAIMSTUDY_SIMPLESSD = {json.dumps(info, indent=1)}\n")


def apply_series(tree: Path, series: Series) -> None:
    """Apply every patch with `patch -p1`; on failure say which one."""
    for patch in series.patches:
        output = patch_failure(tree, patch)
        if output is not None:
            raise StudyError(f"gem5 patch {patch.name} does not apply to gem5 {series.version} "
                             f"in {tree}:\n{output}")


def copy_source(source: Path, files: list[Path], tree: Path) -> None:
    for relative in files:
        target = tree / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / relative, target, follow_symlinks=False)


def earlier_build(builds_dir: Path, inputs: dict) -> Path | None:
    """A finished build in the cache of the same source, variant and recipe (so only
    the patch series, or the DiskSim or SimpleSSD linked in, differs), newest first; None
    if there is none.

    Sources are copied with their times (copy_source), so scons' MD5-timestamp check
    finds the unpatched files unchanged and the patched ones changed."""
    same = ("source_sha256", "variant", "recipe", "gem5_version")
    found = []
    for manifest_path in builds_dir.glob("*/manifest.json"):
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if (all(manifest.get(k) == inputs[k] for k in same)
                and Gem5Build(manifest_path.parent).binary.is_file()):
            found.append((manifest_path.stat().st_mtime, manifest_path.parent))
    return max(found)[1] if found else None


class Gem5Build(CachedBuild):
    @property
    def binary(self) -> Path:
        return self.directory / "source" / "build" / "X86" / f"gem5.{self.manifest['variant']}"


def build_gem5(source: Path, variant: str = "opt", jobs: int | None = None,
               disksim: Path | None = None, simplessd: Path | None = None) -> Gem5Build:
    """The cached patched build of `source`, building (or resuming) it first if needed;
    with `disksim` (a DiskSim checkout) or `simplessd` (a SimpleSSD-Standalone checkout),
    that simulator built first and linked in."""
    source = source.resolve()
    if not source.is_dir():
        raise StudyError(f"--source {source}: no such directory")
    for tool in BUILD_TOOLS:
        hostdeps.require_tool(tool)
    disksim_built = None
    if disksim is not None:
        from reclaimstudy.artefacts.disksim import build_disksim
        disksim_built = build_disksim(disksim)
    simplessd_built = None
    if simplessd is not None:
        from reclaimstudy.artefacts.simplessd import build_simplessd
        simplessd_built = build_simplessd(simplessd)
    console.print(f"gem5: hashing the source in {source}")
    inputs = build_inputs(source, variant, disksim_built, simplessd_built)
    key = json_sha256(inputs)[:16]
    builds_dir = cache_dir() / "gem5"
    work = builds_dir / key
    if (work / "manifest.json").is_file():
        console.print(f"gem5 {key}: cached in {work}")
        return Gem5Build(work)
    with exclusive(builds_dir / f"{key}.lock", f"gem5 build {key}"):
        if (work / "manifest.json").is_file():
            return Gem5Build(work)  # built by the process we waited for
        return _build(source, inputs, key, work, jobs, disksim_built, simplessd_built)


def _build(source: Path, inputs: dict, key: str, work: Path, jobs: int | None,
           disksim=None, simplessd=None) -> Gem5Build:
    jobs = jobs or os.cpu_count() or 1
    tree = work / "source"
    started = time.monotonic()
    if not (work / PREPARED).is_file():
        shutil.rmtree(work, ignore_errors=True)
        console.print(f"gem5 {key}: copying {source} and applying "
                      f"{len(inputs['patches'])} patches")
        copy_source(source, source_files(source), tree)
        apply_series(tree, read_series())
        if disksim is not None:
            (tree / DISKSIM_MODULE).write_text(disksim_module(disksim))
        if simplessd is not None:
            (tree / SIMPLESSD_MODULE).write_text(simplessd_module(simplessd))
        donor = earlier_build(work.parent, inputs)
        if donor is not None:
            # The same checkout built with another series: start from its objects, so
            # scons compiles only what the patches changed (minutes, not hours).
            console.print(f"gem5 {key}: starting from the objects of build {donor.name} "
                          f"(same source and variant, other patches, DiskSim or SimpleSSD)")
            shutil.copytree(donor / "source" / "build", tree / "build", symlinks=True)
            inputs = {**inputs, "seeded_from": donor.name}
        (work / PREPARED).write_text(json.dumps(inputs, indent=1) + "\n")
    else:
        console.print(f"gem5 {key}: resuming the build in {work}")
        inputs = json.loads((work / PREPARED).read_text())
    target = f"build/X86/gem5.{inputs['variant']}"
    how_long = ("only what the patches changed and what scons generates per tree: "
                "about half an hour on 2 cores" if inputs.get("seeded_from")
                else "a first build takes about 1.5 hours on 2 cores")
    console.print(f"gem5 {key}: scons {target} with {jobs} jobs (log in {work}/build.log; "
                  f"{how_long})")
    steps = run_logged(
        [PYTHON, shutil.which("scons"), target, f"-j{jobs}",
         "PYTHON_CONFIG=/usr/bin/python3-config"],
        cwd=tree, log_path=work / "build.log", label="gem5 build",
        step_pattern=r"^\s*\[\s*(CXX|SHCXX|CC)\]", expected_steps=expected_steps(work.parent, DEFAULT_STEPS))
    binary = tree / target
    manifest = dict(inputs)
    manifest.update({
        "key": key,
        "source": str(source),
        "binary_sha256": file_sha256(binary),
        "tcmalloc": links_tcmalloc(binary),
        **build_facts(started, jobs, steps, "g++"),
    })
    # Written last: a build that dies half-way never looks complete.
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return Gem5Build(work)
