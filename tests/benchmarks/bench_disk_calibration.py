"""disk-calib on each modelled profile and on the same system with a disk that takes no
time (the guest's own IO path), then the calibration table (tests/benchmarks/RESULTS.md).
A profile whose disk the analytic model does not time (DiskSim, SimpleSSD) has no
prediction to calibrate against: it is named with its reference and not run.

    GEM5=... PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_disk_calibration.py \\
        [--results DIR] [SYSTEM ...]
"""

import argparse
import sys
from pathlib import Path

from analysis.disk_calibration import markdown
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.campaigns import runs
from reclaimstudy.config.disk_model import null_disk, why_no_prediction
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.paths import RESULTS

STUDY = "disk-calibration"


def run(system, results: Path) -> Path:
    workload = get_workload("disk-calib")
    spec = runs.RunSpec(STUDY, system, get_policy("baseline"), workload, workload.arguments(),
                        0, "gem5")
    record = runs.execute(spec, gem5_backend.Gem5Backend(), results=results, timeout_s=7200)
    return results / STUDY / record["run_id"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("systems", nargs="*",
                        default=["desktop-hdd-128", "desktop-ssd-128", "mobile-lpddr"])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    # Asked before any gem5 run: such a profile would spend two runs on a table with
    # nothing to compare them to.
    systems = []
    for name in args.systems:
        system = get_system(name)
        why = why_no_prediction(system.disk.timing)
        if why is None:
            systems.append(system)
        else:
            print(f"{name}: not run: {why}", file=sys.stderr)
    if not systems:
        print("nothing to calibrate: none of the profiles has an analytic prediction",
              file=sys.stderr)
        return 1
    pairs = []
    for system in systems:
        pairs.append((run(system, args.results), run(null_disk(system), args.results)))
        print(markdown(pairs[-1:]), flush=True)
    print(markdown(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
