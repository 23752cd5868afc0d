"""One run: a (system, policy, workload + parameters, repetition) point on a backend.

A run's directory is named by a hash of everything that determines it, and holds:
  run.json       the inputs (with hashes), host, wall time, status and failure reason
  job.sh         the job handed to the guest
  console.log    the guest's console
  events.jsonl   every protocol event parsed from the console
  + the backend's own outputs (gem5: stats.txt, config.ini, config.json)
Its identity, run.json and publication belong to reclaimstudy/results/record.py.
"""

import importlib.metadata
import json
import os
import platform
import shlex
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.backends.base import Backend, Prepared
from reclaimstudy.campaigns import rundir
from reclaimstudy.config.policies import Policy
from reclaimstudy.config.systems import System
from reclaimstudy.config.workloads import Workload
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import RESULTS
from reclaimstudy.results import record
from reclaimstudy.results.console import ConsoleResult, parse_console_file
from reclaimstudy.util import hostdeps


@dataclass(frozen=True)
class RunSpec:
    study: str
    system: System
    policy: Policy
    workload: Workload
    arguments: dict
    repetition: int
    backend: str
    experiment: str = ""  # the study's name for this point; a label, not an input
    # gem5: a checkpoint (and a restore) at every phase boundary and every this many
    # simulated seconds; it shapes the numbers (caches restart cold), so it is an input.
    checkpoint_every_s: float | None = None
    # Shell the job runs before the workload (`study run --job-extra`: ad hoc tracing,
    # outside any study); it can change what the guest does, so it is an input.
    job_extra: str = ""

    def __post_init__(self):
        # The system's image leaves such a workload out (artefacts/image.py).
        if self.workload.min_cores > self.system.cpu.cores:
            raise StudyError(f"workload {self.workload.name} needs at least "
                             f"{self.workload.min_cores} cores (its meta.toml's min_cores), but "
                             f"system {self.system.name} has {self.system.cpu.cores}")
        if self.workload.opt_in and self.workload.name not in self.system.opt_in_workloads:
            raise StudyError(f"workload {self.workload.name} is opt-in (its meta.toml's "
                             f"opt_in): only the images of systems that name it in "
                             f"opt_in_workloads hold it, and system {self.system.name} does not")

    def identity(self) -> dict:
        identity = {"system": self.system.identity(), "policy": self.policy.identity(),
                    "workload": {"name": self.workload.name, "arguments": self.arguments},
                    "repetition": self.repetition, "backend": self.backend}
        if self.checkpoints():
            identity["checkpoints"] = self.checkpoints()
        if self.job_extra:
            identity["job_extra"] = self.job_extra
        return identity

    def checkpoints(self) -> dict | None:
        """The run's checkpoint schedule (gem5 only; QEMU runs are never cut)."""
        if self.checkpoint_every_s is None or self.backend != "gem5":
            return None
        return {"every_sim_s": self.checkpoint_every_s, "at_phases": True}

    def label(self) -> str:
        """The run's label in its run.json (workload-based, as its directory name is)."""
        return f"{self.workload.name}/{self.policy.name}/{self.system.name}/r{self.repetition}"

    def point(self) -> str:
        """experiment/policy/system/rN: the name `--only` matches and progress shows (two
        experiments of one workload, such as thrash and thrash-control, differ here)."""
        return (f"{self.experiment or self.workload.name}/{self.policy.name}/"
                f"{self.system.name}/r{self.repetition}")


def run_identity(spec: RunSpec, artefacts: dict) -> dict:
    """The run's identity on the artefacts a backend prepared (Prepared.identity)."""
    return record.run_identity(spec.identity(), artefacts)


def run_id(spec: RunSpec, artefacts: dict) -> str:
    """Readable prefix + hash of the run's identity."""
    return record.identity_run_id(run_identity(spec, artefacts))


def job_text(spec: RunSpec, identifier: str) -> str:
    """The job file the guest's runjob sources: shell assignments, quoted."""
    values = {
        "RUN_ID": identifier,
        "POLICY": spec.policy.name,
        "KNOBS": spec.policy.job_knobs(),
        "LRU_GEN": "y" if spec.policy.lru_gen else "n",
        "WORKLOAD": spec.workload.name,
        "WORKLOAD_ARGS": spec.workload.command_line(spec.arguments),
        "RUN_SEED": record.run_seed(spec.repetition),
    }
    text = "".join(f"{key}={shlex.quote(str(value))}\n" for key, value in values.items())
    if spec.job_extra:
        text += "# --job-extra: sourced with the assignments, before the workload runs\n"
        text += spec.job_extra if spec.job_extra.endswith("\n") else spec.job_extra + "\n"
    return text


def study_dir(study: str, results: Path = RESULTS) -> Path:
    return results / study


