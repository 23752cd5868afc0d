"""Benchmark: gem5.opt against gem5.fast on the same run (issue 17's "a faster gem5").

Runs one point with each binary at the same time (one core each, so both meet the same
host load), then prints each one's host time, the ratio, and whether the two runs agree:
every simulated statistic of every stats block (all but gem5's host figures), and the
guest's records.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_gem5_variants.py \\
        OPT_BINARY FAST_BINARY SYSTEM WORKLOAD [PARAM=V ...]
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from analysis.gem5stats import block_values, parse_stats
from reclaimstudy.paths import REPO

HOST_STATS = ("host", "simFreq")  # gem5's host figures, and a constant


def simulated(run_dir: Path) -> list[dict]:
    return [{k: "nan" if v != v else v for k, v in block_values(b).items()
             if not k.startswith(HOST_STATS)} for b in parse_stats(run_dir / "stats.txt")]


def main(opt: str, fast: str, system: str, workload: str, params: list[str]):
    results = Path(tempfile.mkdtemp(prefix="bench-variants-"))
    command = [str(REPO / "study"), "run", "--backend", "gem5", "--system", system,
               "--policy", "baseline", "--workload", workload, "--study", "variants",
               "--results", str(results)] + [f"--param={p}" for p in params]
    # Each binary's boot checkpoint first (a checkpoint belongs to the binary that made
    # it), so neither run times a boot.
    boots = [subprocess.Popen([str(REPO / "study"), "boot", "--system", system],
                              env=dict(os.environ, GEM5=binary), stdout=subprocess.DEVNULL)
             for binary in (opt, fast)]
    if any(boot.wait() for boot in boots):
        sys.exit("a boot failed")
    running = {name: subprocess.Popen(command, env=dict(os.environ, GEM5=binary),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
               for name, binary in (("opt", opt), ("fast", fast))}
    records = {}
    for name, process in running.items():
        out, _ = process.communicate()  # the run's last line: "run ID: ok in N s -> DIR"
        run_dir = Path(out.strip().splitlines()[-1].split(" -> ")[-1])
        records[name] = (json.loads((run_dir / "run.json").read_text()), run_dir)
    print(f"{workload} {' '.join(params)} on {system}; results in {results}")
    print("| binary | variant | tcmalloc | run wall s |")
    print("|---|---|---|---|")
    for name, (record, _) in records.items():
        gem5 = record["artefacts"]["gem5"]
        print(f"| {name} | {gem5['variant']} | {gem5['tcmalloc']} | {record['wall_seconds']:.1f} |")
    (opt_record, opt_dir), (fast_record, fast_dir) = records["opt"], records["fast"]
    print(f"fast / opt host time: {fast_record['wall_seconds'] / opt_record['wall_seconds']:.3f}")
    same_stats = simulated(opt_dir) == simulated(fast_dir)
    same_events = (opt_dir / "events.jsonl").read_text() == (fast_dir / "events.jsonl").read_text()
    print(f"simulated statistics identical: {same_stats}; guest records identical: {same_events}")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
