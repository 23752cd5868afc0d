"""One tidy table over all runs of a study: run inputs x phase x metric.

Three sources per run: the workload's own metrics (workloads/<name>/parse.py), the
guest's /proc/vmstat between phase marks, and on gem5 the hardware statistics of
each phase's stats.txt block (block i is phase i); and facts of the guest (its memory
and what the repetition's perturbation did, source "guest"). Only published runs
(run.json present) are read; a half-written run never is.
"""

import functools
import json
import re
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from analysis.metrics import (BLOCK_WEIGHTS, CLOCK_KEY, CLOCK_PERIOD, DISK_JUMPS, GEM5,
                              GUEST_MEMORY, IPC, PERTURBATION, PHASE_SECONDS, QUIET,
                              RECLAIM_EFFICIENCY, SWAP_ROTATIONAL, SWAP_SOLID_STATE,
                              TICKS_PER_SECOND, VMSTAT, VMSTAT_LEVELS, VMSTAT_START_LEVELS)
from analysis.records import phase_spans, phase_vmstat_deltas, read_events, workload_metrics
from reclaimstudy.config.metrics import MetricSpec
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.results.gem5_stats import StatsError, select_values
from reclaimstudy.results.gem5_stats import partial_blocks, phase_groups
from reclaimstudy.results.record import PublishedRun, published_runs

# artefacts: which guest and simulator (record.artefacts_key); setup: everything but the
# policy and the repetition (record.setup_key); cell: everything but the repetition
# (record.cell_key), so only repetitions are ever pooled.
COLUMNS = ["run_id", "study", "experiment", "artefacts", "setup", "cell", "backend", "system",
           "policy", "workload", "repetition", "arguments", "status", "source", "phase", "metric",
           "index", "value", "unit", "kind", "better"]
FAILED = MetricSpec("failed", "", "count", "lower", "the run failed")
GEM5_COMPILED = [(spec, re.compile(pattern), combine) for spec, pattern, combine in GEM5]


def row(spec: MetricSpec, source: str, phase: str | None, value: float,
        index: int | None = None) -> dict:
    """One table row of a declared metric."""
    return {"source": source, "phase": phase, "metric": spec.name, "index": index,
            "value": float(value), "unit": spec.unit, "kind": spec.kind, "better": spec.better}


def vmstat_rows(events: list[dict]) -> list[dict]:
    counters = tuple(c for _, names in VMSTAT for c in names)
    rows = []
    for start, end in phase_spans(events):
        rows.append(row(PHASE_SECONDS, "vmstat", start["name"], end["t"] - start["t"]))
        rows += [row(spec, "vmstat", start["name"], end["vmstat"][name])
                 for spec, name in VMSTAT_LEVELS if name in end["vmstat"]]
        rows += [row(spec, "vmstat", start["name"], sum(start["vmstat"][n] for n in names))
                 for spec, names in VMSTAT_START_LEVELS
                 if all(n in start["vmstat"] for n in names)]
    for phase, delta in phase_vmstat_deltas(events, counters).items():
        for spec, names in VMSTAT:
            rows.append(row(spec, "vmstat", phase, sum(delta[c] for c in names)))
        scanned = delta["pgscan_kswapd"] + delta["pgscan_direct"]
        if scanned:
            rows.append(row(RECLAIM_EFFICIENCY, "vmstat", phase,
                            (delta["pgsteal_kswapd"] + delta["pgsteal_direct"]) / scanned))
    return rows


def swap_disk(area: str, disks: list[str]) -> str | None:
    """The disk holding swap area `area` ("/dev/sda2" -> "sda", "/dev/nvme0n1p2" ->
    "nvme0n1", "/dev/zram0" -> "zram0"): the longest disk name it starts with."""
    name = area.removeprefix("/dev/")
    return max((d for d in disks if name.startswith(d)), key=len, default=None)


def swap_class_rows(start: dict) -> list[dict]:
    """What the swap device is to the guest (from runjob's job_start; none for a run
    from before it recorded the disks' classes, or with no swap)."""
    rotational, flags = start.get("rotational"), start.get("swap_flags")
    if not rotational or not flags:
        return []
    disks = [swap_disk(area, list(rotational)) for area in flags]
    if None in disks:
        raise StudyError(f"job_start: a swap area of {sorted(flags)} lies on none of the "
                         f"disks {sorted(rotational)}")
    return [row(SWAP_ROTATIONAL, "guest", None, max(rotational[d] for d in disks)),
            row(SWAP_SOLID_STATE, "guest", None,
                all(f.startswith("SS") for f in flags.values()))]


