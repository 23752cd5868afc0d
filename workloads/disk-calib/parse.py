"""disk-calib: the two numbers that calibrate a disk profile."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        if r["kind"] == "random":
            out.append(Metric("random_4k_latency_s", r["mean_latency_s"], phase=r["phase"]))
            out.append(Metric("random_4k_max_latency_s", r["max_latency_s"], phase=r["phase"]))
        elif r["kind"] == "sequential":
            out.append(Metric("sequential_mib_s", r["mib_per_s"],
                              phase=r["phase"]))
    return out
