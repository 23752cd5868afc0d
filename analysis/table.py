"""One tidy table over all runs of a study: run inputs x phase x metric.

Three sources per run: the workload's own metrics (workloads/<name>/parse.py), the
guest's /proc/vmstat between phase marks, and on gem5 the hardware statistics of
each phase's stats.txt block (block i is phase i). Only published runs (run.json
present) are read; a half-written run never is.
"""

import json
import re
from pathlib import Path

import pandas as pd

from analysis.gem5stats import StatsError, block_values, parse_stats
from analysis.records import phase_vmstat_deltas, read_events, workload_metrics
from reclaimstudy.errors import StudyError
from reclaimstudy.record import PublishedRun, published_runs

# artefacts: which guest and simulator (record.artefacts_key); setup: everything but the
# policy and the repetition (record.setup_key); cell: everything but the repetition
# (record.cell_key), so only repetitions are ever pooled.
COLUMNS = ["run_id", "study", "experiment", "artefacts", "setup", "cell", "backend", "system",
           "policy", "workload", "repetition", "arguments", "status", "source", "phase", "metric", "index",
           "value", "unit", "better"]
# Guest counters reported per phase: (name in the table, /proc/vmstat counters summed, unit).
VMSTAT = [
    ("pgfault", ("pgfault",), "faults"),
    ("pgmajfault", ("pgmajfault",), "faults"),
    ("pswpin", ("pswpin",), "pages"),
    ("pswpout", ("pswpout",), "pages"),
    ("refault_anon", ("workingset_refault_anon",), "pages"),
    ("refault_file", ("workingset_refault_file",), "pages"),
    ("pgactivate", ("pgactivate",), "pages"),
    ("pgscan_kswapd", ("pgscan_kswapd",), "pages"),
    ("pgscan_direct", ("pgscan_direct",), "pages"),
    ("pgsteal_kswapd", ("pgsteal_kswapd",), "pages"),
    ("pgsteal_direct", ("pgsteal_direct",), "pages"),
    ("allocstall", ("allocstall_dma", "allocstall_dma32", "allocstall_normal",
                    "allocstall_movable"), "stalls"),
    ("pglazyfree", ("pglazyfree",), "pages"),
    ("pglazyfreed", ("pglazyfreed",), "pages"),
    ("pgpgin", ("pgpgin",), "KiB"),
    ("pgpgout", ("pgpgout",), "KiB"),
]
# gem5 statistics per phase: (name, key pattern, how to combine matches, unit).
GEM5 = [
    ("sim_seconds", r"^simSeconds$", "sum", "s"),
    ("instructions", r"\.core\.commitStats0\.numInsts$", "sum", "instructions"),
    ("cycles", r"\.core\.numCycles$", "sum", "cycles"),
    ("l1d_miss_rate", r"l1d-cache-\d+\.overallMissRate::total$", "mean", "ratio"),
    ("l2_miss_rate", r"l2-cache(-\d+)?\.overallMissRate::total$", "mean", "ratio"),
    ("dram_bw", r"mem_ctrl\d*\.dram\.bwTotal::total$", "sum", "B/s"),
    ("dram_latency", r"mem_ctrl\d*\.dram\.avgMemAccLat$", "mean", "ticks"),
    # gem5 names IDE DMA from the memory's side: the disk "reads" memory when it writes
    # a sector, and "writes" memory when it reads one. Summed over the root and swap disks.
    ("disk_read_bytes", r"\.IdeDisk\.dmaWriteBytes$", "sum", "B"),
    ("disk_write_bytes", r"\.IdeDisk\.dmaReadBytes$", "sum", "B"),
]


def vmstat_rows(events: list[dict]) -> list[dict]:
    counters = tuple(c for _, names, _ in VMSTAT for c in names)
    rows = []
    marks = [e for e in events if e.get("event") in ("phase", "phases_done")]
    for start, end in zip(marks, marks[1:]):
        if start.get("event") == "phase":
            rows.append({"source": "vmstat", "phase": start["name"], "metric": "phase_s",
                         "value": end["t"] - start["t"], "unit": "s", "better": "lower"})
    for phase, delta in phase_vmstat_deltas(events, counters).items():
        for name, names, unit in VMSTAT:
            rows.append({"source": "vmstat", "phase": phase, "metric": name,
                         "value": float(sum(delta[c] for c in names)), "unit": unit,
                         "better": "lower"})
        scanned = delta["pgscan_kswapd"] + delta["pgscan_direct"]
        if scanned:
            rows.append({"source": "vmstat", "phase": phase, "metric": "reclaim_efficiency",
                         "value": (delta["pgsteal_kswapd"] + delta["pgsteal_direct"]) / scanned,
                         "unit": "ratio", "better": "higher"})
    return rows


