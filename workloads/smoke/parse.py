"""smoke: seconds of each phase's work."""

from analysis.records import Metric, with_phases


def metrics(events):
    return [Metric(f"{r['kind']}_s", r["seconds"], phase=r["phase"])
            for r in with_phases(events) if r["kind"] in ("read", "anon")]
