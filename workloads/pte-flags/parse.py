"""pte-flags (an instrument check): whether used pages read as referenced and
rewritten MADV_FREE pages as dirty, as shares of the pages checked."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        if r["kind"] != "flags":
            continue
        kib = r["pages"] * 4
        out += [Metric("referenced_share", r["referenced_kib_used_again"] / kib, phase=r["phase"]),
                Metric("lazyfree_share", r["lazyfree_kib_rewritten"] / kib, phase=r["phase"])]
    return out
