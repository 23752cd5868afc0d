"""desktop-launch (seed 000a): total time, cumulative progress, switch latency, faults."""

from statistics import mean

from analysis.records import Metric, with_phases


def metrics(events):
    records = with_phases(events)
    steps = [r for r in records if r["kind"] == "step"]
    switches = [r["seconds"] for r in records if r["kind"] == "switch"]
    out = [Metric("cumulative_s", r["cumulative_s"], phase="launch", index=r["step"])
           for r in steps]
    out += [Metric("launch_s", r["launch_s"], phase="launch", index=r["step"]) for r in steps]
    summary = next((r for r in records if r["kind"] == "summary"), None)
    if summary:
        out += [
            Metric("total_s", summary["total_s"]),
            Metric("pgmajfault", summary["d_pgmajfault"]),
            Metric("pswpin", summary["d_pswpin"]),
            Metric("pswpout", summary["d_pswpout"]),
        ]
    if switches:
        ordered = sorted(switches)
        out += [
            Metric("switch_mean_s", mean(switches)),
            Metric("switch_p95_s", ordered[int(len(ordered) * 0.95)]),
            Metric("switch_max_s", ordered[-1]),
        ]
    if steps:
        out.append(Metric("launch_mean_s", mean(r["launch_s"] for r in steps)))
    return out
