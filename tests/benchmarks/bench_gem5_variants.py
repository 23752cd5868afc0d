"""Benchmark: gem5.opt against gem5.fast on the same run (issue 17's "a faster gem5").

Runs one point with gem5.opt (`./study run`), then gem5.fast on exactly that run's
inputs (its params.json: the same boot checkpoint, job and seed; a `./study run` with
another binary would be another run, since the binary is part of a run's identity and
the run id reaches the guest). Prints each one's CPU and wall time, the ratio, and
whether the two agree: every simulated statistic of every stats block (all but gem5's
host figures), and the guest's console.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_gem5_variants.py \\
        OPT_BINARY FAST_BINARY SYSTEM WORKLOAD [PARAM=V ...]
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from reclaimstudy.backends.gem5.backend import CONFIG_SCRIPT
from reclaimstudy.paths import REPO
from reclaimstudy.results.gem5_stats import simulated_values
from reclaimstudy.util.subprocesses import run_measured

def main(opt: str, fast: str, system: str, workload: str, params: list[str]):
    results = Path(tempfile.mkdtemp(prefix="bench-variants-"))
    command = [str(REPO / "study"), "run", "--backend", "gem5", "--system", system,
               "--policy", "baseline", "--workload", workload, "--study", "variants",
               "--results", str(results)] + [f"--param={p}" for p in params]
    out = subprocess.run(command, env=dict(os.environ, GEM5=opt), check=True, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    opt_dir = Path(out.strip().splitlines()[-1].split(" -> ")[-1])  # "run ID: ok in N s -> DIR"
    opt_host = json.loads((opt_dir / "run.json").read_text())["backend_info"]
    fast_dir = results / "fast"
    fast_dir.mkdir()
    (fast_dir / "params.json").write_text((opt_dir / "params.json").read_text())
    fast_host = run_measured([fast, "--outdir", str(fast_dir), "--redirect-stdout",
                              "--redirect-stderr", str(CONFIG_SCRIPT),
                              str(fast_dir / "params.json")], 4 * 3600, fast_dir / "gem5.log")
    if fast_host["exit_code"] != 0:
        sys.exit(f"gem5.fast failed: {fast_dir / 'gem5.log'}")
    print(f"{workload} {' '.join(params)} on {system}; results in {results}")
    print("| binary | gem5 CPU s | wall s |")
    print("|---|---|---|")
    for name, host in (("gem5.opt", opt_host), ("gem5.fast", fast_host)):
        print(f"| {name} | {host['cpu_seconds']:.1f} | {host['wall_seconds']:.1f} |")
    print(f"fast / opt CPU time: {fast_host['cpu_seconds'] / opt_host['cpu_seconds']:.3f}")
    same_stats = simulated_values(opt_dir / "stats.txt") == simulated_values(fast_dir / "stats.txt")
    same_guest = (opt_dir / "console.log").read_text() == \
        (fast_dir / "board.pc.com_1.device").read_text()
    print(f"simulated statistics identical: {same_stats}; guest console identical: {same_guest}")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
