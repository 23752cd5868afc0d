"""A study on a Slurm cluster: one job prepares its artefacts (kernel, images, gem5 boot
checkpoints), and one job array that depends on it runs the study's pending runs, one
task per run, into the same results folder as a local sweep.

What was submitted is kept beside the runs, in results/STUDY/.slurm/:
  submissions/STAMP.json  the ledger: study, backend, job ids, and which run each array
                          task runs (by run id, known before anything is built:
                          Backend.identity)
  submissions/STAMP.*.sh  the two batch scripts as submitted
  tasks/ARRAY_TASK.json   written by each task as it starts: its raw job id and node
  ended.jsonl             every task Slurm ended without completing, with Slurm's reason
  logs/                   the jobs' output

A run's state comes from its published directory and from Slurm: done, failed, queued,
running, or not run. A task Slurm ended (time limit, out of memory, node failure,
preemption, scancel) before its run was published is published as a failed run with
Slurm's reason, keeping whatever the task had written. Submitting again submits only the
runs that are neither done nor queued nor running.
"""

import json
import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from reclaimstudy.backends import get_backend
from analysis.published import published_dir
from reclaimstudy.campaigns import carry, runs, slurm
from reclaimstudy.campaigns import rundir, sweeplog_writer
from reclaimstudy.campaigns.studies import Study, load_study
from reclaimstudy.campaigns.sweep import OVERHEAD_MIB, check_same_bytes, repeated_builds
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import REPO
from reclaimstudy.results import record
from reclaimstudy.util.progress import console

SLURM_DIR = ".slurm"
STATES = ("done", "failed", "queued", "running", "not run")


