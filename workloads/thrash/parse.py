"""thrash (seed 001): per-round access time; whether the file became cached."""

from statistics import mean

from analysis.records import Metric, with_phases
from reclaimstudy.config.workloads import PAGES_PER_MIB


def metrics(events):
    records = with_phases(events)
    rounds = [r for r in records if r["kind"] == "round"]
    out = [Metric("round_s", r["seconds"], phase="access", index=r["round"]) for r in rounds]
    # Per round, whether the file came from disk: seed 001's control is read round by round.
    out += [Metric("round_pgmajfault", r["d_pgmajfault"], phase="access", index=r["round"])
            for r in rounds]
    out += [Metric("round_refault_file", r["d_refault_file"], phase="access", index=r["round"])
            for r in rounds]
    if rounds:
        late = rounds[len(rounds) // 2:]
        out += [
            Metric("first_round_s", rounds[0]["seconds"]),
            Metric("last_round_s", rounds[-1]["seconds"]),
            Metric("late_rounds_mean_s", mean(r["seconds"] for r in late)),
            # Seed 001's regime: without its change every round read the file from disk.
            Metric("late_rounds_refault_share",
                   mean(r["d_refault_file"] / (r["file_mib"] * PAGES_PER_MIB) for r in late)),
            Metric("access_s", sum(r["seconds"] for r in rounds)),
            Metric("access_pswpout", sum(r["d_pswpout"] for r in rounds)),
            Metric("access_refault_file", sum(r["d_refault_file"] for r in rounds)),
            Metric("access_pgmajfault", sum(r["d_pgmajfault"] for r in rounds)),
        ]
    return out
