"""A study's reproduction rows beside another study's published ones: the same experiment,
claim and policies on other hardware (the disksim study's DiskSim drives beside
seeds-gem5's analytic disk model; a cheaper gem5 CPU beside the timing CPU, ladder.py).

Both sides are judged alone, each row by itself at the study's alpha (no adjustment for
the other rows: the two studies' families differ), so a row's verdict here can differ from
the one its own report gives under Holm. Where each side spent its disk time is shown
beside the verdicts: the drive's own statistics, summed over a run's phases and averaged
over the runs of a policy.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from analysis.compare import compare  # noqa: E402
from analysis.numbers import amount  # noqa: E402
from analysis.paired import paired  # noqa: E402
from analysis.published import published_dir, table_in  # noqa: E402
from analysis.regimes import regime_checks  # noqa: E402
from analysis.reproduction_plot import plottable, verdict_colour  # noqa: E402
from analysis.seeds import MGLRU_POLICY, repetition_values, reproduction  # noqa: E402
from analysis.verdicts import short  # noqa: E402
from reclaimstudy.config.verdict_rules import VerdictRules  # noqa: E402
from reclaimstudy.results.record import PublishedRun, published_runs  # noqa: E402

KEY = ["experiment", "what"]
TICKS_PER_MS = 1e9  # gem5 ticks are picoseconds

# The drive's statistics a report sets beside the verdicts (analysis/metrics.py declares
# them; a model that does not count one leaves it out): column, metric, scale, unit.
DRIVE_STATISTICS = (
    ("reads", "disk_reads", 1, "commands"),
    ("writes", "disk_writes", 1, "commands"),
    ("sequential", "disk_sequential", 1, "commands"),
    ("jumps", "disk_jumps", 1, "commands"),
    ("service_ms", "disk_service_ticks", 1 / TICKS_PER_MS, "ms"),
    ("position_ms", "disk_position_ticks", 1 / TICKS_PER_MS, "ms"),
    ("seek_ms", "disk_seek_ticks", 1 / TICKS_PER_MS, "ms"),
    ("rotation_ms", "disk_rotation_ticks", 1 / TICKS_PER_MS, "ms"),
    ("buffer_hits", "disk_buffer_hits", 1, "commands"),
    ("buffer_misses", "disk_buffer_misses", 1, "commands"),
)


def rows_alone(table: pd.DataFrame, regimes: pd.DataFrame | None, baseline: str,
               rules: VerdictRules) -> pd.DataFrame:
    """The reproduction rows of `table`, each judged alone (multiplicity none)."""
    alone = VerdictRules(**(rules.model_dump() | {"multiplicity": "none"}))
    return reproduction(compare(table, baseline), table, regimes, alone)


def mglru_rows(rows: pd.DataFrame, table: pd.DataFrame, baseline: str,
               alpha: float) -> pd.DataFrame:
    """For each reproduction row whose experiment ran MGLRU and whose seed's "on" policy
    (its first) is the study's `baseline`: MGLRU against it, paired by repetition, in
    the row's metric, judged alone at `alpha` ("lower" or "higher" where the paired test
    rejects no difference, else "inconclusive"); the seed had no MGLRU, so there is no
    seed's ratio. (A pair in another kernel context, such as seed 000a's, is not what
    MGLRU replaces.) The same columns as the rows, so side_by_side sets them beside the
    reference's."""
    out: list[dict] = []
    seen = set()
    for row in ([] if rows.empty else rows.to_dict("records")):
        # one row per metric: a claim and its control share it
        what = f"{row['metric']} [{row['phase'] or 'run'}]: {MGLRU_POLICY} / {baseline}"
        if (MGLRU_POLICY not in row["policies"] or row["policies"][0] != baseline
                or (row["experiment"], row["system"], what) in seen):
            continue
        seen.add((row["experiment"], row["system"], what))
        pair = paired(*(repetition_values(table, row["experiment"], row["setup"], row["metric"],
                                          row["phase"], policy)
                        for policy in (MGLRU_POLICY, baseline)))
        decided = pair.p_value == pair.p_value and pair.p_value < alpha
        out.append({key: row[key] for key in ("experiment", "metric", "phase", "seed", "system")}
                   | {"what": what, "seed_ratio": float("nan"), "paired_ratio": pair.ratio,
                      "interval_low": pair.low, "interval_high": pair.high,
                      "n_pairs": pair.n, "against": baseline,
                      "verdict": ("lower" if pair.ratio < 1 else "higher") if decided
                      else "inconclusive"})
    return pd.DataFrame(out)


