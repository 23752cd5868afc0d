"""Run a whole study: every point, in parallel up to the machine, resumably.

A sweep can be killed at any moment and started again: a run counts as done only
once its directory is published with run.json (rundir.RunDirectory), so completed
runs are skipped, failed ones are redone, and half-written ones (left in the study's
.partial folder) are thrown away.
"""

import json
import os
import shutil
import threading
import time
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from analysis.published import published_dir
from reclaimstudy.backends import get_backend
from reclaimstudy.backends.gem5 import segments as gem5_segments
from reclaimstudy.campaigns import estimate, runs
from reclaimstudy.campaigns import rundir, sweeplog_writer
from reclaimstudy.campaigns.look_gate import LookGate
from reclaimstudy.campaigns.studies import Study
from reclaimstudy.errors import StudyError
from reclaimstudy.results import record
from reclaimstudy.results.console import parse_console_file
from reclaimstudy.util import subprocesses
from reclaimstudy.util.progress import console

# Host memory one simulation takes beyond its guest's memory (measured with a 128 MiB
# guest: gem5 peaked at 796 MiB atomic, 814 timing, 1018 O3; QEMU TCG ~100 MiB above).
OVERHEAD_MIB = {"qemu": 256, "gem5": 1024}
# A gem5 run takes minutes to hours: say what is running this often when nothing finishes.
STATUS_EVERY_S = 120.0
# How a running run is described by its guest's latest protocol event.
PROGRESS = {"job_start": "set-up", "phase": "phase {name}", "phases_done": "finishing"}


# A run the study's sequential rule did not make: its experiment was decided before it.
DECIDED = "not needed"


@dataclass
class SweepResult:
    planned: int = 0
    skipped: int = 0
    done: int = 0
    failed: list = field(default_factory=list)
    # runs a sequential rule found not needed (their experiment decided at a look)
    not_needed: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed


def available_memory_mib() -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


