"""The one record of a run: what identifies it, its run.json, and a study's published runs.

A run's identity is everything that determines its numbers: the point (system profile,
policy, workload and its arguments, repetition), the backend, and the artefacts exactly
as the backend used them (kernel, image, and on gem5 the simulator and the boot
checkpoint), under the record schema. The run id hashes it; run.json stores it as it
was hashed, so every reader groups runs by the same fields:

  point_key      system, policy, workload, repetition: which run of a study file it is
  artefacts_key  schema, backend and artefacts: which guest and simulator it ran on
  setup_key      everything but the policy and the repetition: runs with equal setup
                 keys are comparable
  cell_key       everything but the repetition: runs with equal cell keys are
                 repetitions of one another

A study's folder holds its published runs (a directory each, with its run.json), the
hidden .partial folder where runs are assembled (reclaimstudy/campaigns/rundir.py) and
.checkpoints, a gem5 run's own checkpoints until it completes. This module writes no file:
it puts a run.json together (run_record, the one writer of its fields) and reads them back.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256

# Bump when the guest protocol, the run layout or the identity's fields change: every
# run gets a new id, and runs of an older schema are set aside, never pooled.
RUN_SCHEMA = 2
PARTIAL = ".partial"
CHECKPOINTS = ".checkpoints"  # a gem5 run's own checkpoints, until it completes
POINT_FIELDS = ("system", "policy", "workload", "repetition")


def run_seed(repetition: int) -> int:
    """The seed of a repetition: it decides the guest's perturbation (perturb) and the
    modelled disk's rotational luck. Every policy of a repetition gets the same one, so
    policies are compared on the same luck, pairwise; repetitions get different ones."""
    return 1 + repetition


def run_identity(spec_identity: dict, artefacts: dict) -> dict:
    """`spec_identity`: RunSpec.identity() (the point and the backend); `artefacts`: the
    identity the backend's prepare() returned (kernel, image, ...). The point and the
    backend must be there; every other input the spec's identity holds is kept as it is
    (RunSpec.identity() adds its optional ones only when set, so that older ids stay): a
    second list of them here once dropped --job-extra."""
    point = {k: spec_identity[k] for k in (*POINT_FIELDS, "backend")}
    return {"schema": RUN_SCHEMA, **point, **spec_identity, "artefacts": artefacts}


def run_id(identity: dict, label_parts: tuple[str, ...]) -> str:
    """Readable prefix (workload, policy, system, repetition, backend) + the identity's hash."""
    return "-".join(label_parts) + "-" + json_sha256(identity)[:10]


def label_parts(identity: dict) -> tuple[str, str, str, str, str]:
    """Workload, policy, system, rN and backend: the names a run id and label start with."""
    return (identity["workload"]["name"], identity["policy"]["name"],
            identity["system"]["name"], f"r{identity['repetition']}", identity["backend"])


def identity_run_id(identity: dict) -> str:
    """The run id of a run identity (run_identity): its names, then its hash."""
    return run_id(identity, label_parts(identity))


def point_key(identity: dict) -> str:
    """Which point of a study: equal for a run and the study file's spec that asks for it."""
    return json_sha256({k: identity[k] for k in POINT_FIELDS})


def artefacts_key(identity: dict) -> str:
    """Which guest, simulator and record schema a run ran on, as a short key."""
    return json_sha256({k: identity[k] for k in ("schema", "backend", "artefacts")})[:12]


def _without_repetition(identity: dict) -> dict:
    """The identity less what a repetition varies: its number and the workload's `seed`
    argument, which studies derive from it (Study.runs)."""
    workload = identity["workload"]
    arguments = {k: v for k, v in workload["arguments"].items() if k != "seed"}
    return {**{k: v for k, v in identity.items() if k != "repetition"},
            "workload": {**workload, "arguments": arguments}}


def setup_key(identity: dict) -> str:
    """Everything but the policy and the repetition, as a short key."""
    return json_sha256({k: v for k, v in _without_repetition(identity).items()
                        if k != "policy"})[:12]


def cell_key(identity: dict) -> str:
    """Everything but the repetition, as a short key."""
    return json_sha256(_without_repetition(identity))[:12]


class RunRecord(BaseModel):
    """The fields of run.json that readers rely on; the rest is kept as written."""
    model_config = ConfigDict(extra="allow")

    schema_: int = Field(alias="schema")
    run_id: str
    study: str
    label: str
    backend: str
    experiment: str
    system_name: str
    policy_name: str
    workload_name: str
    identity: dict
    artefacts: dict
    status: str
    reason: str | None
    wall_seconds: float
    started_at: str