def guest_rows(events: list[dict]) -> list[dict]:
    """Facts of the guest, not results: its memory, what its swap device is to it, and
    what the repetition's perturbation did (nothing where it did nothing: seed 0, or a
    run from before it)."""
    rows = []
    start = next((e for e in events if e.get("event") == "job_start" and "memtotal_kib" in e),
                 None)
    if start is not None:
        rows.append(row(GUEST_MEMORY, "guest", None, start["memtotal_kib"] / 1024))
        rows += swap_class_rows(start)
    perturbation = next((e for e in events if e.get("kind") == "perturb"), {})
    rows += [row(spec, "guest", None, perturbation[field])
             for field, spec in PERTURBATION.items() if field in perturbation]
    return rows


def join_blocks(blocks: list[dict[str, float]]) -> dict[str, float]:
    """One phase's values from the blocks a segmented run cut it into (BLOCK_WEIGHTS)."""
    if len(blocks) == 1:
        return blocks[0]
    joined = {}
    for key in blocks[0]:
        weight_key = next((re.sub(pattern, weight, key) for pattern, weight in BLOCK_WEIGHTS
                           if re.search(pattern, key)), None)
        values = [block.get(key, 0.0) for block in blocks]
        if weight_key is None:
            joined[key] = sum(values)
            continue
        weights = [block.get(weight_key, 0.0) for block in blocks]
        if weight_key not in blocks[0]:
            raise StudyError(f"joining a phase's stats blocks: {key} needs {weight_key}")
        total = sum(weights)
        joined[key] = sum(v * w for v, w in zip(values, weights) if w) / total if total else 0.0
    return joined


def gem5_rows(run_dir: Path, phases: list[str]) -> list[dict]:
    stats = run_dir / "stats.txt"
    if not stats.is_file():
        return []
    patterns = [pattern for _, pattern, _ in GEM5] + [CLOCK_PERIOD]
    partial = partial_blocks(run_dir)
    if partial:  # what joining its cut blocks weighs ratios by
        patterns += [re.escape(w.lstrip("^.")) for _, w in BLOCK_WEIGHTS]
    raw = select_values(stats, patterns)
    groups = phase_groups(len(raw), partial)
    blocks = [join_blocks([raw[i] for i in group]) for group in groups]
    # per block, then summed: a block's lower bound is tighter than its phase's
    quiet = [[quiet_seconds(gem5_metrics(raw[i])) for i in group] for group in groups]
    if len(blocks) != len(phases):
        raise StudyError(f"{stats}: {len(blocks)} stats blocks for {len(phases)} phases "
                         f"({', '.join(phases)}); a run's stats.txt has one block per phase")
    rows = []
    for phase, values, block_quiet in zip(phases, blocks, quiet):
        found = gem5_metrics(values)
        rows += [row(spec, "gem5", phase, found[spec.name])
                 for spec, _, _ in GEM5_COMPILED if spec.name in found]
        if found.get("cycles") and "instructions" in found:
            rows.append(row(IPC, "gem5", phase, found["instructions"] / found["cycles"]))
        if {"disk_reads", "disk_writes", "disk_sequential"} <= found.keys():
            rows.append(row(DISK_JUMPS, "gem5", phase, found["disk_reads"] + found["disk_writes"]
                            - found["disk_sequential"]))
        if None not in block_quiet:
            rows.append(row(QUIET, "gem5", phase, sum(block_quiet)))  # type: ignore[arg-type]  # no None
    return rows


def quiet_seconds(found: dict[str, float]) -> float | None:
    """QUIET of one stats block's metrics (None without the CPU's idle share or our disk
    model's counters)."""
    if "cpu_busy_share" not in found or "disk_service_ticks" not in found:
        return None
    quiet = found["sim_seconds"] * (1 - found["cpu_busy_share"]) - (
        found["disk_service_ticks"] + found.get("disk_media_ticks", 0.0)) / TICKS_PER_SECOND
    return max(0.0, quiet)


def gem5_metrics(values: dict[str, float]) -> dict[str, float]:
    """The GEM5 metrics of one stats block's (or a phase's joined) values; cycles from
    simTicks over the clock period."""
    found = {}
    for spec, pattern, combine in GEM5_COMPILED:
        matches = [v for k, v in values.items() if pattern.search(k)]
        if matches:
            found[spec.name] = sum(matches) if combine == "sum" else sum(matches) / len(matches)
    period = values.get(CLOCK_KEY)
    if "cycles" in found:
        if period:
            found["cycles"] /= period
        else:  # no core clock named as our boards name it: no cycles, no IPC
            del found["cycles"]
    return found


