"""What the kernel, gem5 and DiskSim builds share: applying a patch series, guessing a
build's length from earlier ones, the commit a source checkout is at, and the facts a
build manifest records; and whether a gem5 binary links tcmalloc (its build records it,
the backend checks it)."""

import json
import mmap
import platform
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.util import hostdeps


@dataclass(frozen=True)
class Series:
    version: str
    patches: tuple[Path, ...]


@dataclass(frozen=True)
class CachedBuild:
    """A finished build in the cache: its folder, and the manifest written last."""
    directory: Path

    @property
    def manifest(self) -> dict:
        return json.loads((self.directory / "manifest.json").read_text())

    @property
    def tree(self) -> Path:
        """The build's own copy of the source, patched, where it was compiled."""
        return self.directory / "source"


def source_digest(tree: Path, files: list[Path]) -> str:
    """Content hash of a checkout's source files (relative to `tree`): a dirty tree is
    a different source; a symbolic link counts by where it points."""
    listing = [[str(f), "link:" + str((tree / f).readlink()) if (tree / f).is_symlink()
                else file_sha256(tree / f)] for f in files]
    return json_sha256(listing)


def patch_digests(patches) -> list[dict]:
    """A patch series as a build key records it: each patch's name and content hash."""
    return [{"name": p.name, "sha256": file_sha256(p)} for p in patches]


def read_patch_series(path: Path, product: str) -> Series:
    """A `series` file of our patches to a simulator we build (gem5, DiskSim): patch
    names in order, and the `# made-against: PRODUCT VERSION` line."""
    version = None
    patches = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if match := re.match(rf"#\s*made-against:\s*{product}\s+v?(\S+)\s*$", line):
            version = match[1]
        elif line and not line.startswith("#"):
            patch = path.parent / line
            if not patch.is_file():
                raise StudyError(f"{path}:{number}: patch '{line}' does not exist in {path.parent}")
            patches.append(patch)
    if version is None:
        raise StudyError(f"{path}: no '# made-against: {product} VERSION' line")
    return Series(version, tuple(patches))


def patch_failure(tree: Path, patch: Path) -> str | None:
    """Apply one patch with `patch -p1`; its output when it does not apply, else None."""
    hostdeps.require_tool("patch")
    result = subprocess.run(
        ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i", str(patch)],
        cwd=tree, capture_output=True, text=True)
    return None if result.returncode == 0 else f"{result.stdout}{result.stderr}".rstrip()


def expected_steps(builds_dir: Path, default: int) -> int:
    """Compile steps of the largest earlier build in `builds_dir`, the best guess for
    this one (`default` before any)."""
    counts = [json.loads(m.read_text()).get("compile_steps", 0)
              for m in builds_dir.glob("*/manifest.json")]
    return max(counts, default=0) or default


def links_tcmalloc(binary: Path) -> bool:
    """Whether a binary is linked against tcmalloc (its dynamic string table names it)."""
    with open(binary, "rb") as handle, \
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.find(b"libtcmalloc") != -1


def compilers_of(binary: Path) -> list[str]:
    """The compilers that built a binary, from the version strings GCC leaves in its
    .comment section ("GCC: (Debian 12.2.0-14) 12.2.0"), sorted, each once."""
    with open(binary, "rb") as handle, \
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return sorted({m.decode(errors="replace")
                       for m in re.findall(rb"GCC: \([^)\n]{1,80}\) [0-9][0-9.]{0,20}", data)})


def build_facts(started: float, jobs: int, steps: int, compiler: str) -> dict:
    """How and where a build ran: its time (from time.monotonic() at `started`), jobs,
    compile steps, date, host and the compiler's version line."""
    return {
        "build_seconds": round(time.monotonic() - started, 1),
        "build_jobs": jobs,
        "compile_steps": steps,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": platform.node(),
        "compiler": subprocess.run([compiler, "--version"], capture_output=True,
                                   text=True).stdout.splitlines()[0],
    }


def finish_build(built, product: str, inputs: dict, *, key: str, source: Path, patched: str,
                 started: float, jobs: int, steps: int, compiler: str) -> None:
    """Refuse a build of `product` that lacks one of its products; otherwise write its
    manifest (the inputs, the patched source's and the binary's hashes, the compilers
    and build_facts) last, so a build that dies half-way never looks complete."""
    work = built.directory
    missing = [str(p.relative_to(work)) for p in built.products() if not p.is_file()]
    if missing:
        raise StudyError(f"{product} build {key} finished without {', '.join(missing)}; "
                         f"full log: {work}/build.log")
    log = (work / "build.log").read_text(errors="replace").splitlines()
    manifest = {**inputs, "key": key, "source": str(source), "patched_sha256": patched,
                "binary_sha256": file_sha256(built.binary),
                "compilers": compilers_of(built.binary),
                "warnings": sum(" warning: " in line for line in log),
                **build_facts(started, jobs, steps, compiler)}
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def source_commit(source: Path) -> str | None:
    """The checked-out commit, read from .git without running git (None if unknown)."""
    git = source / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return None
