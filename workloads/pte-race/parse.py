"""pte-race (an instrument check): the words where one thread found the other's marker,
the kernel's reports of broken mappings, and its bad-page taint after the race."""

from analysis.records import Metric, with_phases


def metrics(events):
    out = []
    for r in with_phases(events):
        if r["kind"] != "race":
            continue
        out += [Metric("foreign_markers", r["foreign_in_r"] + r["foreign_in_r2"], phase=r["phase"]),
                Metric("kernel_bad_lines", r["kernel_bad_lines"], phase=r["phase"]),
                Metric("tainted_bad_page", r["tainted_bad_page"], phase=r["phase"])]
    return out
