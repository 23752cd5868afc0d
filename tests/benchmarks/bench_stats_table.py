"""Benchmark: build the tidy table over 1000 gem5 runs; record time and peak memory.

Each synthetic run is a recorded smoke run (tests/fixtures/runs) given a real gem5
stats.txt (tests/fixtures/gem5/se-x86-o3-phases, O3 + caches + DDR4: ~1700 stats a
block), cut to its two phases' blocks, ~480 KB a file.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_stats_table.py [RUNS]
"""

import json
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from analysis.table import build_table

HERE = Path(__file__).resolve().parent
RUN = next((HERE.parent / "fixtures" / "runs" / "smoke").glob("smoke-baseline-*"))
STATS = HERE.parent / "fixtures" / "gem5" / "se-x86-o3-phases" / "stats.txt"


def two_blocks(text: str) -> str:
    blocks = re.findall(r"\n---------- Begin Simulation Statistics.*?End Simulation Statistics\s+-+\n",
                        "\n" + text, re.S)
    return "".join(blocks[:2])


def main(count: int):
    stats = two_blocks(STATS.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        study = Path(tmp) / "bench"
        for i in range(count):
            target = study / f"run-{i:05d}"
            shutil.copytree(RUN, target)
            record = json.loads((target / "run.json").read_text())
            record.update(study="bench", run_id=target.name, backend="gem5")
            (target / "run.json").write_text(json.dumps(record))
            (target / "stats.txt").write_text(stats)
        size = sum(p.stat().st_size for p in study.glob("*/stats.txt"))
        started = time.perf_counter()
        table = build_table(study, "bench")
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{count} runs, {size / 1e6:.0f} MB of stats.txt: table of {len(table)} rows "
              f"in {seconds:.1f} s ({seconds / count * 1000:.1f} ms a run), peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
