"""Benchmark: user-space instructions of each workload's default run, natively.

Sizes are those the defaults take on a 256 MiB guest (the study's desktop systems),
given as absolute sizes since this host's MemTotal is far larger. Counts come from
valgrind (callgrind), so they cover user space only: the kernel's page-fault, swap
and IO work is not in them (gem5's own per-phase counts are, see RESULTS.md).

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_workload_instructions.py [WORKDIR]
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from reclaimstudy.artefacts.image import write_data_file
from reclaimstudy.paths import REPO, WORKLOADS

MEMORY_MIB = 256


def count(cmd: list[str], workdir: Path) -> int:
    """Instructions over every process of `cmd`, from callgrind's 'Collected' lines."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--trace-children=yes",
         f"--callgrind-out-file={workdir}/cg.%p", *cmd],
        capture_output=True, text=True, env=dict(os.environ, RECLAIM_BACKEND="native"))
    if result.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {result.stderr[-2000:]}")
    return sum(int(n) for n in re.findall(r"Collected : (\d+)", result.stderr))


def main(workdir: Path):
    programs = workdir / "programs"
    subprocess.run(["make", "-s", "-C", str(WORKLOADS), f"OUT={programs}"], check=True)
    bins = programs / "workloads"
    data = workdir / "data"
    env = dict(os.environ, PYTHONPATH=str(REPO), RECLAIM_PROGRAMS=str(bins),
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    for name in ("desktop-launch", "hot-stream", "make-grep"):
        if not (data / name).exists():
            subprocess.run([str(WORKLOADS / name / "make-data"), str(data / name), str(MEMORY_MIB)],
                           check=True, env=env)
    files = {"thrash.bin": 0.1, "mmap.bin": 1.25, "stream.bin": 1.5}
    for name, fraction in files.items():
        if not (data / name).exists():
            write_data_file(data / name, int(fraction * MEMORY_MIB) << 20, name)
    code_data = sum(p.stat().st_size for p in (data / "desktop-launch").iterdir())
    heap_mib = max(1, int((1.5 * MEMORY_MIB - code_data / (1 << 20)) / 8))
    runs = {
        "thrash": [bins / "thrash/thrash", f"--anon-mib={MEMORY_MIB}", f"--file={data}/thrash.bin"],
        "mmap-seq": [bins / "mmap-seq/mmap-seq", f"--file={data}/mmap.bin"],
        "desktop-launch": [bins / "desktop-launch/desktop-launch", f"--app-dir={data}/desktop-launch",
                           f"--heap-mib={heap_mib}"],
        "hot-stream": [bins / "hot-stream/hot-stream", f"--file={data}/stream.bin",
                       f"--app={data}/hot-stream/interactive",
                       f"--app-data={data}/hot-stream/interactive.dat"],
        "lazyfree": [bins / "lazyfree/lazyfree"],
        "make-grep": [bins / "make-grep/make-grep", f"--data-dir={data}/make-grep",
                      f"--out-dir={workdir}/objs"],
    }
    print(f"| workload | user-space instructions (default run at {MEMORY_MIB} MiB) |")
    print("|---|---|")
    for name, cmd in runs.items():
        n = count([str(c) for c in cmd], workdir)
        print(f"| {name} | {n / 1e6:,.0f} M |", flush=True)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="bench-"))
    target.mkdir(parents=True, exist_ok=True)
    try:
        main(target)
    finally:
        if len(sys.argv) <= 1:
            shutil.rmtree(target, ignore_errors=True)
