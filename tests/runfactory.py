"""run.json records for tests, made by the writer runs.execute uses (record.run_record)."""

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING

from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.results import record as rec

if TYPE_CHECKING:
    import pandas as pd

QEMU_ARTEFACTS = {"kernel": "k1", "image": "i1"}
GEM5_ARTEFACTS = {"kernel": "k1", "image": "i1", "gem5": "g1", "checkpoint": "c1"}


def make_record(study="smoke", workload="smoke", policy="baseline", system="ci-tiny",
                repetition=0, backend="qemu", arguments=None, artefacts=None, status="ok",
                wall_seconds=10.0, started_at="2026-11-23T10:00:00+0000", experiment=None,
                **extra) -> dict:
    """A valid run.json of the current schema; `extra` adds or replaces top-level fields."""
    point = {"system": get_system(system).identity(), "policy": get_policy(policy).identity(),
             "workload": {"name": workload, "arguments": arguments or {}},
             "repetition": repetition, "backend": backend}
    if artefacts is None:
        artefacts = dict(GEM5_ARTEFACTS if backend == "gem5" else QEMU_ARTEFACTS)
    fields = {"study": study, "experiment": experiment or "",
              "artefacts": {k: {"key": v} for k, v in artefacts.items()},
              "status": status, "reason": None if status == "ok" else "it failed",
              "wall_seconds": wall_seconds, "started_at": started_at, "host": {}}
    return rec.run_record(rec.run_identity(point, artefacts), **{**fields, **extra})


# What run_record makes of the identity; the rest of a record is handed to it again.
DERIVED = {"schema", "run_id", "identity", "label", "backend", "system_name", "policy_name",
           "workload_name"}


def finish(record: dict) -> dict:
    """The record again from its identity (schema, run id, label, names), as
    record.run_record writes them."""
    fields = {k: v for k, v in record.items() if k not in DERIVED}
    return rec.run_record(record["identity"], **fields)


def changed(record: dict, path: tuple, value) -> dict:
    """A copy of `record` whose identity has `value` at `path` (keys), with its new run id."""
    out = copy.deepcopy(record)
    where = out["identity"]
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return finish(out)


def write_run(study_dir: Path, record: dict, name: str | None = None,
              read_seconds: float = 1.0, events: list[dict] | None = None) -> Path:
    """A published run directory: `events`, or a smoke workload that read for
    `read_seconds`."""
    directory = study_dir / (name or record["run_id"])
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    events = events or [{"event": "phase", "name": "read", "t": 0.0, "vmstat": {}},
                        {"event": "record", "kind": "read", "seconds": read_seconds},
                        {"event": "phases_done", "name": "", "t": read_seconds, "vmstat": {}}]
    (directory / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return directory


def ebizzy_table(system: str, values: dict[str, list[float]], run_prefix: str = "") -> "pd.DataFrame":
    """The tidy table's rows of seed 002's claim (ebizzy's records/s in phase arena-t1),
    one per policy and repetition: `values` is policy -> records/s by repetition."""
    import pandas as pd

    rows = []
    for policy, measured in values.items():
        for repetition, value in enumerate(measured):
            rows.append({"run_id": f"{run_prefix}{policy}-r{repetition}", "experiment": "ebizzy",
                         "setup": "s", "backend": "gem5", "system": system,
                         "workload": "lazyfree", "policy": policy, "repetition": repetition,
                         "status": "ok", "source": "workload", "phase": "arena-t1",
                         "metric": "records_per_s", "index": None, "value": value,
                         "unit": "records/s", "kind": "rate", "better": "higher",
                         "arguments": "{}"})
    return pd.DataFrame(rows)
