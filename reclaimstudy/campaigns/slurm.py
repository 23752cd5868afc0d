"""Slurm's own commands as the study uses them: sbatch submits, squeue and sacct say what
became of a job. Nothing here schedules; Slurm does.

Array tasks are named as Slurm prints them, ARRAY_TASK (12_3). Where a cluster keeps no
accounting database (plain `sacct` says "accounting storage is disabled"), finished jobs
are read from the job-completion log (`sacct -c`), which knows tasks only by their raw
job ids; the tasks record theirs when they start (cluster.py), so both map back.
"""

import subprocess
from dataclasses import dataclass

from reclaimstudy.errors import StudyError
from reclaimstudy.util import hostdeps

# Slurm's words for a job that ended without completing, and what they mean for a run.
ENDED = {
    "CANCELLED": "cancelled (scancel, or an administrator)",
    "TIMEOUT": "it reached its time limit (--time)",
    "OUT_OF_MEMORY": "it ran out of memory (--mem)",
    "NODE_FAIL": "its node failed",
    "PREEMPTED": "it was preempted",
    "BOOT_FAIL": "its node failed to boot",
    "DEADLINE": "its deadline passed",
    "FAILED": "it exited with an error",
}
QUEUED = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED", "RESV_DEL_HOLD"}
RUNNING = {"RUNNING", "CONFIGURING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING"}
COMPLETED = "COMPLETED"


@dataclass(frozen=True)
class JobState:
    job: str             # 12_3 for an array task, 12 otherwise
    state: str           # Slurm's state word (CANCELLED, not "CANCELLED by 0")
    exit_code: str = ""  # EXIT:SIGNAL
    reason: str = ""     # squeue's reason (why pending, or why it ended)
    raw_id: str = ""     # the task's own job id
    start: str = ""
    end: str = ""

    @property
    def queued(self) -> bool:
        return self.state in QUEUED

    @property
    def running(self) -> bool:
        return self.state in RUNNING

    @property
    def ended_badly(self) -> bool:
        """Ended, and not as COMPLETED: Slurm (or the task) stopped it."""
        return not (self.queued or self.running or self.state == COMPLETED)

    def explain(self) -> str:
        """Slurm's state with what it means, for a run's recorded reason."""
        meaning = ENDED.get(self.state, "")
        code = f", exit code {self.exit_code}" if self.exit_code not in ("", "0:0") else ""
        return f"{self.state}{code}" + (f": {meaning}" if meaning else "")


# The client commands the study calls (packaging/host-tools.txt lists them).
CLIENT_TOOLS = ("sbatch", "squeue", "sacct")


def require_client() -> None:
    for tool in CLIENT_TOOLS:
        hostdeps.require_tool(tool)


def _run(command: list[str]) -> subprocess.CompletedProcess:
    require_client()
    return subprocess.run(command, capture_output=True, text=True)


def _state_word(text: str) -> str:
    return text.split()[0].rstrip("+") if text.strip() else ""


def sbatch(options: list[str], script: str) -> str:
    """Submit `script` (a path); the new job's id."""
    result = _run(["sbatch", "--parsable", *options, script])
    if result.returncode != 0:
        raise StudyError(f"sbatch {' '.join(options)} {script} failed: "
                         f"{result.stderr.strip() or result.stdout.strip()}")
    return result.stdout.strip().split(";")[0]


def parse_squeue(text: str) -> list[JobState]:
    """Lines of `squeue -h -r -t all -o %i|%T|%r|%A|%F`."""
    states = []
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) == 5:
            job, state, reason, raw, _ = fields
            states.append(JobState(job, _state_word(state), reason=reason, raw_id=raw))
    return states


def queue(array_ids: set[str]) -> dict[str, JobState]:
    """What slurmctld still knows of these jobs (pending, running, or recently ended),
    by job name (12_3): one squeue for all of them, filtered here (squeue -j fails as a
    whole when one of the ids has been forgotten)."""
    if not array_ids:
        return {}
    result = _run(["squeue", "-h", "-r", "-t", "all", "-o", "%i|%T|%r|%A|%F"])
    if result.returncode != 0:
        raise StudyError(f"squeue failed: {result.stderr.strip()}")
    found = {}
    for state in parse_squeue(result.stdout):
        array = state.job.split("_")[0]
        if array in array_ids:
            found[state.job] = state
    return found


def parse_sacct(text: str) -> list[JobState]:
    """Lines of `sacct -X -P -n -o JobID,JobIDRaw,State,ExitCode,Start,End`."""
    states = []
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) == 6:
            job, raw, state, code, start, end = fields
            states.append(JobState(job, _state_word(state), code, raw_id=raw, start=start,
                                   end=end))
    return states


def accounting(array_ids: set[str], raw_ids: dict[str, str]) -> dict[str, JobState]:
    """Finished jobs from Slurm's accounting, by job name (12_3): `sacct` where the cluster
    keeps an accounting database, else the job-completion log (`sacct -c`), whose raw ids
    `raw_ids` (raw id -> job name) maps back."""
    if not array_ids:
        return {}
    fields = "JobID,JobIDRaw,State,ExitCode,Start,End"
    result = _run(["sacct", "-X", "-P", "-n", "-j", ",".join(sorted(array_ids)), "-o", fields])
    if result.returncode == 0:
        return {s.job: s for s in parse_sacct(result.stdout)}
    if "accounting storage is disabled" not in (result.stderr + result.stdout):
        raise StudyError(f"sacct failed: {result.stderr.strip()}")
    # The completion log keeps the raw id in both id columns; its array fields are not
    # columns sacct -c knows (it says so on stderr, harmlessly).
    result = _run(["sacct", "-c", "-P", "-n", "-o", "JobID,JobID,State,ExitCode,Start,End"])
    if result.returncode != 0:
        raise StudyError(f"sacct -c (the job-completion log) failed: {result.stderr.strip()}")
    found = {}
    for state in parse_sacct(result.stdout):
        job = raw_ids.get(state.raw_id) or (state.job if state.job in array_ids else None)
        if job:
            found[job] = JobState(job, state.state, state.exit_code, raw_id=state.raw_id,
                                  start=state.start, end=state.end)
    return found


def job_states(array_ids: set[str], raw_ids: dict[str, str]) -> dict[str, JobState]:
    """Every known state of these jobs and their tasks: the queue where slurmctld still
    remembers them, accounting for the rest."""
    states = accounting(array_ids, raw_ids)
    states.update(queue(array_ids))
    return states