def side_by_side(reference: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """One row for each of our reproduction rows whose experiment and claim (`what`) the
    reference has, with each reference row of that claim (one per reference system):
    both systems, ratios, intervals, verdicts and pairs; whether our ratio lies inside the
    reference's 95% interval, and whether the verdicts are the same."""
    out: list[dict] = []
    if ours.empty or reference.empty:
        return pd.DataFrame(out)
    for row in ours.to_dict("records"):
        matching = reference[(reference["experiment"] == row["experiment"])
                             & (reference["what"] == row["what"])]
        for ref in matching.to_dict("records"):
            out.append({
                "experiment": row["experiment"], "what": row["what"], "metric": row["metric"],
                "phase": row["phase"], "seed": row["seed"], "seed_ratio": row["seed_ratio"],
                "reference_system": ref["system"], "system": row["system"],
                "reference_ratio": ref["paired_ratio"], "reference_low": ref["interval_low"],
                "reference_high": ref["interval_high"], "reference_verdict": short(ref["verdict"]),
                "reference_pairs": ref["n_pairs"],
                "ratio": row["paired_ratio"], "low": row["interval_low"],
                "high": row["interval_high"], "verdict": short(row["verdict"]),
                "pairs": row["n_pairs"], "against": row.get("against"),
                "inside": bool(ref["interval_low"] <= row["paired_ratio"] <= ref["interval_high"]),
                "same_verdict": short(row["verdict"]) == short(ref["verdict"])})
    return pd.DataFrame(out)


def drive_statistics(table: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, system and policy: the runs' mean of each drive statistic, summed
    over each run's phases (gem5 runs that finished; a statistic no run counts is left
    out, one some runs lack is NaN)."""
    metrics = {metric: (column, scale) for column, metric, scale, _ in DRIVE_STATISTICS}
    part = table[(table["source"] == "gem5") & (table["status"] == "ok")
                 & table["metric"].isin(metrics)]
    if part.empty:
        return pd.DataFrame()
    per_run = part.groupby(["experiment", "system", "policy", "run_id", "metric"],
                           sort=False)["value"].sum().unstack("metric")
    means = per_run.groupby(["experiment", "system", "policy"], sort=False).mean()
    means["runs"] = per_run.groupby(["experiment", "system", "policy"], sort=False).size()
    for metric, (_, scale) in metrics.items():
        if metric in means:
            means[metric] = means[metric] * scale
    named = means.rename(columns={m: c for m, (c, _) in metrics.items()})
    ordered = [c for c, *_ in DRIVE_STATISTICS if c in named] + ["runs"]
    return named[ordered].reset_index()


def reference_of(study, published_root: Path) -> dict | None:
    """The study named by `study.beside`, as published under `published_root`: its table
    and runs. None when the study names none; a dict with `table` None when that study is
    not published yet (the report says so instead of failing)."""
    name = getattr(study, "beside", None)
    if not name:
        return None
    target = published_dir(name, published_root.parent)
    if not (target / "report" / "table.parquet").is_file():
        return {"name": name, "table": None, "runs": []}
    table = table_in(target)
    wanted = set(table["run_id"])
    runs = [run for run in published_runs(target, name) if run.record["run_id"] in wanted]
    return {"name": name, "table": table, "runs": runs}


def beside(study, table: pd.DataFrame, kept: list[PublishedRun], reference: dict) -> dict:
    """What the report shows beside the reference: the rows side by side, and the drive
    statistics of both studies' experiments that we share."""
    if reference["table"] is None:
        return {"name": reference["name"], "rows": pd.DataFrame(), "mglru": pd.DataFrame(),
                "drives": pd.DataFrame()}
    ours = rows_alone(table, regime_checks(table, kept), study.baseline, study.verdicts)
    theirs = rows_alone(reference["table"], regime_checks(reference["table"], reference["runs"]),
                        study.baseline, study.verdicts)
    rows = side_by_side(theirs, ours)
    mglru = side_by_side(mglru_rows(theirs, reference["table"], study.baseline,
                                    study.verdicts.alpha),
                         mglru_rows(ours, table, study.baseline, study.verdicts.alpha))
    shared = set(rows["experiment"]) if not rows.empty else set()
    drives = pd.concat([drive_statistics(reference["table"][reference["table"]["experiment"]
                                                            .isin(shared)]).assign(study=reference["name"]),
                        drive_statistics(table[table["experiment"].isin(shared)]).assign(study=study.name)],
                       ignore_index=True)
    return {"name": reference["name"], "rows": rows, "mglru": mglru, "drives": drives}


def beside_figure(rows: pd.DataFrame):
    """Each claim's paired ratio with its 95% interval, coloured by its verdict: the
    reference's system first (a square), then each of ours (a dot), on a log axis around
    1, the seed's ratio as a black diamond. None when no row has a ratio."""
    if rows.empty:
        return None
    lines = []  # (label, ratio, low, high, colour, marker, the seed's ratio or None)
    for (experiment, _), group in rows.groupby(KEY, sort=False):
        first = group.iloc[0]
        label = f"{experiment}: {first['metric']}" + (f" [{first['phase']}]" if first["phase"] else "")
        lines.append((f"{label} | {first['reference_system']}", first["reference_ratio"],
                      first["reference_low"], first["reference_high"],
                      verdict_colour(first["reference_verdict"]), "s",
                      first["seed_ratio"]))
        for row in group.drop_duplicates("system").to_dict("records"):
            lines.append((f"{' ' * 4}{row['system']}", row["ratio"], row["low"], row["high"],
                          verdict_colour(row["verdict"]), "o", None))
    if not any(plottable(line[1]) for line in lines):
        return None
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.3 * len(lines)))
    for y, (_, ratio, low, high, colour, marker, seed) in enumerate(reversed(lines)):
        if plottable(low) and plottable(high):
            ax.plot([low, high], [y, y], color=colour, linewidth=2.5)
        if plottable(ratio):
            ax.plot(ratio, y, marker=marker, color=colour, markersize=6)
        if seed is not None and plottable(seed):
            ax.plot(seed, y, marker="D", color="black", markersize=5)
    ax.set_yticks(range(len(lines)))
    ax.set_yticklabels([line[0] for line in reversed(lines)], fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.set_xlabel("paired ratio, with the change / without it, and its 95% interval "
                  "(square: the reference's system; dot: ours; diamond: the seed's ratio)")
    fig.tight_layout()
    return fig


def _num(value, digits: int = 3) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.{digits}g}"