@functools.cache
def workload_declarations(name: str):
    return get_workload(name)


def run_rows(run: PublishedRun) -> list[dict]:
    run_dir, record = run.directory, run.record
    base = {"run_id": record["run_id"], "study": record["study"], "artefacts": run.artefacts_key,
            "setup": run.setup_key, "cell": run.cell_key,
            "experiment": run.experiment,
            "backend": record["backend"],
            "system": record["system_name"], "policy": record["policy_name"],
            "workload": record["workload_name"], "repetition": run.identity["repetition"],
            "arguments": json.dumps(run.identity["workload"]["arguments"], sort_keys=True),
            "status": record["status"]}
    if record["status"] != "ok":
        return [{**base, **row(FAILED, "run", None, 1.0)}]
    restored = run_dir / "rows.parquet"  # reclaimstudy/campaigns/restore.py: its published rows
    if restored.is_file() and not (run_dir / "events.jsonl").is_file():
        return pd.read_parquet(restored).to_dict("records")
    events = read_events(run_dir)
    workload = workload_declarations(record["workload_name"])
    rows = [row(workload.metric(m.metric), "workload", m.phase, m.value, m.index)
            for m in workload_metrics(record["workload_name"], events)]
    rows += vmstat_rows(events)
    rows += guest_rows(events)
    try:
        rows += gem5_rows(run_dir, [e["name"] for e in events if e.get("event") == "phase"])
    except StatsError as error:
        raise StudyError(str(error)) from None
    return [{**base, **r} for r in rows]


def study_runs(study_path: Path, study: str | None = None) -> list[PublishedRun]:
    """Published runs of a results folder, checked to belong to `study`."""
    if not study_path.is_dir():
        raise StudyError(f"no results folder {study_path}: run the study's sweep first")
    return published_runs(study_path, study)


def current_runs(found: list[PublishedRun], points: set[str] | None = None,
                 older_instrument: Collection[str] = ()
                 ) -> tuple[list[PublishedRun], int, int]:
    """Runs of the newest kernel and simulator per backend, and of the newest image and
    checkpoint (and record schema) per backend and system, among those the study still
    asks for (`points`, see Study.points; all when None); and how many were set aside as
    superseded (older artefacts or schema: not repetitions of the newer) and as outdated
    (other parameters, policy or system than the study file now names). An experiment
    the study keeps on an older instrument (`older_instrument`: the names of
    StudyFile.older_instrument, which says why) is its own generation: the newest kernel,
    simulator, image and checkpoint among its own runs, which neither set aside the
    others' runs nor are set aside by them."""
    current = [run for run in found if run.current_schema]
    older_schema = len(found) - len(current)
    if points is not None:
        wanted = [run for run in current if run.point_key in points]
        outdated, current = len(current) - len(wanted), wanted
    else:
        outdated = 0

    def generation(run: PublishedRun) -> tuple:
        experiment = run.experiment
        return (run.record["backend"], experiment if experiment in older_instrument else None)

    # The kernel and the simulator are the same for every system: once a newer one has
    # run anywhere, the older one's runs are superseded everywhere (a fixed simulator
    # fault must not linger in the systems not yet run again), but for the experiments
    # the study file keeps on an older instrument, and says why.
    current_gen = _of_newest(current, generation, _shared_artefacts)
    kept = _of_newest(current_gen,
                      lambda run: (*generation(run), run.record["system_name"]),
                      lambda run: run.artefacts_key)
    return kept, older_schema + len(current) - len(kept), outdated


def _of_newest(runs: list[PublishedRun], where, what) -> list[PublishedRun]:
    """The runs whose `what` is that of the most recently started run of their `where`."""
    newest: dict = {}
    for run in runs:
        stamp = (run.record["started_at"], what(run))
        newest[where(run)] = max(newest.get(where(run), stamp), stamp)
    return [run for run in runs if what(run) == newest[where(run)][1]]


# Artefacts made for each system (its memory size and disks); the rest are shared.
PER_SYSTEM_ARTEFACTS = {"image", "checkpoint"}


def _shared_artefacts(run: PublishedRun) -> str:
    shared = {k: v for k, v in run.identity["artefacts"].items()
              if k not in PER_SYSTEM_ARTEFACTS}
    build = gem5_build(run)
    if build:
        shared["gem5"] = build
    return json.dumps(shared, sort_keys=True)


