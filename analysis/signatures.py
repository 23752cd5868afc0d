"""A seed judged on several metrics together: its signature.

Some seeds' effects are a mechanism that shows in more than one counter at once. Seed
000a's rule made the desktop faster by cutting major faults and swap-ins; a row where
only the time moves (by the disk's positioning, say) is not the seed's effect, though its
own verdict reads "reproduced". configs/seeds.toml's [signature."SEED"] names the
metrics; here each policy pair of such a seed gets one reading over them, made from the
rows' own verdicts (already adjusted among the family: nothing is tested again).
"""

from analysis.paired import REPRODUCED
from analysis.seeds import Signature, load_signatures
from analysis.verdicts import short

# a signature metric the pair has no claim row for (seeds.toml claims it for another pair)
NO_ROW = "no row"
KEY = ("seed", "experiment", "setup", "backend", "system")


def signature_rows(rows: list[dict], declared: dict[str, Signature] | None = None
                   ) -> list[dict]:
    """One reading per (seed, experiment, setup, backend, system, policy pair) of each
    seed with a signature: its metrics' ratios and verdicts, in the signature's order,
    and whether they all moved as the seed's did."""
    declared = load_signatures() if declared is None else declared
    groups: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        signature = declared.get(row["seed"])
        phase = row.get("phase")
        if signature is None or row["metric"] not in signature.metrics or (
                isinstance(phase, str) and phase):
            continue
        key = tuple(row.get(k, "") for k in KEY) + tuple(row["policies"][:2])
        groups.setdefault(key, {})[row["metric"]] = row
    out = []
    for key, by_metric in groups.items():
        signature = declared[key[0]]
        first = next(iter(by_metric.values()))
        cells = [_cell(metric, by_metric.get(metric)) for metric in signature.metrics]
        out.append({
            **dict(zip(KEY, key)), "with": key[-2], "without": key[-1],
            "control": first.get("control", False), "anchor": first.get("anchor", ""),
            "what": signature.what, "cells": cells, "reading": reading(cells),
            "holds": all(short(c["verdict"]) == REPRODUCED for c in cells),
            "judged": all(c["verdict"] != NO_ROW for c in cells),
        })
    return out


def _cell(metric: str, row: dict | None) -> dict:
    if row is None:
        return {"metric": metric, "verdict": NO_ROW, "ratio": float("nan"),
                "low": float("nan"), "high": float("nan"), "seed_ratio": float("nan")}
    return {"metric": metric, "verdict": row["verdict"], "ratio": row["paired_ratio"],
            "low": row["interval_low"], "high": row["interval_high"],
            "seed_ratio": row["seed_ratio"]}


def reading(cells: list[dict]) -> str:
    """What the cells say together: the seed's signature only when every metric was
    reproduced; otherwise which moved as the seed's did and which did not."""
    missing = [c["metric"] for c in cells if c["verdict"] == NO_ROW]
    if missing:
        return (f"not judged together: seeds.toml claims no row of {', '.join(missing)} "
                f"for this pair")
    moved = [c["metric"] for c in cells if short(c["verdict"]) == REPRODUCED]
    if len(moved) == len(cells):
        return "the seed's signature: every metric moved as the seed's did"
    others = ", ".join(f"{c['metric']} {short(c['verdict'])}" for c in cells
                       if short(c["verdict"]) != REPRODUCED)
    if not moved:
        return f"not the seed's signature: no metric moved as the seed's did ({others})"
    return (f"not the seed's signature: only {', '.join(moved)} moved as the seed's did "
            f"({others})")