def write_events(result: ConsoleResult, path: Path) -> None:
    with open(path, "w") as handle:
        for event in result.events:
            handle.write(json.dumps(event, sort_keys=True) + "\n")


def python_package_versions() -> dict[str, str]:
    """Every Python distribution of the running environment (the lock's, normally)."""
    return dict(sorted((d.metadata["Name"].lower(), d.version)
                       for d in importlib.metadata.distributions()))


def cpuinfo_fields(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, str]:
    """The first processor's block of /proc/cpuinfo (empty when it cannot be read)."""
    fields: dict[str, str] = {}
    try:
        text = cpuinfo.read_text()
    except OSError:
        return fields
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The host processor's name: host seconds of the same run differ between machines
    (a gem5 run took 1.8-2x as long on one VM as on another), so costs need it."""
    return cpuinfo_fields(cpuinfo).get("model name") or platform.processor() or "unknown"


def cpu_signature(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """Vendor, family, model and stepping: a VM may name every EPYC just "AMD EPYC",
    so two processor generations (gem5's speed differs between them) look alike by name."""
    fields = cpuinfo_fields(cpuinfo)
    if "cpu family" not in fields:
        return None
    return (f"{fields.get('vendor_id', '?')} family {fields['cpu family']} "
            f"model {fields.get('model', '?')} stepping {fields.get('stepping', '?')}")


def cpu_mhz(cpuinfo: Path = Path("/proc/cpuinfo")) -> int | None:
    try:
        return round(float(cpuinfo_fields(cpuinfo)["cpu MHz"]))
    except (KeyError, ValueError):
        return None


def host_info() -> dict:
    """Where and with what a run was made; provenance, not part of its identity."""
    info = {"node": platform.node(), "cpus": os.cpu_count(), "cpu_model": cpu_model(),
            "cpu_signature": cpu_signature(), "cpu_mhz": cpu_mhz(),
            "system": platform.platform(),
            "python": platform.python_version(),
            "python_packages": python_package_versions(),
            "debian_packages": hostdeps.debian_package_versions()}
    if os.environ.get("SLURM_ARRAY_JOB_ID"):  # a task of `sweep --on slurm` (cluster.py)
        info["slurm_job"] = f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ['SLURM_ARRAY_TASK_ID']}"
    return info


def execute(spec: RunSpec, backend: Backend, results: Path = RESULTS,
            prepared: Prepared | None = None, timeout_s: float | None = None) -> dict:
    """Run one point on `backend` and publish its directory; return run.json's contents.

    `prepared`: what backend.prepare(spec) returned (prepared here when not given).
    A failed run is published too, with its logs and reason; only StudyError (bad
    input, missing tools) stops before that.
    """
    image = prepared.parts.get("image") if prepared else None
    if image is not None and hasattr(image, "in_cache") and not image.in_cache():
        # Pruned from the cache since a long sweep prepared it: build it again (the
        # same key gives the same image) rather than run on a missing disk.
        prepared = None
    prepared = prepared or backend.prepare(spec)
    with ExitStack() as using:
        image = prepared.parts.get("image")
        if image is not None and hasattr(image, "in_use"):
            # Held while the run needs its disks, so no other process prunes them; one
            # pruned before this took hold is built again (the same key, the same image).
            using.enter_context(image.in_use())
            if not image.in_cache():
                prepared = backend.prepare(spec)
            prepared.parts["image"].mark_used()
        identity = run_identity(spec, prepared.identity)
        identifier = record.identity_run_id(identity)
        directory = rundir.RunDirectory(study_dir(spec.study, results), identifier)
        job = directory.path / "job.sh"
        job.write_text(job_text(spec, identifier))
        started = time.time()
        # Where a run keeps what must outlive its process (gem5's run checkpoints).
        work = study_dir(spec.study, results) / record.CHECKPOINTS / identifier
        outcome = backend.run(spec, prepared, job, directory.path, timeout_s=timeout_s,
                              work=work)
    console_log = directory.path / "console.log"
    if console_log.is_file():
        console = parse_console_file(console_log)
    else:
        console = ConsoleResult()
        console.fail("no console log")
    if outcome.failure:
        # The backend's reason (a time-out, a simulator error) explains a truncated log best.
        console.status, console.reason = "failed", outcome.failure
    elif console.status == "ok":
        problem = backend.check_outputs(directory.path, len(console.phases))
        if problem:
            console.status, console.reason = "failed", problem
    write_events(console, directory.path / "events.jsonl")
    written = record.run_record(
        identity, study=spec.study, experiment=spec.experiment, artefacts=prepared.record,
        backend_info=outcome.info, host=host_info(),
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        wall_seconds=round(time.time() - started, 2), status=console.status,
        reason=console.reason, garbled_lines=len(console.garbled))
    directory.publish(written)
    return written


def require_results_writable(results: Path) -> None:
    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StudyError(f"cannot create the results folder {results}: {error}") from None