def gem5_rows(run_dir: Path, phases: list[str]) -> list[dict]:
    stats = run_dir / "stats.txt"
    if not stats.is_file():
        return []
    blocks = parse_stats(stats)
    if len(blocks) != len(phases):
        raise StudyError(f"{stats}: {len(blocks)} stats blocks for {len(phases)} phases "
                         f"({', '.join(phases)}); a run's stats.txt has one block per phase")
    rows = []
    for phase, block in zip(phases, blocks):
        values = block_values(block)
        found = {}
        for name, pattern, combine, unit in GEM5:
            matches = [v for k, v in values.items() if re.search(pattern, k)]
            if matches:
                found[name] = sum(matches) if combine == "sum" else sum(matches) / len(matches)
                rows.append({"source": "gem5", "phase": phase, "metric": name,
                             "value": found[name], "unit": unit, "better": "lower"})
        if found.get("cycles"):
            rows.append({"source": "gem5", "phase": phase, "metric": "ipc",
                         "value": found["instructions"] / found["cycles"], "unit": "ratio",
                         "better": "higher"})
    return rows


def run_rows(run: PublishedRun) -> list[dict]:
    run_dir, record = run.directory, run.record
    base = {"run_id": record["run_id"], "study": record["study"], "artefacts": run.artefacts_key,
            "setup": run.setup_key, "cell": run.cell_key,
            "experiment": record.get("experiment") or record["workload_name"],
            "backend": record["backend"],
            "system": record["system_name"], "policy": record["policy_name"],
            "workload": record["workload_name"], "repetition": run.identity["repetition"],
            "arguments": json.dumps(run.identity["workload"]["arguments"], sort_keys=True),
            "status": record["status"]}
    if record["status"] != "ok":
        return [{**base, "source": "run", "phase": None, "metric": "failed", "index": None,
                 "value": 1.0, "unit": "", "better": "lower"}]
    events = read_events(run_dir)
    rows = [{"source": "workload", "phase": m.phase, "metric": m.metric, "index": m.index,
             "value": float(m.value), "unit": m.unit, "better": m.better}
            for m in workload_metrics(record["workload_name"], events)]
    rows += vmstat_rows(events)
    try:
        rows += gem5_rows(run_dir, [e["name"] for e in events if e.get("event") == "phase"])
    except StatsError as error:
        raise StudyError(str(error)) from None
    return [{**base, "index": None, **row} for row in rows]


def study_runs(study_path: Path, study: str | None = None) -> list[PublishedRun]:
    """Published runs of a results folder, checked to belong to `study`."""
    if not study_path.is_dir():
        raise StudyError(f"no results folder {study_path}: run the study's sweep first")
    return published_runs(study_path, study)


def current_runs(found: list[PublishedRun], points: set[str] | None = None
                 ) -> tuple[list[PublishedRun], int, int]:
    """Runs of the newest kernel/image/simulator/checkpoint (and record schema) per
    backend and system, among those the study still asks for (`points`, see
    Study.points; all when None); and how many were set aside as superseded (older
    artefacts or schema: not repetitions of the newer) and as outdated (other
    parameters, policy or system than the study file now names)."""
    current = [run for run in found if run.current_schema]
    older_schema = len(found) - len(current)
    if points is not None:
        wanted = [run for run in current if run.point_key in points]
        outdated, current = len(current) - len(wanted), wanted
    else:
        outdated = 0
    newest = {}
    for run in current:
        where = (run.record["backend"], run.record["system_name"])
        stamp = (run.record["started_at"], run.artefacts_key)
        newest[where] = max(newest.get(where, stamp), stamp)
    kept = [run for run in current
            if run.artefacts_key == newest[(run.record["backend"], run.record["system_name"])][1]]
    return kept, older_schema + len(current) - len(kept), outdated


def build_table(study_path: Path, study: str | None = None,
                points: set[str] | None = None) -> pd.DataFrame:
    """The tidy table of a study's current runs (see current_runs); the counts of runs
    set aside are in `table.attrs["superseded"]` and `table.attrs["outdated"]`."""
    return runs_table(*current_runs(study_runs(study_path, study), points))


def runs_table(kept: list[PublishedRun], superseded: int = 0, outdated: int = 0
               ) -> pd.DataFrame:
    """The tidy table of the given runs (current_runs' output), counts in `attrs`."""
    rows = []
    for run in kept:
        rows += run_rows(run)
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.attrs["superseded"] = superseded
    table.attrs["outdated"] = outdated
    return table


def export(table: pd.DataFrame, stem: Path) -> list[Path]:
    """The table as CSV and Parquet beside each other."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, parquet = stem.with_suffix(".csv"), stem.with_suffix(".parquet")
    table.to_csv(csv, index=False)
    table.to_parquet(parquet, index=False)
    return [csv, parquet]
