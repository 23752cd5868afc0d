"""hot-stream (seed 000b): the interactive process's major faults and latency per phase."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        phase = r["phase"]
        if r["kind"] == "interactive":
            out.append(Metric("interactive_majflt", r["majflt"], phase=phase))
            if "latency_p95_s" in r:
                out.append(Metric("wake_latency_p95_s", r["latency_p95_s"], phase=phase))
                out.append(Metric("wake_latency_max_s", r["latency_max_s"], phase=phase))
        elif r["kind"] == "phase":
            out.append(Metric("pgmajfault", r["d_pgmajfault"], phase=phase))
            if phase == "stream":
                out.append(Metric("stream_mib_s", r["mib_per_s"],
                                  phase=phase))
                out.append(Metric("stream_s", r["seconds"], phase=phase))
    return out
