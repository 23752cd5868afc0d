"""desktop-launch (seed 000a): total time, cumulative progress, per-step, per-launch and
per-switch latency and faults. Each step is a phase of its own (launch-NN)."""

from statistics import mean

from analysis.records import Metric, with_phases


def metrics(events):
    records = with_phases(events)
    steps = [r for r in records if r["kind"] == "step"]
    switches = [r for r in records if r["kind"] == "switch"]
    out = []
    for r in steps:
        at = {"phase": r["phase"], "index": r["step"]}
        out += [Metric("cumulative_s", r["cumulative_s"], **at),
                Metric("launch_s", r["launch_s"], **at),
                Metric("step_s", r["launch_s"] + r["switch_s"], **at)]
        if "launch_majflt" in r:
            out.append(Metric("launch_majflt", r["launch_majflt"], **at))
    summary = next((r for r in records if r["kind"] == "summary"), None)
    if summary:
        out += [
            Metric("total_s", summary["total_s"]),
            Metric("pgmajfault", summary["d_pgmajfault"]),
            Metric("pswpin", summary["d_pswpin"]),
            Metric("pswpout", summary["d_pswpout"]),
        ]
    if switches:
        ordered = sorted(r["seconds"] for r in switches)
        out += [
            Metric("switch_mean_s", mean(ordered)),
            Metric("switch_p95_s", ordered[int(len(ordered) * 0.95)]),
            Metric("switch_max_s", ordered[-1]),
        ]
        faults = [r["majflt"] for r in switches if "majflt" in r]
        if faults:
            out.append(Metric("switch_majflt_mean", mean(faults)))
    if steps:
        out.append(Metric("launch_mean_s", mean(r["launch_s"] for r in steps)))
    return out
