"""disk-calib: one number per IO pattern, each what the guest saw."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        kind, phase = r["kind"], r["phase"]
        if kind == "random":
            out.append(Metric("random_4k_latency_s", r["mean_latency_s"], phase=phase))
            out.append(Metric("random_4k_max_latency_s", r["max_latency_s"], phase=phase))
        elif kind == "sequential":
            out.append(Metric("sequential_mib_s", r["mib_per_s"], phase=phase))
        elif kind == "random-write":
            out.append(Metric("random_4k_write_latency_s", r["mean_latency_s"], phase=phase))
        elif kind == "sequential-write":
            out.append(Metric("sequential_write_mib_s", r["mib_per_s"], phase=phase))
        elif kind == "swap-out":
            out.append(Metric("swapped_out_mib", r["swapped_mib"], phase=phase))
            if r["swapped_mib"] > 0:
                out.append(Metric("swap_out_s_per_mib", r["seconds"] / r["swapped_mib"],
                                  phase=phase))
        elif kind == "swap-in":
            out.append(Metric("swapped_in_mib", r["swapped_in_mib"], phase=phase))
            out.append(Metric("swap_in_faults", r["d_pgmajfault"], phase=phase))
            out.append(Metric("swap_in_s_per_page", r["seconds"] / r["pages"], phase=phase))
            if r["d_pgmajfault"] > 0:
                out.append(Metric("swap_in_s_per_fault", r["seconds"] / r["d_pgmajfault"],
                                  phase=phase))
    return out