def parallelism(backend: str, memory_mib: int, requested: int | None) -> int:
    """Runs at once: the cores, and no more simulations than fit in free memory."""
    if requested is not None and requested < 1:
        raise StudyError(f"--jobs={requested}: allowed a whole number >= 1")
    cores = os.cpu_count() or 1
    fit = max(1, available_memory_mib() // (memory_mib + OVERHEAD_MIB[backend]))
    return min(requested or cores, fit)


def clean_partials(study_path: Path) -> int:
    """Throw away half-written runs of sweeps that are no longer running."""
    partial = study_path / record.PARTIAL
    removed = 0
    for entry in partial.glob("*") if partial.is_dir() else []:
        if rundir.partial_in_progress(entry.name) is not False:
            continue  # still being written here, or another node's (only it can tell)
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    return removed


def current_phase(console_file: Path) -> str:
    """The guest's last phase mark in a running run's console, or where it is before one.
    A line still being written is unreadable JSON to the console parser, so it is skipped."""
    if console_file.is_file():
        marks = [e for e in parse_console_file(console_file).events if e["event"] in PROGRESS]
        if marks:
            return PROGRESS[marks[-1]["event"]].format(**marks[-1])
    return "starting"


def _status_lines(study_path: Path, console_file: str, running: dict, started: dict,
                  book: estimate.CostBook) -> list[str]:
    lines = []
    for identifier, spec in running.items():
        partial = next(iter((study_path / record.PARTIAL).glob(f"{identifier}-*")), None)
        # A segmented gem5 run's console is in its segments' folders, newest last.
        consoles = sorted((study_path / record.CHECKPOINTS / identifier).glob(
            f"seg-*/{console_file}")) + ([partial / console_file] if partial else [])
        where = next((w for w in map(current_phase, reversed(consoles)) if w != "starting"),
                     "starting")
        # Across resumes: a long run's sweep-local time alone says little of how far it is.
        saved = gem5_segments.progress(study_path / record.CHECKPOINTS / identifier)
        price, basis = book.priced(spec)
        if not price:
            expected = ""
        elif basis == estimate.STUDY:
            expected = f" (runs like it took ~{estimate.duration(price)})"
        elif basis == estimate.BESIDE:
            expected = (f" (no {spec.workload.name} run here yet; {book.beside}'s took "
                        f"~{estimate.duration(price)})")
        else:
            expected = (f" (no {spec.workload.name} run yet; {spec.backend} runs took "
                        f"~{estimate.duration(price)} on average)")
        lines.append(f"  running: {spec.point()}: {where}, "
                     f"{time.monotonic() - started[identifier]:.0f} s"
                     f"{f' ({saved})' if saved else ''}{expected}")
    return lines


def _priced_from(book: estimate.CostBook, todo: list[runs.RunSpec]) -> str:
    """What the estimate rests on: this study's runs, the published runs of the study
    beside for the workloads not run here yet, or only a backend's mean."""
    borrowed = sorted({(spec.backend, spec.workload.name) for spec in todo
                       if book.priced(spec).basis == estimate.BESIDE})
    said = [f"{book.known()} earlier run(s) of this study"] if book.known() else []
    said += [f"{book.workload_runs(backend, workload, own=False)} published {workload} run(s) "
             f"of {book.beside} (none run here yet)" for backend, workload in borrowed]
    return "priced from " + (" and ".join(said) if said else "no run of its workloads")


def _eta(book: estimate.CostBook, pending: dict, run_started: dict, jobs: int) -> str:
    now = time.monotonic()
    waiting = [spec for spec, i in pending.values() if i not in run_started]
    running = [(spec, now - run_started[i]) for spec, i in pending.values() if i in run_started]
    seconds = estimate.remaining_seconds(book, waiting, running, jobs)
    return "?" if seconds is None else f"~{estimate.duration(seconds)}"


@contextmanager
def _stopped_together(pool: ThreadPoolExecutor):
    """On Ctrl-C or SIGTERM (or a bug), drop the queued runs and kill the running
    simulators, so the pool's exit does not wait for them (or start the rest)."""
    subprocesses.allow_new()
    try:
        yield
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        killed = subprocesses.stop_all()
        if killed:
            console.print(f"sweep: stopping; killed {killed} running simulator(s), whose runs "
                          "the next sweep redoes (gem5's from their last checkpoint)")
        pool.shutdown(wait=True)  # quick now: their simulators are dead
        # No thread is left to start one: later runs in this process may.
        subprocesses.allow_new()
        raise


# What a run's artefacts must be byte for byte, given its id: (what, run.json's
# artefacts key, the field with its checksum). Not gem5's binary: its bytes hold its
# compile time, and runs are keyed by what it simulates (Gem5.simulator_key, backends/gem5/backend.py).
BYTES_CHECKED = (("kernel", "kernel", "vmlinux_sha256"), ("image", "image", "root_sha256"))


def _checksum(run_record: dict, key: str, field: str) -> str | None:
    # A run that failed before it ran (Slurm ended its task) names its artefacts' ids only.
    entry = (run_record.get("artefacts") or {}).get(key)
    return entry.get(field) if isinstance(entry, dict) else None


def _checksums(run_records: list[dict], key: str, field: str) -> list[str]:
    """The checksums the runs that record one made `key` with."""
    return [found for found in (_checksum(r, key, field) for r in run_records) if found]


# In a study's folder: the gem5 builds `study repeat` found making published runs again
# value for value (sha256 -> what it repeated), so a sweep on them need not ask for it.
REPEATED_BUILDS = "repeated-builds.json"


def repeated_builds(study_path: Path) -> dict[str, dict]:
    path = study_path / REPEATED_BUILDS
    return json.loads(path.read_text()) if path.is_file() else {}


def record_repeated_build(study_path: Path, sha256: str, run_id: str, values: int) -> None:
    """Note that the gem5 build `sha256` made published run `run_id` again with all its
    `values` the same."""
    found = repeated_builds(study_path)
    found[sha256] = {"run_id": run_id, "values": values,
                     "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    study_path.mkdir(parents=True, exist_ok=True)
    part = study_path / f"{REPEATED_BUILDS}.part"
    part.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    part.replace(study_path / REPEATED_BUILDS)


def check_same_bytes(name: str, identity: dict, prepared, done_records,
                     repeated: dict[str, dict] | None = None) -> None:
    """Refuse artefacts whose bytes differ from those the study's finished runs of the
    same ids were made with: a run id names the inputs, and a kernel or image built
    from them elsewhere must be the same bytes for new runs to pair with old ones.
    `repeated`: the gem5 builds checked by `study repeat` (repeated_builds)."""
    same_ids = [r for r in done_records if (r.get("identity") or {}).get("artefacts") == identity]
    for label, key, checksum in BYTES_CHECKED:
        built = (prepared.record.get(key) or {}).get(checksum)
        used = set(_checksums(same_ids, key, checksum))
        if built and used and used != {built}:
            raise StudyError(
                f"{name}: this machine's {label} ({checksum} {built[:16]}) is not the one "
                f"the study's {len(same_ids)} finished run(s) with the same ids were made on "
                f"({', '.join(sorted(u[:16] for u in used))}): runs made here would not "
                f"repeat or pair with theirs. Its inputs are the same, so its build "
                f"is not reproducible here (reclaimstudy/artefacts/reproducible.py), or the Debian "
                f"packages it is made from changed (compare the runs' host.debian_packages, and "
                f"artefacts.image's rootfs_packages and sysroot_packages)")
    # gem5 is never the same bytes twice (it embeds its build time), so a rebuild keeps
    # the run ids (simulator_key) and is not refused: it is told to check it simulates alike.
    built = (prepared.record.get("gem5") or {}).get("sha256")
    made = _checksums(same_ids, "gem5", "sha256")
    used = set(made)
    if not (built and used and used != {built}):
        return
    other = (f"{name}: this gem5 (sha256 {built[:16]}) is another build than the one the "
             f"study's {len(made)} finished run(s) with the same ids were made with "
             f"({', '.join(sorted(u[:16] for u in used))})")
    checked = (repeated or {}).get(built)
    if checked:
        console.print(
            f"{other}, and it made published run {checked['run_id']} again with all "
            f"{checked['values']} values the same (`study repeat`, {checked['at']}): its runs "
            f"pair with theirs.", highlight=False)
    else:
        console.print(
            f"{other}: the same source, patches and compiler, so it should simulate alike. "
            f"Check that it does before its runs are paired with theirs: `./study repeat "
            f"STUDY --only RUN --scratch DIR` makes a published run again and compares every "
            f"value.", highlight=False)


class SystemPreparer:
    """Each system's kernel, image and boot checkpoint, built (or reused) once, when its
    first run starts: a system whose runs are all done builds nothing, and one system's
    runs go on while the next one boots. A failed preparation fails that system's later
    runs at once, with the same reason, instead of booting again for each."""

    def __init__(self, backend, identities: dict, done_records: list[dict] | tuple = (),
                 repeated: dict[str, dict] | None = None):
        self.backend, self.identities = backend, identities
        self.done_records = list(done_records)
        self.repeated = repeated or {}
        self.locks = {name: threading.Lock() for name in identities}
        self.done: dict = {}  # system name -> Prepared or the StudyError it raised

    def prepared(self, spec):
        name = spec.system.name
        with self.locks[name]:
            if name not in self.done:
                try:
                    prepared = self.backend.prepare(spec)
                    if prepared.identity != self.identities[name]:
                        raise StudyError(
                            f"{name}: its kernel, image or gem5 changed while the sweep ran "
                            f"(run ids were {self.identities[name]}, the built artefacts are "
                            f"{prepared.identity}); start the sweep again")
                    check_same_bytes(name, self.identities[name], prepared,
                                     self.done_records, self.repeated)
                    self.done[name] = prepared
                except StudyError as error:
                    self.done[name] = error
        if isinstance(self.done[name], StudyError):
            raise self.done[name]
        return self.done[name]


def run_sweep(study: Study, backend_name: str, results: Path, jobs: int | None = None,
              timeout_s: float | None = None,
              status_every_s: float = STATUS_EVERY_S) -> SweepResult:
    backend = get_backend(backend_name)
    plan = study.runs(backend_name)
    study_path = runs.study_dir(study.name, results)
    runs.require_results_writable(study_path)
    removed = clean_partials(study_path)
    if removed:
        console.print(f"sweep: cleared {removed} half-written run folder(s) of an interrupted "
                      "sweep (a gem5 run saved in segments resumes from its last one)")

    # Run ids come from the inputs alone; a system's kernel, image and boot checkpoint
    # are built when its first pending run starts (SystemPreparer).
    identities = {}
    for _, spec in plan:
        if spec.system.name not in identities:
            identities[spec.system.name] = backend.identity(spec)
    todo, result, published = [], SweepResult(planned=len(plan)), []
    # A kept experiment's runs stand on the older instrument they ran on.
    kept = record.kept_points(study_path, study)
    for _, spec in plan:
        identifier = runs.run_id(spec, identities[spec.system.name])
        done = record.read_run(study_path / identifier)
        if done and done.current_schema:
            published.append(done.record)
        if done and done.ok or (spec.experiment, record.point_key(spec.identity())) in kept:
            result.skipped += 1
        else:
            todo.append(spec)
    memory = max((spec.system.memory_mib for spec in todo), default=0)
    jobs = parallelism(backend_name, memory, jobs)
    book = estimate.cost_book(study_path, list(identities.values()), beside=(
        (study.beside, published_dir(study.beside, results)) if study.beside else None))
    ahead = estimate.remaining_seconds(book, todo, [], jobs) if todo else 0.0
    console.print(f"sweep {study.name} on {backend_name}: {len(plan)} runs, {result.skipped} "
                  f"already done, {len(todo)} to run, {jobs} at a time" +
                  (f"; about {estimate.duration(ahead)}, {_priced_from(book, todo)}"
                   if ahead else ""))
    if backend_name == "qemu":
        console.print("sweep: QEMU runs check function, not timing; the gem5 backend (GEM5=...) "
                      "gives the hardware timing")
    sweeplog_writer.recover(study_path, published)  # runs a killed sweep published but never logged
    started = time.monotonic()
    run_started: dict[str, float] = {}  # run id -> when its simulation started
    preparing: dict[str, runs.RunSpec] = {}  # run id -> spec, while its system is being prepared
    sweep = sweeplog_writer.started(study_path, backend=backend_name, jobs=jobs,
                             only=list(study.only or []), planned=len(plan),
                             skipped=result.skipped, to_run=len(todo))
    unfinished = {runs.run_id(spec, identities[spec.system.name]) for spec in todo}
    gate = None
    if study.verdicts.looks:
        ids: dict[tuple[str, str, int], list[str]] = {}
        for _, spec in plan:
            ids.setdefault((spec.experiment, spec.system.name, spec.repetition), []).append(
                runs.run_id(spec, identities[spec.system.name]))
        gate = LookGate(study, study_path, unfinished, ids)
        console.print(f"sweep: sequential looks at {list(study.verdicts.looks)} pairs "
                      f"({study.verdicts.spending} spending): an experiment gets more pairs "
                      "only while a row of it is undecided")
    try:
        preparer = SystemPreparer(backend, identities, published, repeated_builds(study_path))

        def execute(spec, identifier):
            if gate is not None:
                stop = gate.stopped_at(spec.experiment, spec.system.name, spec.repetition)
                if stop is not None:
                    return {"status": DECIDED, "reason": f"{spec.experiment} decided at "
                                                         f"{stop} pairs"}
            preparing[identifier] = spec
            try:
                prepared = preparer.prepared(spec)
            finally:
                preparing.pop(identifier)
            run_started[identifier] = time.monotonic()
            return runs.execute(spec, backend, results, prepared, timeout_s)

        with ThreadPoolExecutor(max_workers=jobs) as pool, _stopped_together(pool):
            pending = {}
            for spec in todo:
                identifier = runs.run_id(spec, identities[spec.system.name])
                pending[pool.submit(execute, spec, identifier)] = (spec, identifier)
            while pending:
                finished, _ = wait(pending, timeout=status_every_s, return_when=FIRST_COMPLETED)
                if not finished:
                    running = {i: s for s, i in pending.values() if i in run_started}
                    console.print(f"[{result.done}/{len(todo)} run, "
                                  f"{time.monotonic() - started:.0f} s] still running:",
                                  highlight=False)
                    for line in _status_lines(study_path, backend.console_file, running,
                                              run_started, book):
                        console.print(line, highlight=False)
                    for spec in list(preparing.values()):
                        console.print(f"  preparing: {spec.point()}: building or reusing "
                                      f"{spec.system.name}'s kernel, image and boot",
                                      highlight=False)
                for future in finished:
                    spec, identifier = pending.pop(future)
                    run_started.pop(identifier, None)
                    unfinished.discard(identifier)
                    try:
                        written = future.result()
                        status, reason = written["status"], written["reason"]
                        if status != DECIDED:
                            book.add_record(written)
                    except StudyError as error:
                        status, reason = "failed", str(error)
                    result.done += 1
                    if status == DECIDED:
                        result.not_needed += 1
                        console.print(f"sweep: {spec.point()} not needed: {reason}",
                                      highlight=False)
                        continue
                    sweeplog_writer.finished(study_path, sweep, identifier, status)
                    if status != "ok":
                        result.failed.append((spec.point(), reason))
                    left = len(todo) - result.done
                    console.print(
                        f"[{result.done}/{len(todo)} run, {len(result.failed)} failed, "
                        f"{left} left, {time.monotonic() - started:.0f} s, "
                        f"{_eta(book, pending, run_started, jobs)} to go] {spec.point()}: "
                        f"{status}" + (f" ({reason})" if reason else ""), highlight=False)
    except BaseException as error:  # KeyboardInterrupt too: the log says how it ended
        raised = {"error": f"{type(error).__name__}: {error}"}
        raise
    else:
        raised = {}
    finally:
        sweeplog_writer.ended(study_path, sweep, done=result.done, failed=len(result.failed),
                       wall_s=round(time.monotonic() - started, 1), **raised)
    for label, reason in result.failed:
        console.print(f"failed: {label}: {reason}", highlight=False)
    return result