@dataclass
class SlurmOptions:
    partition: str | None = None
    account: str | None = None
    time: str | None = None          # per task, Slurm's format (MINUTES, HH:MM:SS, D-HH)
    mem_mib: int | None = None       # per task; default: the guest's memory + the simulator's
    max_running: int | None = None   # array tasks at once
    prepare_time: str | None = None
    prepare_cpus: int = 1
    extra: list[str] = field(default_factory=list)  # further sbatch options, verbatim

    def check(self) -> None:
        for name in ("mem_mib", "max_running", "prepare_cpus"):
            value = getattr(self, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_mib", "").replace("_", "-")
                raise StudyError(f"{flag}={value}: allowed a whole number >= 1")

    def common(self) -> list[str]:
        words = [f"--partition={self.partition}"] if self.partition else []
        words += [f"--account={self.account}"] if self.account else []
        return words + list(self.extra)


@dataclass
class RunState:
    label: str
    run_id: str
    state: str           # one of STATES
    job: str = ""        # the Slurm task of its newest submission (12_3)
    reason: str = ""
    spec: runs.RunSpec | None = None


def slurm_dir(study_path: Path) -> Path:
    return study_path / SLURM_DIR


@dataclass(frozen=True)
class PlannedRun:
    spec: runs.RunSpec
    run_id: str
    artefacts: dict  # Backend.identity(spec): what the run id hashes besides the point


def planned(study: Study, backend_name: str) -> list[PlannedRun]:
    """Every run of the study with its run id, from the inputs alone."""
    backend = get_backend(backend_name)
    artefacts: dict[str, dict] = {}
    out = []
    for _, spec in study.runs(backend_name):
        if spec.system.name not in artefacts:
            artefacts[spec.system.name] = backend.identity(spec)
        keys = artefacts[spec.system.name]
        out.append(PlannedRun(spec, runs.run_id(spec, keys), keys))
    return out


def submissions(study_path: Path) -> list[dict]:
    """The study's submissions, oldest first."""
    folder = slurm_dir(study_path) / "submissions"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def newest_tasks(ledgers: list[dict]) -> dict[str, str]:
    """Run id -> the array task of the newest submission that holds it (12_3)."""
    tasks = {}
    for ledger in ledgers:
        if not ledger.get("array_job"):
            continue  # submission failed before its array was accepted
        for index, entry in enumerate(ledger["runs"]):
            tasks[entry["run_id"]] = f"{ledger['array_job']}_{index}"
    return tasks


def started_tasks(study_path: Path) -> dict[str, dict]:
    """What each task wrote when it started, by its name (12_3)."""
    folder = slurm_dir(study_path) / "tasks"
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def classify(published: record.PublishedRun | None, job: str, job_state: slurm.JobState | None,
             prepare_state: slurm.JobState | None) -> tuple[str, str]:
    """A run's state and reason from its published directory and its newest task (job,
    12_3; "" when never submitted) with Slurm's states of that task and of the prepare
    job it waited for.

    A published run counts unless a newer task is queued or running (it is being redone)
    or ended badly without publishing (Slurm's reason then explains the run's end)."""
    prepare_failed = prepare_state is not None and prepare_state.ended_badly
    if job_state is not None and (job_state.queued or job_state.running) and not prepare_failed:
        if job_state.running:
            return "running", ""
        return "queued", "" if job_state.reason in ("", "None") else job_state.reason
    if published is not None:
        from_this_task = published.record.get("host", {}).get("slurm_job") == job
        if published.ok or from_this_task or job_state is None or not job_state.ended_badly \
                or prepare_failed:
            return ("done", "") if published.ok else ("failed", published.record["reason"] or "")
    if prepare_failed:
        assert prepare_state is not None
        return "not run", (f"its prepare job {prepare_state.job} ended "
                              f"{prepare_state.explain()}; see .slurm/logs/prepare-"
                              f"{prepare_state.job}.out")
    if job_state is not None and job_state.ended_badly:
        return "failed", (f"Slurm ended task {job}: {job_state.explain()}; see "
                          f".slurm/logs/{job}.out")
    return "not run", ""


def record_ended(study_path: Path, run: PlannedRun, job: str, job_state: slurm.JobState,
                 started: dict | None, reason: str) -> None:
    """Publish a run Slurm ended as failed, with Slurm's reason and whatever the task had
    written (its partial directory), and log the end in ended.jsonl for good."""
    spec, run_id = run.spec, run.run_id
    identity = runs.run_identity(spec, run.artefacts)
    written = record.run_record(
        identity, study=spec.study, experiment=spec.experiment,
        artefacts=identity["artefacts"],
        host={"slurm_job": job, "node": (started or {}).get("node", "")},
        started_at=job_state.start or (started or {}).get("started_at", ""),
        wall_seconds=_seconds_between(job_state.start, job_state.end),
        status="failed", reason=reason,
        slurm={"job": job, "state": job_state.state, "exit_code": job_state.exit_code,
               "raw_id": job_state.raw_id or (started or {}).get("raw_id", "")})
    rundir.publish_leftover(study_path, run_id, written)
    with open(slurm_dir(study_path) / "ended.jsonl", "a") as log:
        log.write(json.dumps({"run_id": run_id, "label": spec.label(), "job": job,
                              "state": job_state.state, "exit_code": job_state.exit_code,
                              "reason": reason, "recorded_at": _now()}) + "\n")


def _seconds_between(start: str, end: str) -> float:
    try:
        return max(0.0, time.mktime(time.strptime(end, "%Y-%m-%dT%H:%M:%S"))
                   - time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return 0.0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def run_states(study: Study, backend_name: str, results: Path) -> list[RunState]:
    """Every run of the study and its state; records runs Slurm ended as failed."""
    study_path = runs.study_dir(study.name, results)
    plan = planned(study, backend_name)
    published = {run.directory.name: run for run in record.published_runs(study_path, study.name)}
    ledgers = submissions(study_path)
    tasks = newest_tasks(ledgers)
    started = started_tasks(study_path)
    arrays = {t.split("_")[0] for t in tasks.values()}
    prepares = {ledger["array_job"]: ledger.get("prepare_job") for ledger in ledgers
                if ledger.get("array_job")}
    wanted = arrays | {p for p in prepares.values() if p}
    states = slurm.job_states(wanted, {s["raw_id"]: name for name, s in started.items()}) \
        if wanted else {}
    kept = record.kept_points(study_path, study)
    out = []
    for run in plan:
        spec, run_id = run.spec, run.run_id
        job = tasks.get(run_id, "")
        job_state = states.get(job)
        prepare = prepares.get(job.split("_")[0]) if job else None
        state, reason = classify(published.get(run_id), job, job_state,
                                 states.get(prepare) if prepare else None)
        if state == "failed" and reason.startswith("Slurm ended task") and (
                run_id not in published or
                published[run_id].record.get("host", {}).get("slurm_job") != job):
            assert job_state is not None  # Slurm's reason is its state's
            record_ended(study_path, run, job, job_state, started.get(job), reason)
        if state == "not run" and not job and any(
                rundir.partial_in_progress(p.name) for p in rundir.partials_of(study_path, run_id)):
            state = "running"  # a local sweep's run in progress
        if state == "not run" and not job \
                and (spec.experiment, record.point_key(spec.identity())) in kept:
            state, reason = "done", "kept on an older instrument"
        out.append(RunState(spec.point(), run_id, state, job, reason, spec))
    return out


def _script(kind: str, ledger_path: Path) -> str:
    """A batch script that runs one step of the submission with this checkout."""
    keep = {name: os.environ[name] for name in ("GEM5", "RECLAIMSTUDY_CACHE")
            if os.environ.get(name)}
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in keep.items())
    return (f"#!/bin/bash\n# Written by `./study sweep --on slurm`: the {kind} step of "
            f"{ledger_path.name}.\nset -euo pipefail\n{exports}"
            f"exec {shlex.quote(str(REPO / 'study'))} slurm-{kind} "
            f"{shlex.quote(str(ledger_path))}\n")


def submit(study: Study, backend_name: str, results: Path, options: SlurmOptions,
           timeout_s: float | None = None) -> dict | None:
    """Submit the study's pending runs; the ledger written, or None when none is pending."""
    options.check()
    study_path = runs.study_dir(study.name, results.resolve())
    runs.require_results_writable(study_path)
    states = run_states(study, backend_name, results.resolve())
    counts = {s: sum(1 for r in states if r.state == s) for s in STATES}
    pending = [r for r in states if r.state in ("failed", "not run")]
    console.print(f"sweep {study.name} on Slurm ({backend_name}): {len(states)} runs: "
                  + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    if not pending:
        console.print("sweep: nothing to submit")
        return None
    folder = slurm_dir(study_path)
    for sub in ("submissions", "tasks", "logs"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
    ledger_path = folder / "submissions" / f"{stamp}.json"
    ledger = {"study": study.name, "study_file": str(study.path.resolve()),
              "backend": backend_name, "results": str(results.resolve()),
              "timeout_s": timeout_s, "submitted_at": _now(), "prepare_job": None,
              "array_job": None, "options": options.__dict__,
              "runs": [{"run_id": r.run_id, "label": r.label} for r in pending]}
    ledger_path.write_text(json.dumps(ledger, indent=1) + "\n")
    scripts = {}
    for kind in ("prepare", "task"):
        scripts[kind] = folder / "submissions" / f"{stamp}.{kind}.sh"
        scripts[kind].write_text(_script(kind, ledger_path))
        scripts[kind].chmod(0o755)
    logs = folder / "logs"
    prepare_job = slurm.sbatch(
        [*options.common(), f"--job-name=reclaim-prepare-{study.name}", f"--chdir={REPO}",
         f"--output={logs}/prepare-%j.out", f"--cpus-per-task={options.prepare_cpus}",
         "--ntasks=1", *([f"--time={options.prepare_time}"] if options.prepare_time else [])],
        str(scripts["prepare"]))
    memory = options.mem_mib or max(r.spec.system.memory_mib for r in pending) \
        + OVERHEAD_MIB[backend_name]
    cap = f"%{options.max_running}" if options.max_running else ""
    ledger["prepare_job"] = prepare_job
    ledger_path.write_text(json.dumps(ledger, indent=1) + "\n")
    array_job = slurm.sbatch(
        [*options.common(), f"--job-name=reclaim-{study.name}", f"--chdir={REPO}",
         f"--array=0-{len(pending) - 1}{cap}", f"--dependency=afterok:{prepare_job}",
         "--kill-on-invalid-dep=yes", f"--output={logs}/%A_%a.out", "--ntasks=1",
         "--cpus-per-task=1", f"--mem={memory}M",
         *([f"--time={options.time}"] if options.time else [])],
        str(scripts["task"]))
    ledger["array_job"] = array_job
    ledger_path.write_text(json.dumps(ledger, indent=1) + "\n")
    sweeplog_writer.submitted(study_path, backend=backend_name, runs=len(pending),
                       prepare_job=prepare_job, array_job=array_job)
    console.print(f"sweep: submitted prepare job {prepare_job} and array {array_job} of "
                  f"{len(pending)} run(s){f', at most {options.max_running} at once' if cap else ''}"
                  f"; `./study status {study.name}` shows them; logs in {logs}")
    return ledger


def _ledger(path: str) -> tuple[dict, Study]:
    ledger = json.loads(Path(path).read_text())
    return ledger, load_study(ledger["study_file"])


def _check_unchanged(backend, spec: runs.RunSpec, prepared, finished: list[dict],
                     run_id: str | None = None, repeated: dict | None = None) -> None:
    """The artefacts a node prepared still match the submitted run ids, and are the same
    bytes as those the study's finished runs of those ids were made with (a node may
    build its own: another machine, another cache)."""
    if prepared.identity != backend.identity(spec) or (
            run_id and runs.run_id(spec, prepared.identity) != run_id):
        raise StudyError(f"{spec.point()}: its inputs changed since the study was submitted "
                         f"(the kernel, image, workloads or gem5 differ); submit it again")
    check_same_bytes(spec.system.name, prepared.identity, prepared, finished, repeated)


def _finished_records(study_path: Path, plan: list[PlannedRun]) -> list[dict]:
    """run.json of every finished run of the plan (any status: each names its artefacts)."""
    done = (record.read_run(study_path / run.run_id) for run in plan)
    return [d.record for d in done if d and d.current_schema]


def prepare_step(ledger_path: str) -> int:
    """The prepare job: build (or reuse) every system's artefacts the ledger's runs need."""
    ledger, study = _ledger(ledger_path)
    backend = get_backend(ledger["backend"])
    wanted = {entry["run_id"] for entry in ledger["runs"]}
    plan = planned(study, ledger["backend"])
    study_path = runs.study_dir(study.name, Path(ledger["results"]))
    finished = _finished_records(study_path, plan)
    repeated = repeated_builds(study_path)
    done_systems = set()
    for run in plan:
        if run.run_id in wanted and run.spec.system.name not in done_systems:
            console.print(f"prepare: {run.spec.system.name} on {ledger['backend']}")
            _check_unchanged(backend, run.spec, backend.prepare(run.spec), finished,
                             repeated=repeated)
            done_systems.add(run.spec.system.name)
    missing = wanted - {run.run_id for run in plan}
    if missing:
        raise StudyError(f"{len(missing)} submitted run(s) are no longer in the study's plan "
                         f"(its inputs changed since submission); submit it again")
    return 0


def task_step(ledger_path: str) -> int:
    """One array task: the run at SLURM_ARRAY_TASK_ID of the ledger."""
    ledger, study = _ledger(ledger_path)
    index = int(os.environ["SLURM_ARRAY_TASK_ID"])
    job = f"{os.environ['SLURM_ARRAY_JOB_ID']}_{index}"
    entry = ledger["runs"][index]
    results = Path(ledger["results"])
    study_path = runs.study_dir(study.name, results)
    (slurm_dir(study_path) / "tasks" / f"{job}.json").write_text(json.dumps(
        {"run_id": entry["run_id"], "raw_id": os.environ.get("SLURM_JOB_ID", ""),
         "node": os.uname().nodename, "started_at": _now()}) + "\n")
    plan = planned(study, ledger["backend"])
    spec = next((run.spec for run in plan if run.run_id == entry["run_id"]), None)
    if spec is None:
        raise StudyError(f"run {entry['label']} ({entry['run_id']}) is no longer in the "
                         f"study's plan (its inputs changed since submission); submit again")
    backend = get_backend(ledger["backend"])
    prepared = backend.prepare(spec)
    same_ids = [run for run in plan if run.artefacts == prepared.identity]  # the rest cannot count
    _check_unchanged(backend, spec, prepared, _finished_records(study_path, same_ids),
                     entry["run_id"], repeated_builds(study_path))
    rundir.discard_partials(study_path, entry["run_id"])  # an earlier attempt's
    written = runs.execute(spec, backend, results, prepared, ledger.get("timeout_s"))
    console.print(f"{spec.point()}: {written['status']}"
                  + (f" ({written['reason']})" if written["reason"] else ""))
    return 0 if written["status"] == "ok" else 1


def by_experiment(states: list[RunState]) -> list[dict]:
    """Per experiment (and system): runs in each state, and the repetitions whose every
    policy is done, the pairs a verdict rests on."""
    groups: dict[tuple, list[RunState]] = {}
    for row in states:
        key = (row.spec.experiment or row.spec.workload.name, row.spec.system.name)
        groups.setdefault(key, []).append(row)
    out = []
    for (experiment, system), rows in groups.items():
        repetitions: dict[int, list[bool]] = {}
        for row in rows:
            repetitions.setdefault(row.spec.repetition, []).append(row.state == "done")
        out.append({"experiment": experiment, "system": system, "runs": len(rows),
                    **{state: sum(1 for r in rows if r.state == state) for state in STATES},
                    "paired": sum(1 for done in repetitions.values() if all(done)),
                    "repetitions": len(repetitions)})
    return out


def print_status(study: Study, backend_name: str, results: Path) -> list[RunState]:
    from rich.table import Table

    states = run_states(study, backend_name, results)
    table = Table(title=f"{study.name} ({backend_name})", title_justify="left")
    for column in ("run", "state", "Slurm task", "reason"):
        table.add_column(column, overflow="fold")
    for row in states:
        style = {"done": "green", "failed": "red", "running": "cyan"}.get(row.state, "")
        table.add_row(row.label, f"[{style}]{row.state}[/]" if style else row.state,
                      row.job, row.reason)
    console.print(table)
    summary = Table(title="per experiment", title_justify="left")
    for column in ("experiment", "system", *STATES, "repetitions, all policies done"):
        summary.add_column(column, overflow="fold")
    for counts in by_experiment(states):
        summary.add_row(counts["experiment"], counts["system"], *(str(counts[s]) for s in STATES),
                        f"{counts['paired']} of {counts['repetitions']}")
    console.print(summary)
    counts = {s: sum(1 for r in states if r.state == s) for s in STATES}
    console.print(f"{study.name}: {len(states)} runs: "
                  + ", ".join(f"{n} {s}" for s, n in counts.items() if n), highlight=False)
    for line in outside_plan(study, backend_name, results, {row.run_id for row in states}):
        console.print(line, highlight=False)
    here = carry.only_here(study, runs.study_dir(study.name, results),
                           published_dir(study.name, results))
    if here:
        console.print(f"{len(here)} finished run(s) live only on this machine, neither "
                      f"published nor carried: `./study carry {study.name}` (or publish) and "
                      f"commit results/published/{study.name}/ to keep them", highlight=False)
    return states


def outside_plan(study: Study, backend_name: str, results: Path, planned_ids: set[str]) -> list[str]:
    """What else the study's folder holds: runs this plan does not name, per backend, and
    why a reader may not see them (another backend, or other inputs)."""
    study_path = runs.study_dir(study.name, results)
    others: dict[str, int] = {}
    for run in record.published_runs(study_path, study.name):
        if run.record.get("run_id") not in planned_ids:
            backend = run.record.get("backend") or "unknown-backend"
            others[backend] = others.get(backend, 0) + 1
    lines = []
    for backend, count in sorted(others.items()):
        why = ("made from other inputs than this plan's (another kernel, image, simulator "
               "build or run parameters)") if backend == backend_name else \
            (f"not shown: this is the {backend_name} plan (`--backend {backend}`"
             + (", with GEM5 set to the build that made them)" if backend == "gem5" else ")"))
        lines.append(f"{study_path} also holds {count} {backend} run(s) {why}")
    return lines

