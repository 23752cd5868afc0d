"""One run: a (system, policy, workload + parameters, repetition) point on a backend.

A run's directory is named by a hash of everything that determines it, and holds:
  run.json       the inputs (with hashes), host, wall time, status and failure reason
  job.sh         the job handed to the guest
  console.log    the guest's console
  events.jsonl   every protocol event parsed from the console
  + the backend's own outputs (gem5: stats.txt, config.ini, config.json)
It is assembled in a hidden partial directory and renamed into place only when
run.json is written, so an interrupted run can never look complete.
"""

import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy import hostdeps
from reclaimstudy.console import ConsoleResult, parse_console_file
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256
from reclaimstudy.paths import RESULTS
from reclaimstudy.policies import Policy
from reclaimstudy.systems import System
from reclaimstudy.workloads import Workload

# Bump when the guest protocol or the run layout changes.
RUN_SCHEMA = 1
PARTIAL = ".partial"


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

    def identity(self) -> dict:
        return {"system": self.system.identity(), "policy": self.policy.identity(),
                "workload": {"name": self.workload.name, "arguments": self.arguments},
                "repetition": self.repetition, "backend": self.backend}

    def label(self) -> str:
        return f"{self.workload.name}/{self.policy.name}/{self.system.name}/r{self.repetition}"


def point_key(identity: dict) -> str:
    """What a run measured, whatever ran it: system, policy, workload with its arguments,
    repetition. Equal for a run.json and the spec that made it (RunSpec.identity)."""
    return json_sha256({k: identity[k] for k in ("system", "policy", "workload", "repetition")})


def run_id(spec: RunSpec, artefacts: dict) -> str:
    """Readable prefix + hash of the spec and of the kernel, image and simulator it runs on."""
    digest = json_sha256({"schema": RUN_SCHEMA, "spec": spec.identity(), "artefacts": artefacts})
    return (f"{spec.workload.name}-{spec.policy.name}-{spec.system.name}-r{spec.repetition}-"
            f"{spec.backend}-{digest[:10]}")


def job_text(spec: RunSpec, identifier: str) -> str:
    """The job file the guest's runjob sources: shell assignments, quoted."""
    values = {
        "RUN_ID": identifier,
        "POLICY": spec.policy.name,
        "KNOBS": spec.policy.job_knobs(),
        "LRU_GEN": "y" if spec.policy.lru_gen else "n",
        "WORKLOAD": spec.workload.name,
        "WORKLOAD_ARGS": spec.workload.command_line(spec.arguments),
    }
    return "".join(f"{key}={shlex.quote(str(value))}\n" for key, value in values.items())


def study_dir(study: str, results: Path = RESULTS) -> Path:
    return results / study


def complete_run(directory: Path) -> dict | None:
    """run.json of a finished run (good or failed), or None."""
    path = directory / "run.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


class RunDirectory:
    """Where a run is assembled, then published atomically."""

    def __init__(self, study_path: Path, identifier: str):
        self.final = study_path / identifier
        self.path = study_path / PARTIAL / f"{identifier}-{os.getpid()}"
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True)

    def publish(self, record: dict) -> Path:
        (self.path / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        if self.final.exists():
            shutil.rmtree(self.final)  # a failed earlier attempt being redone
        self.path.rename(self.final)
        return self.final


def write_events(result: ConsoleResult, path: Path) -> None:
    with open(path, "w") as handle:
        for event in result.events:
            handle.write(json.dumps(event, sort_keys=True) + "\n")


def python_package_versions() -> dict[str, str]:
    """Every Python distribution of the running environment (the lock's, normally)."""
    return dict(sorted((d.metadata["Name"].lower(), d.version)
                       for d in importlib.metadata.distributions()))


def host_info() -> dict:
    """Where and with what a run was made; provenance, not part of its identity."""
    return {"node": platform.node(), "cpus": os.cpu_count(), "system": platform.platform(),
            "python": platform.python_version(),
            "python_packages": python_package_versions(),
            "debian_packages": hostdeps.debian_package_versions()}


STATS_BEGIN = "---------- Begin Simulation Statistics ----------"
STATS_END = "---------- End Simulation Statistics   ----------"


def stats_blocks_problem(stats: Path, phases: int) -> str | None:
    """Why a gem5 stats.txt cannot be read phase by phase (one whole block per phase),
    or None. No stats.txt (QEMU) is no problem. An extra block (e.g. gem5 dumped on
    SIGUSR1) or a missing one would shift every number onto the wrong phase."""
    if not stats.is_file():
        return None
    text = stats.read_text(errors="replace")
    begins, ends = text.count(STATS_BEGIN), text.count(STATS_END)
    if begins != ends:
        return f"stats.txt has {begins} blocks begun and {ends} ended: a dump was cut short"
    if begins != phases:
        return (f"stats.txt has {begins} blocks for the guest's {phases} phases: one block "
                f"per phase is expected, so the numbers cannot be attributed")
    return None


def execute(spec: RunSpec, backend, results: Path = RESULTS, artefacts: dict | None = None,
            **options) -> dict:
    """Run one point on `backend` (qemu or gem5 module object) and publish its directory.

    `artefacts` are what backend.prepare(spec) returned (prepared here when not given);
    `options` go to the backend's run() (e.g. timeout_s). Returns run.json's contents.
    A failed run is published too, with its logs and reason; only StudyError (bad
    input, missing tools) stops before that.
    """
    artefacts = artefacts or backend.prepare(spec)
    identifier = run_id(spec, artefacts["identity"])
    directory = RunDirectory(study_dir(spec.study, results), identifier)
    job = directory.path / "job.sh"
    job.write_text(job_text(spec, identifier))
    started = time.time()
    outcome = backend.run(spec, artefacts, job, directory.path, **options)
    console_log = directory.path / "console.log"
    if console_log.is_file():
        console = parse_console_file(console_log)
    else:
        console = ConsoleResult()
        console.fail("no console log")
    if outcome.get("failure"):
        # The backend's reason (a time-out, a simulator error) explains a truncated log best.
        console.status, console.reason = "failed", outcome["failure"]
    elif console.status == "ok":
        problem = stats_blocks_problem(directory.path / "stats.txt", len(console.phases))
        if problem:
            console.status, console.reason = "failed", problem
    write_events(console, directory.path / "events.jsonl")
    record = {
        "schema": RUN_SCHEMA,
        "run_id": identifier,
        "study": spec.study,
        "label": spec.label(),
        "backend": spec.backend,
        "system_name": spec.system.name,
        "policy_name": spec.policy.name,
        "workload_name": spec.workload.name,
        "experiment": spec.experiment or spec.workload.name,
        **spec.identity(),
        "artefacts": artefacts["record"],
        "backend_info": outcome.get("info", {}),
        "host": host_info(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "wall_seconds": round(time.time() - started, 2),
        "status": console.status,
        "reason": console.reason,
        "garbled_lines": len(console.garbled),
    }
    directory.publish(record)
    return record


def require_results_writable(results: Path) -> None:
    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StudyError(f"cannot create the results folder {results}: {error}") from None