def rows_markdown(rows: pd.DataFrame) -> str:
    """The side-by-side rows as a Markdown table; our ratio in bold where it lies outside
    the reference's 95% interval."""
    head = ("| experiment | claim | system | ratio [95%] | verdict (pairs) | inside the "
            "reference's interval |\n|---|---|---|---|---|---|")
    lines = [head]
    for (experiment, _), group in rows.groupby(KEY, sort=False):
        first = group.iloc[0]
        claim = first["metric"] + (f" [{first['phase']}]" if first["phase"] else "")
        if isinstance(first.get("against"), str):  # mglru_rows: MGLRU against that policy
            claim += f", {MGLRU_POLICY} / {first['against']}"
        lines.append(f"| {experiment} | {claim} | {first['reference_system']} (reference) | "
                     f"{_num(first['reference_ratio'], 4)} [{_num(first['reference_low'], 4)}, "
                     f"{_num(first['reference_high'], 4)}] | {first['reference_verdict']} "
                     f"({first['reference_pairs']}) | |")
        for row in group.drop_duplicates("system").to_dict("records"):
            ratio = _num(row["ratio"], 4)
            lines.append(f"| | | {row['system']} | {ratio if row['inside'] else f'**{ratio}**'} "
                         f"[{_num(row['low'], 4)}, {_num(row['high'], 4)}] | {row['verdict']} "
                         f"({row['pairs']}) | {'yes' if row['inside'] else 'no'} |")
    return "\n".join(lines)


def drives_markdown(drives: pd.DataFrame) -> str:
    """The drive statistics as a Markdown table, one line per study, system and policy."""
    columns = [c for c, *_ in DRIVE_STATISTICS if c in drives]
    units = {c: u for c, _, _, u in DRIVE_STATISTICS}
    head = ("| experiment | system | policy | runs | "
            + " | ".join(f"{c.replace('_ms', '').replace('_', ' ')} ({units[c]})" for c in columns)
            + " |\n|" + "---|" * (4 + len(columns)))
    lines = [head]
    # the reference's lines first, as `beside` concatenates them
    for row in drives.sort_values("experiment", kind="stable").to_dict("records"):
        lines.append(f"| {row['experiment']} | {row['system']} | {row['policy']} | {row['runs']} | "
                     + " | ".join(amount(row[c]) for c in columns) + " |")
    return "\n".join(lines)
