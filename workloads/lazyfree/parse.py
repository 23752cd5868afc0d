"""lazyfree (seed 002): records per second per allocator and thread count."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        if r["kind"] != "result":
            continue
        phase = r["phase"]
        out += [
            Metric("records_per_s", r["records_per_s"], phase=phase),
            Metric("pglazyfree", r["d_pglazyfree"], phase=phase),
            Metric("pglazyfreed", r["d_pglazyfreed"], phase=phase),
            Metric("pgfault", r["d_pgfault"], phase=phase),
        ]
    return out
