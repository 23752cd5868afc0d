"""What the kernel build and the gem5 build share: applying a patch series, guessing
a build's length from earlier ones, and the facts a build manifest records; and
whether a gem5 binary links tcmalloc (its build records it, the backend checks it)."""

import json
import mmap
import platform
import re
import subprocess
import time
from pathlib import Path

from reclaimstudy import hostdeps


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
