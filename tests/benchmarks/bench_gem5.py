"""Benchmark: what gem5 costs on this machine, per CPU model (needs GEM5).

Boots ci-tiny's layout once (the checkpoint: KVM where it works, else atomic), then
restores it onto the atomic, timing and O3 CPUs (timing and O3 with private L1/L2
caches) and runs a short smoke job. Prints, per CPU model: host wall time of the run,
host time outside the job's phases (restore, instantiation, exit), simulated seconds
and instructions of the phases, simulated instructions per host second, host seconds
per simulated second, and peak host memory of the simulation.

    GEM5=.../gem5.opt PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_gem5.py [WORKLOAD [PARAM=V ...]]
"""

import dataclasses
import re
import sys
import tempfile
from pathlib import Path

from analysis.metrics import GEM5
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.campaigns import runs
from reclaimstudy.cli import parse_params
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.results.gem5_stats import block_values, parse_stats

CACHES = {"hierarchy": "private-l1-private-l2", "l1d": "32KiB", "l1i": "32KiB", "l2": "1MiB"}


def phase_totals(run_dir: Path) -> tuple[float, float, float]:
    """(simulated seconds, instructions, host seconds) summed over the phase blocks."""
    sim = insts = host = 0.0
    pattern = next(p for spec, p, _ in GEM5 if spec.name == "instructions")
    for block in parse_stats(run_dir / "stats.txt"):
        values = block_values(block)
        sim += values["simSeconds"]
        host += values["hostSeconds"]
        insts += sum(v for k, v in values.items() if re.search(pattern, k))
    return sim, insts, host


def main(workload_name: str, params: dict):
    base = get_system("ci-tiny")
    workload = get_workload(workload_name)
    arguments = workload.arguments(params)
    results = Path(tempfile.mkdtemp(prefix="bench-gem5-"))
    print(f"workload {workload_name} {arguments} on {base.memory_mib} MiB; results in {results}")
    print("| CPU | run wall s | outside phases s | sim s | instructions | inst/host s "
          "| host s / sim s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for cpu in ("atomic", "timing", "o3"):
        caches = {"hierarchy": "none", "l1d": None, "l1i": None, "l2": None} if cpu == "atomic" \
            else {"hierarchy": CACHES["hierarchy"], "l1d": CACHES["l1d"], "l1i": CACHES["l1i"],
                  "l2": CACHES["l2"]}
        system = dataclasses.replace(base, name=f"bench-{cpu}", cpu_model=cpu, **caches)
        spec = runs.RunSpec(study="bench-gem5", system=system, policy=get_policy("baseline"),
                            workload=workload, arguments=arguments, repetition=0, backend="gem5")
        record = runs.execute(spec, gem5_backend, results=results, timeout_s=4 * 3600)
        if record["status"] != "ok":
            print(f"| {cpu} | failed: {record['reason']} |")
            continue
        info = record["backend_info"]
        sim, insts, host = phase_totals(results / "bench-gem5" / record["run_id"])
        print(f"| {cpu} | {info['wall_seconds']:.0f} | {info['wall_seconds'] - host:.0f} | {sim:.3f} "
              f"| {insts / 1e6:.1f} M | {insts / host / 1e6:.2f} M | {host / sim:.0f} "
              f"| {info['max_rss_mib']:.0f} |", flush=True)
    checkpoint = record["artefacts"]["checkpoint"]
    print(f"boot to checkpoint: {checkpoint['boot_host_seconds']:.0f} s host on the "
          f"{checkpoint['cpu']} CPU ({checkpoint['boot_sim_seconds']:.3f} s simulated), peak "
          f"{checkpoint['boot_peak_rss_mib']:.0f} MiB")



if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "smoke"
    main(name, parse_params(sys.argv[2:]) or ({"read_mib": 8, "anon_mib": 4} if name == "smoke" else {}))
