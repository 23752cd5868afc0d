"""make-grep-cpu (seed 003 in its regime): each job's elapsed time, major faults and CPU
busy fraction; refaults of the run; how much of the run the two jobs spent side by side
(its regime; only when both ran, --jobs=both)."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    seconds = {}
    for r in with_phases(events):
        kind, phase = r["kind"], r["phase"]
        if kind in ("make", "grep"):
            seconds[kind] = (r["seconds"], phase)
            out.append(Metric(f"{kind}_s", r["seconds"], phase=phase))
            out.append(Metric(f"{kind}_majflt", r["majflt"], phase=phase))
            if r["seconds"] > 0:
                out.append(Metric(f"{kind}_cpu_busy", r["cpu_s"] / r["seconds"], phase=phase))
            if "compile_cpu_s" in r:
                out.append(Metric("compile_cpu_s", r["compile_cpu_s"], phase=phase))
        elif kind == "summary":
            out += [
                Metric("run_s", r["seconds"], phase=phase),
                Metric("pgmajfault", r["d_pgmajfault"], phase=phase),
                Metric("refault_file", r["d_refault_file"], phase=phase),
                Metric("pgactivate", r["d_pgactivate"], phase=phase),
            ]
    if len(seconds) == 2:
        # Both jobs start together, so the shorter one's time is the time they overlap.
        (make, phase), (grep, _) = seconds["make"], seconds["grep"]
        if max(make, grep) > 0:
            out.append(Metric("overlap", min(make, grep) / max(make, grep), phase=phase))
    return out
