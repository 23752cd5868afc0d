"""make-grep (seed 003): each job's elapsed time and major faults; refaults of the run;
how much of the run the two jobs spent side by side (its regime)."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    seconds = {}
    for r in with_phases(events):
        if r["kind"] in ("make", "grep"):
            seconds[r["kind"]] = (r["seconds"], r["phase"])
            out.append(Metric(f"{r['kind']}_s", r["seconds"], phase=r["phase"]))
            out.append(Metric(f"{r['kind']}_majflt", r["majflt"], phase=r["phase"]))
            if "compile_cpu_s" in r:
                out.append(Metric("compile_cpu_s", r["compile_cpu_s"], phase=r["phase"]))
        elif r["kind"] == "summary":
            out += [
                Metric("run_s", r["seconds"], phase=r["phase"]),
                Metric("pgmajfault", r["d_pgmajfault"], phase=r["phase"]),
                Metric("refault_file", r["d_refault_file"], phase=r["phase"]),
                Metric("pgactivate", r["d_pgactivate"], phase=r["phase"]),
            ]
    if len(seconds) == 2:
        # Both jobs start together, so the shorter one's time is the time they overlap.
        (make, phase), (grep, _) = seconds["make"], seconds["grep"]
        if max(make, grep) > 0:
            out.append(Metric("overlap", min(make, grep) / max(make, grep), phase=phase))
    return out