def gem5_build(run: PublishedRun) -> str | None:
    """The gem5 build a run ran on (None for QEMU). gem5's key in a run's identity adds
    what only some systems use (a DiskSim or SimpleSSD drive, 0009's atomic flags on more
    than one core); the build is the record's simulator key, one for every system it ran,
    so a four-core run does not set aside the one-core runs of the same gem5, nor they
    it. A record Slurm ended before the run began holds only the identity's keys, and
    falls back to its identity's."""
    recorded = (run.record.get("artefacts") or {}).get("gem5")
    if isinstance(recorded, dict) and recorded.get("simulator"):
        return recorded["simulator"]
    return run.identity["artefacts"].get("gem5")


# Written by reclaimstudy/campaigns/restore.py into the study folder it fills on a new machine: how
# many runs the machines before had set aside. Their runs are not brought back, so without
# it the report of a restored study would say none ever were.
SET_ASIDE_BEFORE = "set-aside-before.json"


def set_aside_before(study_path: Path) -> tuple[int, int]:
    """Superseded and outdated runs set aside on the machines before a restore (0, 0 when
    the folder was never restored)."""
    path = study_path / SET_ASIDE_BEFORE
    if not path.is_file():
        return 0, 0
    counts = json.loads(path.read_text())
    return counts["superseded"], counts["outdated"]


def folder_table(study_path: Path, study: str | None = None, points: set[str] | None = None,
                 found: list[PublishedRun] | None = None,
                 older_instrument: Collection[str] = ()
                 ) -> tuple[list[PublishedRun], pd.DataFrame]:
    """A study folder's current runs (see current_runs; of `found` when its runs were read
    already) and their tidy table, whose `attrs["superseded"]` and `attrs["outdated"]`
    count the runs set aside, here and on the machines before a restore (set_aside_before)."""
    kept, superseded, outdated = folder_runs(study_path, study, points, found, older_instrument)
    return kept, runs_table(kept, superseded, outdated)


def folder_runs(study_path: Path, study: str | None = None, points: set[str] | None = None,
                found: list[PublishedRun] | None = None,
                older_instrument: Collection[str] = ()
                ) -> tuple[list[PublishedRun], int, int]:
    """folder_table's runs without their rows: the current runs, and how many were set
    aside as superseded and as outdated, here and before a restore."""
    if found is None:
        found = study_runs(study_path, study)
    kept, superseded, outdated = current_runs(found, points, older_instrument)
    before = set_aside_before(study_path)
    return kept, superseded + before[0], outdated + before[1]


def study_folder_table(study, study_path: Path, found: list[PublishedRun] | None = None
                       ) -> tuple[list[PublishedRun], pd.DataFrame]:
    """folder_table as the study file asks: the points it names and the experiments it
    carries from an older instrument (reclaimstudy/campaigns/studies.py's Study)."""
    kept, superseded, outdated = study_folder_runs(study, study_path, found)
    return kept, runs_table(kept, superseded, outdated)


def study_folder_runs(study, study_path: Path, found: list[PublishedRun] | None = None
                      ) -> tuple[list[PublishedRun], int, int]:
    """folder_runs as the study file asks (see study_folder_table)."""
    return folder_runs(study_path, study.name, study.points(), found,
                       [name for name, _ in study.older_instrument])


def build_table(study_path: Path, study: str | None = None,
                points: set[str] | None = None) -> pd.DataFrame:
    """The tidy table of a study's current runs (see folder_table)."""
    return folder_table(study_path, study, points)[1]


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


def export_paths(stem: Path) -> list[Path]:
    """Where `export` writes the table: the gzipped CSV, then the Parquet."""
    return [stem.with_name(stem.name + ".csv.gz"), stem.with_suffix(".parquet")]


def export(table: pd.DataFrame, stem: Path) -> list[Path]:
    """The table as gzipped CSV and Parquet beside each other. The CSV is gzipped because
    plain it grew ~45 KiB per run (7 MiB at 160 runs), too large to keep in git; a zero
    mtime keeps the same table the same bytes, so publishing again changes nothing."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, parquet = export_paths(stem)
    export_csv(table, stem)
    table.to_parquet(parquet, index=False)
    return [csv, parquet]


def export_csv(table: pd.DataFrame, stem: Path) -> Path:
    """The gzipped CSV alone: a published study keeps only the Parquet in the repository
    (the CSV is the same table again), and its report writes the CSV for readers."""
    csv = export_paths(stem)[0]
    table.to_csv(csv, index=False, compression={"method": "gzip", "mtime": 0})
    return csv