def run_record(identity: dict, *, study: str, experiment: str, artefacts: dict,
               status: str, reason: str | None, started_at: str, wall_seconds: float,
               host: dict, backend_info: dict | None = None, garbled_lines: int = 0,
               **extra) -> dict:
    """A run's run.json, the one place its fields are put together: by runs.execute for
    every backend, by the Slurm ledger for a task Slurm ended (campaigns/cluster.py) and
    by the tests (tests/runfactory.py). Its schema, run id, label and names come from
    `identity` (run_identity) alone, so they cannot disagree with it; `artefacts` is what
    the backend recorded of them; `extra` adds fields (a Slurm task's own). It is checked
    against RunRecord, the schema read_run checks it against again."""
    workload, policy, system, repetition, backend = label_parts(identity)
    written = {
        "schema": identity["schema"],
        "run_id": identity_run_id(identity),
        "identity": identity,
        "study": study,
        "label": f"{workload}/{policy}/{system}/{repetition}",
        "backend": backend,
        "system_name": system,
        "policy_name": policy,
        "workload_name": workload,
        "experiment": experiment or workload,
        "artefacts": artefacts,
        "backend_info": backend_info if backend_info is not None else {},
        "host": host,
        "started_at": started_at,
        "wall_seconds": wall_seconds,
        "status": status,
        "reason": reason,
        "garbled_lines": garbled_lines,
        **extra,
    }
    try:
        RunRecord.model_validate(written)
    except ValidationError as error:
        raise StudyError(f"run {written['run_id']}: not a valid run.json "
                         f"({_problems(error)})") from None
    return written


def _problems(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())


@dataclass(frozen=True)
class PublishedRun:
    """A published run directory and its run.json (as a dict)."""
    directory: Path
    record: dict

    @property
    def identity(self) -> dict:
        return self.record["identity"]

    @property
    def ok(self) -> bool:
        return self.record["status"] == "ok"

    @property
    def current_schema(self) -> bool:
        return self.record["schema"] == RUN_SCHEMA

    @property
    def experiment(self) -> str:
        """The experiment it was made for (its workload's name in records that name none)."""
        return self.record.get("experiment") or self.record["workload_name"]

    @property
    def point_key(self) -> str:
        return point_key(self.identity)

    @property
    def artefacts_key(self) -> str:
        return artefacts_key(self.identity)

    @property
    def setup_key(self) -> str:
        return setup_key(self.identity)

    @property
    def cell_key(self) -> str:
        return cell_key(self.identity)


def host_wall_seconds(record: dict) -> float:
    """A run's host wall time over all its attempts: run.json's wall_seconds, except for a
    gem5 run a stopped sweep cut short and a later one resumed, whose wall_seconds is the
    last attempt's alone; its backend_info keeps the sum of its segments' times over every
    attempt (without the run's set-up and parsing, seconds; the segment the stop killed
    is in neither: its work was redone)."""
    info = record.get("backend_info") or {}
    segments = info.get("wall_seconds")
    if (info.get("resumed_at_segment") or 0) > 0 and isinstance(segments, (int, float)):
        return segments
    return record.get("wall_seconds") or 0


def read_run(directory: Path) -> PublishedRun | None:
    """The published run in `directory`, or None when it has no run.json (not published:
    never data). A run.json that is not one is an error naming the file."""
    path = directory / "run.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise StudyError(f"{path}: not a readable run.json ({error}); delete the run's "
                         f"directory and sweep again to redo it") from None
    if not isinstance(record, dict) or record.get("schema") != RUN_SCHEMA:
        found = record.get("schema") if isinstance(record, dict) else None
        # An older schema's runs are real data of an older generation: readers set them aside.
        if isinstance(found, int) and found < RUN_SCHEMA:
            return PublishedRun(directory, record)
        raise StudyError(f"{path}: run.json schema {found!r}; this version reads schema "
                         f"{RUN_SCHEMA} (and sets older ones aside)")
    try:
        RunRecord.model_validate(record)
    except ValidationError as error:
        raise StudyError(f"{path}: not a valid run.json ({_problems(error)})") from None
    return PublishedRun(directory, record)


def published_runs(study_path: Path, study: str | None = None) -> list[PublishedRun]:
    """Every published run of a study's results folder, in name order; checked to belong
    to `study` when given. An absent folder has none."""
    found: list[PublishedRun] = []
    if not study_path.is_dir():
        return found
    for directory in sorted(study_path.iterdir()):
        if directory.name == PARTIAL or not directory.is_dir():
            continue
        run = read_run(directory)
        if run is None:
            continue
        if study and run.record.get("study") != study:
            raise StudyError(f"{directory / 'run.json'}: this run belongs to study "
                             f"'{run.record.get('study')}', not '{study}'; move it to "
                             f"results/{run.record.get('study')}/")
        found.append(run)
    return found


def kept_points(study_path: Path, study) -> set[tuple[str, str]]:
    """(experiment, point key) of a study folder's finished runs of the experiments its
    study file keeps on an older instrument (StudyFile.older_instrument), on whatever
    instrument they ran: runs a sweep neither redoes nor counts as missing."""
    kept = {name for name, _ in study.older_instrument}
    if not kept:
        return set()
    return {(run.experiment, run.point_key) for run in published_runs(study_path, study.name)
            if run.ok and run.experiment in kept}
