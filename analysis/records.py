"""Guest events of a run, and each workload's metrics from them (workloads/<name>/parse.py)."""

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import WORKLOADS


@dataclass(frozen=True)
class Metric:
    """One number a workload reports; its unit, kind and better direction are declared in
    the workload's meta.toml [metrics]."""
    metric: str
    value: float
    phase: str | None = None
    index: int | None = None


def read_events(run_dir: Path) -> list[dict]:
    path = run_dir / "events.jsonl"
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as error:
        raise StudyError(f"{path}: cannot read the run's events ({error})") from None


def with_phases(events: list[dict]) -> list[dict]:
    """Records, each with the name of the phase it was printed in (None before the first)."""
    phase = None
    out = []
    for event in events:
        if event.get("event") == "phase":
            phase = event["name"]
        elif event.get("event") == "record":
            out.append({**event, "phase": phase})
    return out


def phase_spans(events: list[dict]) -> list[tuple[dict, dict]]:
    """Each phase's mark with the mark that ends it (the next phase's, or phases_done)."""
    marks = [e for e in events if e.get("event") in ("phase", "phases_done")]
    return [(start, end) for start, end in zip(marks, marks[1:]) if start["event"] == "phase"]


def phase_vmstat_deltas(events: list[dict], counters: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per phase: how much each /proc/vmstat counter moved from its start to the next mark."""
    return {start["name"]: {c: end["vmstat"].get(c, 0) - start["vmstat"].get(c, 0)
                            for c in counters}
            for start, end in phase_spans(events)}


@cache
def _parser(workload: str):
    path = WORKLOADS / workload / "parse.py"
    if not path.is_file():
        raise StudyError(f"workload '{workload}' has no parser ({path})")
    spec = importlib.util.spec_from_file_location(f"workload_parse_{workload.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None  # a .py file that exists
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def workload_metrics(workload: str, events: list[dict]) -> list[Metric]:
    """The workload's own numbers for one run, by its parse.py."""
    return _parser(workload).metrics(events)
