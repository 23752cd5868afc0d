"""mmap-seq (seed 004): time per pass, activations and refaults; or fio's bandwidth."""

from statistics import mean

from analysis.records import Metric, with_phases


def metrics(events):
    records = with_phases(events)
    passes = [r for r in records if r["kind"] == "pass"]
    out = [Metric("pass_s", r["seconds"], phase=r["phase"], index=r["pass"]) for r in passes]
    if passes:
        out += [
            Metric("total_s", sum(r["seconds"] for r in passes)),
            Metric("file_mib", passes[0]["file_mib"]),
            # iozone's read and re-read: the seed's own number (passes 1 and 2); the
            # re-read alone is where the policy acts, the cold read barely differs.
            Metric("read_reread_s", sum(r["seconds"] for r in passes if r["pass"] <= 2)),
            Metric("mean_pass_s", mean(r["seconds"] for r in passes)),
            Metric("pgactivate", sum(r["d_pgactivate"] for r in passes)),
            Metric("refault_file", sum(r["d_refault_file"] for r in passes)),
            Metric("pgmajfault", sum(r["d_pgmajfault"] for r in passes)),
        ]
    reread = [r for r in passes if r["pass"] == 2]
    if reread:
        out += [Metric("reread_s", reread[0]["seconds"]),
                Metric("reread_pgmajfault", reread[0]["d_pgmajfault"])]
    for r in records:
        if r["kind"] == "fio":
            job = r["fio"]["jobs"][0]["read"]
            out.append(Metric("fio_bw_kib_s", job["bw"],
                              phase=r["phase"], index=r["pass"]))
            out.append(Metric("fio_runtime_s", job["runtime"] / 1000, phase=r["phase"],
                              index=r["pass"]))
    return out
