"""hot-stream (seed 000b): the interactive process's major faults and latency per phase;
and the seed's own vmstat table: six counters at the stream's start ("begin"), at its
end ("end") and after the restore phase ("restore"), as index 0, 1, 2."""

from analysis.records import Metric, with_phases

# The seed's table columns, and where its three rows were read (our phase marks).
VMMON = ("nr_mapped", "nr_active_file", "nr_inactive_file", "pgmajfault", "pgdeactivate",
         "pgfree")
MARKS = (("phase", "stream"), ("phase", "restore"), ("phases_done", None))


def vmmon(events):
    out = []
    for index, (event, name) in enumerate(MARKS):
        mark = next((e for e in events if e.get("event") == event
                     and (name is None or e.get("name") == name)), None)
        if mark is not None:
            out += [Metric(f"vmmon_{field}", mark["vmstat"].get(field, 0), index=index)
                    for field in VMMON]
    return out


def scan_times(events):
    """The seed's I and A over the stream: how long a page takes to cross the inactive
    file list (its mean length over the pages scanned from it a second) and the active
    one (over the pages deactivated a second). An idle time T between the interactive
    program's touches past I faults without protection, and with it only past I + A."""
    marks = {e.get("name"): e for e in events if e.get("event") == "phase"}
    start, end = marks.get("stream"), marks.get("restore")
    if start is None or end is None or end["t"] <= start["t"]:
        return []
    seconds = end["t"] - start["t"]
    out = []
    for metric, size, rate in (("inactive_scan_s", "nr_inactive_file", "pgscan_file"),
                               ("active_scan_s", "nr_active_file", "pgdeactivate")):
        moved = end["vmstat"].get(rate, 0) - start["vmstat"].get(rate, 0)
        length = (start["vmstat"].get(size, 0) + end["vmstat"].get(size, 0)) / 2
        if moved > 0:
            out.append(Metric(metric, length / (moved / seconds), phase="stream"))
    return out


def metrics(events):
    out = vmmon(events) + scan_times(events)
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
                out.append(Metric("stream_mib", r["mib_per_s"] * r["seconds"], phase=phase))
    return out
