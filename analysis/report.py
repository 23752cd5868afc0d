"""The study report: Markdown, and HTML made from it, with its plots as image files beside
them (plots/*.png, referenced by relative path, never inlined).

Its layout, for a reader: a one-screen summary first (the forest plot of every verdict,
plots/reproduction.png, and a compact verdict table that fits a 1366-pixel window), then
one section per experiment (what we found, the evidence, the plots), then the full seed
reproduction table with every number, then an appendix of provenance as facts: the
inputs behind every number, what the runs cost, the sweep log's summary, failed runs,
and findings.md's What was run and Provenance.
"""

import json
import math
import re
import textwrap
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import pandas as pd  # noqa: E402
from jinja2 import Environment, FileSystemLoader  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402

from analysis.beside import beside, beside_figure, drives_markdown, reference_of, rows_markdown  # noqa: E402
from analysis.compare import compare, format_text, policy_order  # noqa: E402
from analysis.device_costs import cost_figure, cost_table, devices  # noqa: E402
from analysis.device_costs import markdown as cost_markdown  # noqa: E402
from analysis.idle_sweep import idle_sweep_figure, idle_sweeps  # noqa: E402
from analysis.paired import paired  # noqa: E402
from analysis.published import FINDINGS, PUBLISHED  # noqa: E402
from analysis.regimes import regime_checks  # noqa: E402
from analysis.reproduction_plot import reproduction_figure  # noqa: E402
from analysis.seeds import caveats_for, repetition_values, reproduction, unmeasured  # noqa: E402
from analysis.signatures import signature_rows  # noqa: E402
from analysis.sequential_replay import sequential_verdicts  # noqa: E402
from analysis.table import (export, gem5_build, study_folder_table, study_runs,  # noqa: E402
                            workload_declarations)
from analysis.verdicts import explained, short  # noqa: E402
from reclaimstudy.config.systems import get_system  # noqa: E402
from reclaimstudy.errors import StudyError  # noqa: E402
from reclaimstudy.results import sweeplog  # noqa: E402
from reclaimstudy.results.record import PublishedRun, host_wall_seconds  # noqa: E402

TEMPLATES = Path(__file__).parent / "templates"
# Workload metrics shown as bars (at most this many per experiment) and as timelines.
MAX_BARS = 6
# Characters of a 10-pt title that fit in an inch of figure (DejaVu Sans, with a margin).
TITLE_CHARS_PER_INCH = 11
TIMELINES = {"cumulative_s": "step", "launch_s": "step", "step_s": "step", "launch_majflt": "step",
             "round_s": "round", "pass_s": "pass",
             "round_pgmajfault": "round", "round_refault_file": "round"}


def _finish(fig, title: str, path: Path) -> Path:
    """Title, lay out, save and close a figure. The title wraps to the figure's width (a
    one-panel figure is 4.5 in wide: a long title would run off both edges)."""
    fig.suptitle(textwrap.fill(title, width=int(fig.get_figwidth() * TITLE_CHARS_PER_INCH)),
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")  # labels past the axes stay whole
    plt.close(fig)
    return path


def _bar_plot(part: pd.DataFrame, raw: pd.DataFrame, policies: list[str], title: str,
              path: Path) -> Path | None:
    """The experiment's first workload metrics: a bar per policy (its mean, as the comparison
    computes it) and a dot per repetition, which shows a spread that a standard deviation
    would draw below zero or hide (two clusters)."""
    metrics = list(dict.fromkeys(zip(part["metric"], part["phase"], part["unit"])))[:MAX_BARS]
    if not metrics:
        return None
    runs = raw[raw["index"].isna()].assign(phase=raw["phase"].fillna(""))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.2), squeeze=False)
    for ax, (metric, phase, unit) in zip(axes[0], metrics):
        rows = part[(part["metric"] == metric) & (part["phase"] == phase)].set_index("policy")
        present = [p for p in policies if p in rows.index]
        ax.bar(range(len(present)), [rows.loc[p, "mean"] for p in present],
               color=[f"C{policies.index(p)}" for p in present])
        values = runs[(runs["metric"] == metric) & (runs["phase"] == phase)]
        for x, policy in enumerate(present):
            mine = values[values["policy"] == policy]["value"]
            ax.plot([x] * len(mine), mine, "o", markersize=2.5, color="black", alpha=0.6)
        ax.set_xticks(range(len(present)), present, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{metric}" + (f" [{phase}]" if phase else ""), fontsize=9)
        ax.set_ylabel(unit, fontsize=8)
    return _finish(fig, title, path)


def spans_decades(values, decades: int = 2) -> bool:
    """Whether positive values span at least `decades` powers of ten, so a linear axis would
    flatten the small ones (thrash's settled rounds, ms, under its first, hundreds of ms)."""
    values = [v for v in values if pd.notna(v)]
    return bool(values) and min(values) > 0 and max(values) >= min(values) * 10 ** decades


def _timeline_plot(rows: pd.DataFrame, policies: list[str], title: str, path: Path) -> Path | None:
    """Per-step metrics (rounds, launches, passes): each policy's mean over repetitions as a
    line and their range (minimum to maximum) as a band around it."""
    indexed = rows[rows["index"].notna() & rows["metric"].isin(TIMELINES)]
    if indexed.empty:
        return None
    metrics = list(dict.fromkeys(indexed["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        data = indexed[indexed["metric"] == metric]
        plotted = []
        for policy in policies:
            steps = data[data["policy"] == policy].groupby("index")["value"]
            series = steps.mean()
            if series.empty:
                continue
            color = f"C{policies.index(policy)}"
            ax.plot(series.index, series.values, marker="o", markersize=3, label=policy,
                    color=color)
            low, high = steps.min(), steps.max()
            if (high > low).any():  # repetitions that differ: show how far (thrash's bimodal fill)
                ax.fill_between(series.index, low.values, high.values, color=color, alpha=0.15,
                                linewidth=0)
            plotted += list(low.values) + list(high.values)
        if spans_decades(plotted):
            ax.set_yscale("log")
        ax.set_xlabel(TIMELINES[metric])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole: no pass 1.2
        ax.set_ylabel(f"{metric} ({data['unit'].iloc[0]})")
        ax.legend(fontsize=7)
    return _finish(fig, title, path)


def _phase_plot(raw: pd.DataFrame, policies: list[str], title: str, path: Path) -> Path | None:
    """Per-phase durations (guest clock; simulated time on gem5), one bar group per phase:
    bars are means over repetitions, dots each repetition (a bimodal phase shows as two
    clusters, which a mean or a standard deviation would hide)."""
    durations = raw[(raw["metric"] == "phase_s") & raw["phase"].notna()]
    if durations.empty:
        return None
    phases = list(dict.fromkeys(durations["phase"]))
    fig, ax = plt.subplots(figsize=(min(14, max(5.5, 1.2 * len(phases) * len(policies) / 2)), 3.2))
    width = 0.8 / len(policies)
    for i, policy in enumerate(policies):
        rows = durations[durations["policy"] == policy]
        means = rows.groupby("phase")["value"].mean()
        xs = [x + i * width for x in range(len(phases))]
        ax.bar(xs, [means.get(p, 0) for p in phases], width, label=policy, color=f"C{i}")
        at = {p: x for p, x in zip(phases, xs)}
        ax.plot([at[p] for p in rows["phase"]], rows["value"], "o", markersize=2.5,
                color="black", alpha=0.6, linestyle="none")
    ax.set_xticks([x + width * (len(policies) - 1) / 2 for x in range(len(phases))], phases,
                  fontsize=8, rotation=45 if len(phases) > 8 else 0)  # the desktop has 17
    ax.set_ylabel("s")
    ax.legend(fontsize=7)
    return _finish(fig, title, path)


def _generation(study, kept: list[PublishedRun], experiment: str, backend: str,
                system: str) -> dict | None:
    """Where a study keeps experiments on an older instrument (StudyFile.older_instrument):
    the kernel and simulator an experiment's runs ran on, and if it is kept so, why its
    rows stand beside runs of a newer one. None in a study that keeps none."""
    if not study.older_instrument:
        return None
    artefacts = {(run.identity["artefacts"].get("kernel"), gem5_build(run)) for run in kept
                 if run.experiment == experiment and run.record["backend"] == backend
                 and run.record["system_name"] == system}
    return {"kernels": sorted({k for k, _ in artefacts if k}),
            "simulators": sorted({g for _, g in artefacts if g}),
            "why": dict(study.older_instrument).get(experiment)}


def _inputs(kept: list[PublishedRun]) -> list[dict]:
    """One entry per guest generation and system profile: what the runs ran on."""
    seen: dict = {}
    for run in kept:
        record, artefacts = run.record, run.record["artefacts"]
        key = (run.artefacts_key, json.dumps(run.identity["system"], sort_keys=True))
        entry = seen.setdefault(key, {
            "backend": record["backend"], "system": record["system_name"],
            "profile": run.identity["system"], "kernel": artefacts.get("kernel", {}),
            "image": artefacts.get("image", {}), "gem5": artefacts.get("gem5"),
            "qemu": artefacts.get("qemu"), "runs": 0, "binaries": Counter()})
        entry["runs"] += 1
        # Rebuilds of one simulator (same key, another compile time) share an entry;
        # each binary is named with how many runs it made, in order of first appearance.
        binary = (artefacts.get("gem5") or {}).get("sha256")
        if binary:
            entry["binaries"][binary] += 1
    return list(seen.values())


def _guests(inputs: list[dict]) -> list[dict]:
    """Which kernel and image each backend and system ran on (from `_inputs`), when the
    study's numbers do not all come from one guest; empty when they do. A sweep on one
    backend after a guest change leaves the other backend's runs on the old guest until
    it is swept too. Systems of different memory sizes have their own images, so images
    are compared per system and kernels across the whole study."""
    guests = sorted({(i["backend"], i["system"], i["kernel"].get("key"), i["image"].get("key"))
                     for i in inputs}, key=str)
    images: dict[str, set] = {}
    for _, system, _, image in guests:
        images.setdefault(system, set()).add(image)
    if len({kernel for _, _, kernel, _ in guests}) <= 1 and \
            all(len(keys) <= 1 for keys in images.values()):
        return []
    return [{"backend": backend, "system": system, "kernel": kernel, "image": image}
            for backend, system, kernel, image in guests]


def _costs(kept: list[PublishedRun]) -> list[dict]:
    """Host wall time per run (on gem5 also the simulator's CPU time, which other work on
    the cores does not inflate, and the simulated time after the boot checkpoint),
    by backend, system, experiment and policy: what a re-run or a bigger sweep will cost."""
    groups: dict[tuple, list[dict]] = {}
    for record in (run.record for run in kept):
        if record.get("status") == "ok" and record.get("wall_seconds"):
            key = (record["backend"], record["system_name"], record.get("experiment", ""),
                   record["policy_name"])
            groups.setdefault(key, []).append(record)
    rows = []
    for (backend, system, experiment, policy), records in sorted(groups.items()):
        simulated, cpu = [], []
        for record in records:
            if (record.get("backend_info") or {}).get("cpu_seconds") is not None:
                cpu.append(record["backend_info"]["cpu_seconds"])
            total = (record.get("backend_info") or {}).get("sim_seconds")
            boot = (record.get("artefacts", {}).get("checkpoint") or {}).get("boot_sim_seconds", 0)
            if total is not None:
                simulated.append(total - boot)
        wall = sum(host_wall_seconds(r) for r in records) / len(records)
        sim = sum(simulated) / len(simulated) if simulated else None
        rows.append({"backend": backend, "system": system, "experiment": experiment,
                     "policy": policy, "runs": len(records), "wall_s": wall, "sim_s": sim,
                     "cpu_s": sum(cpu) / len(cpu) if cpu else None,
                     "host_per_sim": wall / sim if sim else None})
    return rows


def _totals(kept: list[PublishedRun]) -> dict:
    """The whole study's host cost: runs, wall hours, and on gem5 the simulator's CPU
    hours, summed over every run the report holds, and how many of them were resumed."""
    ok = [run.record for run in kept if run.record.get("status") == "ok"]
    info = [r.get("backend_info") or {} for r in ok]
    cpu = [i.get("cpu_seconds") for i in info]
    return {"runs": len(ok), "wall_h": sum(host_wall_seconds(r) for r in ok) / 3600,
            "cpu_h": sum(c for c in cpu if c is not None) / 3600,
            "cpu_runs": sum(1 for c in cpu if c is not None),
            # a gem5 run cut short (its sweep stopped) and finished by a later sweep from
            # its last checkpoint segment: how often the study's stops reached into runs
            "resumed_runs": sum(1 for i in info if (i.get("resumed_at_segment") or 0) > 0),
            # restores whose checkpoint had an interrupt line high (reclaimstudy/backends/gem5/checkpoint.py),
            # among the gem5 runs that record it (those since 2026-11-27)
            "pins_runs": sum(1 for i in info if "pins_lowered" in i),
            "pins_lowered_runs": sum(1 for i in info if i.get("pins_lowered"))}


VMMON_MARKS = ("begin", "end", "restore")


def _vmmon(rows: pd.DataFrame, policies: list[str]) -> dict:
    """Seed 000b's vmstat table (hot-stream's vmmon_* gauges at the stream's start, its
    end and after the restore), per policy, means over repetitions: columns, rows."""
    gauges = rows[rows["metric"].str.startswith("vmmon_") & rows["index"].notna()]
    if gauges.empty:
        return {}
    means = gauges.groupby(["policy", "index", "metric"], sort=False)["value"].mean()
    columns = list(dict.fromkeys(gauges["metric"]))
    table = []
    for policy in policies:
        for index, mark in enumerate(VMMON_MARKS):
            if (policy, index, columns[0]) in means.index:
                table.append({"policy": policy, "mark": mark,
                              "values": [means[(policy, index, c)] for c in columns]})
    return {"columns": [c.removeprefix("vmmon_") for c in columns], "rows": table}


# Quiet time (analysis/metrics.py QUIET) above this share of a run's simulated time is
# flagged. Outside the workloads' declared pauses it read exactly 0 in 49 of seeds-gem5's
# first 77 runs, and 3-68% in the 28 others (desktop, thrash, 2 of 15 iozone-mmap).
QUIET_FLAG_SHARE = 0.01


def _quiet(rows: pd.DataFrame, policies: list[str]) -> list[dict]:
    """Per policy, the median over its runs of the simulated time with nothing busy
    outside the workload's pauses (phases that sleep by design), of the simulated time,
    and of their ratio; gem5 runs only (empty otherwise)."""
    per_run = rows[rows["metric"].isin(["quiet_s", "sim_seconds"]) & (rows["source"] == "gem5")]
    if per_run.empty or "quiet_s" not in set(per_run["metric"]):
        return []
    pauses = {(w, p) for w in set(per_run["workload"]) for p in workload_declarations(w).pauses}
    paused = [(w, p) in pauses for w, p in zip(per_run["workload"], per_run["phase"])]
    per_run = per_run[~((per_run["metric"] == "quiet_s") & pd.Series(paused, index=per_run.index))]
    sums = per_run.pivot_table(index=["policy", "run_id"], columns="metric", values="value",
                               aggfunc="sum").dropna()
    sums["share"] = sums["quiet_s"] / sums["sim_seconds"]
    out = []
    for policy in policies:
        if policy in sums.index.get_level_values("policy"):
            mine = sums.loc[policy]
            out.append({"policy": policy, "runs": len(mine), "quiet_s": mine["quiet_s"].median(),
                        "sim_s": mine["sim_seconds"].median(), "share": mine["share"].median(),
                        "flagged": int((mine["share"] > QUIET_FLAG_SHARE).sum())})
    return out


def _runs_by_policy(rows: pd.DataFrame, policies: list[str]) -> list[dict]:
    """The run directories behind an experiment's numbers, per policy, in repetition
    order: each one's run.json names every input."""
    runs = rows[["policy", "repetition", "run_id"]].drop_duplicates().sort_values("repetition")
    return [{"policy": policy,
             "runs": list(runs[runs["policy"] == policy][["repetition", "run_id"]].itertuples(
                 index=False, name=None))}
            for policy in policies if policy in set(runs["policy"])]


def _regime(regimes: pd.DataFrame, experiment: str, backend: str, system: str) -> dict | None:
    """An experiment's regime checks, for the report (None: its workload declares none)."""
    rows = regimes[(regimes["experiment"] == experiment) & (regimes["backend"] == backend)
                   & (regimes["system"] == system)]
    if rows.empty:
        return None
    first = rows.iloc[0]
    return {"metric": first["metric"], "at_least": first["at_least"], "why": first["why"],
            "per_memory": bool(first["per_memory"]),
            # A regime of every policy has none (NaN once it has been through the table).
            "policy": None if pd.isna(first["regime_policy"]) else first["regime_policy"],
            "out": int((~rows["in_regime"]).sum()),
            "rows": rows.to_dict("records")}


def _pairs_in_regime(row: dict, regime: dict, table: pd.DataFrame) -> str:
    """Where some runs fall short of the regime: the row's pairs again, over only the
    repetitions whose every checked run is in it, with their own verdict."""
    short = {int(r["repetition"]) for r in regime["rows"] if not r["in_regime"]}
    with_values, without_values = (
        {rep: value for rep, value in repetition_values(
            table, row["experiment"], row["setup"], row["metric"], row["phase"],
            policy).items() if rep not in short}
        for policy in row["policies"][:2])
    pair = paired(with_values, without_values)
    pairs = f"{pair.n} pair{'s' if pair.n != 1 else ''}"
    return (f"the {pairs} in it: {_num(pair.ratio)} [{_num(pair.low)}, {_num(pair.high)}], "
            f"p {_num(pair.p_value)}, {pair.judged(row['seed_ratio'], row['expects_none'])} "
            f"(alone, not adjusted)")


def _num(value) -> str:
    """As the report's `num` filter writes a number."""
    return "-" if value is None or value != value else f"{value:.4g}"


def anchor(experiment: str, system: str, backend: str) -> str:
    """The id of an experiment's section, which lists the runs behind its numbers."""
    return re.sub(r"[^a-z0-9-]+", "-", f"exp-{experiment}-{system}-{backend}".lower())


def summary_cells(row: dict) -> dict:
    """A reproduction row's cells in the summary's compact table (the full table keeps
    every number and the verdict's whole text): the metric with its phase and, for a
    control beyond the seed, the control's policy; the seed's ratio, or that it expects
    none here (seed 000b's idle time outside its window); ours with its 95% interval;
    the verdict's kind with its adjusted p (TOST's where the row tests equivalence), or
    why there is no test, and the look a sequential verdict was decided at."""
    metric = row["metric"] + (f" [{row['phase']}]" if row.get("phase") else "")
    if row.get("control"):
        metric += f", control: {row['policies'][1]}"
    if row.get("expects_none"):
        seed = f"none here ({_num(row['seed_ratio'])} in its window)"
    else:
        seed = _num(row["seed_ratio"])
    ours = _num(row["paired_ratio"])
    if row["paired_ratio"] == row["paired_ratio"]:
        ours += f" [{_num(row['interval_low'])}, {_num(row['interval_high'])}]"
    test, p = str(row.get("test", "")), row.get("adjusted_p", math.nan)
    if p == p and p is not None:
        why = ("TOST p " if test.startswith("equivalence") else "p ") + _num(p)
    else:
        why = "out of regime" if test == "out of regime" else "no test"
    decided = re.search(r"decided at \d+ pairs", row["verdict"])
    if decided:
        why += f", {decided.group(0)}"
    return {"metric_cell": metric, "seed_cell": seed, "ours_cell": ours,
            "verdict_cell": f"**{short(row['verdict'])}** ({why})"}


def seed_metric_text(row: dict) -> str:
    """A row's seed_metric (seeds.seed_metric_beside) in one line: what the seed counted,
    ours with its change on / off, the paired ratio with its 95% interval and p (none
    where the pairs do not differ), and its verdict alone; "" where the claim names none."""
    beside = row.get("seed_metric")
    if not isinstance(beside, dict):  # None, or NaN once the rows went through pandas
        return ""
    p = f", p {_num(beside['p'])}" if beside["p"] == beside["p"] else ""
    return (f"{beside['metric']} ({beside['unit']}): ours {_num(beside['with'])} / "
            f"{_num(beside['without'])}, paired {_num(beside['ratio'])} "
            f"[{_num(beside['low'])}, {_num(beside['high'])}]{p} over {beside['n_pairs']} "
            f"pair{'s' if beside['n_pairs'] != 1 else ''}: {beside['verdict']}")


def _places(rows: list[dict]) -> None:
    """Where the summary's short experiment cell must say more: the system and backend
    of an experiment the study ran on several, and the backend of every row of a study
    with several backends (QEMU's numbers are functional only)."""
    places: dict[str, set] = {}
    for row in rows:
        places.setdefault(row["experiment"], set()).add((row["system"], row["backend"]))
    backends = {row["backend"] for row in rows}
    for row in rows:
        if len(places[row["experiment"]]) > 1:
            row["place"] = f" on {row['system']} [{row['backend']}]"
        else:
            row["place"] = f" [{row['backend']}]" if len(backends) > 1 else ""
    # Two claims of one metric in one experiment (seed 001's, on 6.1's refault distance
    # and on the control's, where one experiment ran both pairs): name the pair.
    seen = Counter((r["experiment"], r["place"], r["metric_cell"]) for r in rows)
    for row in rows:
        if seen[(row["experiment"], row["place"], row["metric_cell"])] > 1:
            row["metric_cell"] += f", {row['policies'][0]} / {row['policies'][1]}"


def _adjusted_p(rows: list[dict]) -> str:
    """The summary's name for the p its verdicts use: 'Holm-adjusted p', or 'p' alone."""
    method = rows[0].get("multiplicity") if rows else None
    return "p" if not method or method == "no adjustment" else f"{method}-adjusted p"


def _seed_rows(seeds: pd.DataFrame, regimes: pd.DataFrame, table: pd.DataFrame) -> list[dict]:
    """The reproduction table's rows with their regime check (in, out: k of n short, or
    none declared) and how many runs of the row's policies (on, off, MGLRU) stand behind
    them, linked to the section that lists them."""
    rows = []
    for row in seeds.to_dict("records") if not seeds.empty else []:
        regime = _regime(regimes, row["experiment"], row["backend"], row["system"])
        if regime is None:
            row["regime"] = "-"
        else:
            n = len(regime["rows"])
            row["regime"] = (f"**out**: {regime['out']} of {n} short" if regime["out"]
                             else f"in ({n}/{n})")
            if 0 < regime["out"] < n:
                row["regime"] += f"; {_pairs_in_regime(row, regime, table)}"
        if row.get("window"):
            row["regime"] += f"; {row['window']}"
        runs = table[(table["experiment"] == row["experiment"])
                     & (table["backend"] == row["backend"]) & (table["system"] == row["system"])
                     & table["policy"].isin(row["policies"])]
        row["runs"] = runs["run_id"].nunique()
        row["anchor"] = anchor(row["experiment"], row["system"], row["backend"])
        row["seed_metric_text"] = seed_metric_text(row)
        rows.append(row | summary_cells(row))
    return rows


# findings.md's sections that are not experiments: what was run (the study as a whole:
# its design, identities, cost) and its provenance (builds, earlier generations of runs,
# the instrument's faults found and fixed). Both are about how the numbers were made,
# not what they say, so the report shows them in its appendix, after every result.
STATUS = "What was run"
HISTORY = "Provenance"


def _cpu_model(system: str) -> str | None:
    """The gem5 CPU model of a system profile (None if the profile is gone)."""
    try:
        return get_system(system).cpu.model
    except StudyError:
        return None


# How root and swap meet the guest (Disk.guest_layout), for a reader.
LAYOUT_WORDS = {
    "device": "root and swap on two disks of that model",
    "partition": "root and swap on one drive (swap a partition after the root filesystem: "
                 "paging and file IO share it)",
    "nvme": "root and swap partitions of one NVMe namespace",
    "zram": "root on the disk, swap on zram (compressed, in the guest's own memory)",
}


def storage_words(system: str) -> str | None:
    """The storage of a system profile in a sentence: what times its drive and where
    root and swap live (None if the profile is gone)."""
    try:
        disk = get_system(system).disk
    except StudyError:
        return None
    timing = disk.timing
    if timing is None:
        drive = "gem5's fixed delay per DMA descriptor (no drive model)"
    elif timing.model == "hdd":
        drive = f"our analytic rotating-disk model (`hdd`) of the {timing.drive}"
    elif timing.model == "flash":
        drive = f"our three-number flash model (`flash`) of the {timing.device}"
    elif timing.model == "disksim":
        # the drive's name says whether it is DiskSim's validated model or derived from it
        drive = f"DiskSim 4.0, {timing.drive}"
    else:
        drive = f"{timing.drive}, " + ("SimpleSSD's NVMe controller" if disk.nvme else
                                       "behind the IDE disk at queue depth 1"
                                       + (", its link an eMMC bus" if timing.interface == "emmc" else ""))
    spindle = " one spindle," if disk.guest_layout == "partition" and disk.rotational else ""
    return f"{drive};{spindle} {LAYOUT_WORDS[disk.guest_layout]}"


def read_findings(path: Path, experiments: set[str]) -> dict[str, str]:
    """What we found, per experiment: `## <experiment>` sections of a Markdown file
    (results/published/<study>/findings.md), written from the runs' evidence, and
    `## What was run` and `## Provenance` for the study as a whole. None is fine; a section for
    an experiment the study does not have is an error."""
    if not path.is_file():
        return {}
    found, name = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            if name not in experiments and name not in (STATUS, HISTORY):
                raise StudyError(f"{path}: section '## {name}' names no experiment of the "
                                 f"study; allowed: {', '.join(sorted(experiments))}, or "
                                 f"'{STATUS}' or '{HISTORY}' for the whole study")
            found[name] = ""
        elif name is not None:
            found[name] += line + "\n"
    return {k: v.strip() for k, v in found.items() if v.strip()}


def html_body(markdown: str) -> str:
    """report.md as HTML. Its plots stay files beside it (plots/*.png, by relative
    path, as the Markdown has them): the HTML is rebuilt, never committed, and a
    browser loads the images from the report's folder."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def build_report(study, results: Path) -> dict:
    """Write results/<study>/report/{report.md,report.html,table.csv.gz,table.parquet,plots/}
    from the study's run directories."""
    study_path = results / study.name
    found = study_runs(study_path, study.name)
    kept, table = study_folder_table(study, study_path, found)
    if table.empty:
        raise StudyError(f"{study_path}: no runs to report on: run `./study sweep {study.name}` first")
    out = study_path / "report"
    exported = export(table, out / "table")
    return write_report(study, table, found, kept, out, exported,
                        source=f"results/{study.name}/",
                        findings_path=results / PUBLISHED / study.name / FINDINGS,
                        sweep_log=study_path / sweeplog.LOG)


def _beside(study, table: pd.DataFrame, kept: list[PublishedRun], published_root: Path,
            plots: Path) -> dict | None:
    """The section setting this study's rows beside the published ones of the study it
    names (`beside`), or None when it names none."""
    reference = reference_of(study, published_root)
    if reference is None:
        return None
    shown = beside(study, table, kept, reference)
    if shown["rows"].empty:
        return {"name": shown["name"], "published": reference["table"] is not None,
                "rows": None, "mglru": None, "drives": None, "figure": None}
    figure = beside_figure(shown["rows"])
    return {"name": shown["name"], "published": True, "rows": rows_markdown(shown["rows"]),
            "mglru": rows_markdown(shown["mglru"]) if not shown["mglru"].empty else None,
            "drives": drives_markdown(shown["drives"]) if not shown["drives"].empty else None,
            "figure": None if figure is None else _finish(
                figure, f"{study.name} beside {shown['name']}: each claim's paired ratio",
                plots / f"beside-{shown['name']}.png")}


def _newest_start(kept: list[PublishedRun]) -> str:
    """When the newest run started: the report says what it was made from, not when it
    was made, so rebuilding it from the same runs gives the same bytes (git sees no
    change)."""
    started = [run.record["started_at"] for run in kept if run.record.get("started_at")]
    return max(started).replace("T", " ") if started else "unknown"


def write_report(study, table: pd.DataFrame, found: list[PublishedRun],
                 kept: list[PublishedRun], out: Path, exported: list[Path], source: str,
                 findings_path: Path, sweep_log: Path | None = None) -> dict:
    """The report of `table` (the tidy table of `kept`, the runs it holds) in `out`, whose
    parent holds each run as <run_id>/run.json; `found` adds failed runs' reasons, and
    `findings_path` (read_findings) what we found, and `sweep_log` (reclaimstudy.results.sweeplog)
    how the runs were swept."""
    superseded, outdated = table.attrs.get("superseded", 0), table.attrs.get("outdated", 0)
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    comparison = compare(table, study.baseline)
    regimes = regime_checks(table, kept)
    failed = table[table["status"] != "ok"][["run_id", "experiment", "policy", "system",
                                               "backend"]].drop_duplicates()
    reasons = {run.record["run_id"]: run.record["reason"] for run in found if not run.ok}
    experiments = []
    by_name = {e.name: e for e in study.experiments}
    findings = read_findings(findings_path, set(by_name))
    for (experiment, _, backend, system), part in comparison.groupby(
            ["experiment", "setup", "backend", "system"], sort=False) if not comparison.empty else []:
        policies = policy_order(part["policy"], study.baseline)
        stem = f"{experiment}-{system}-{backend}"
        workload_part = part[part["source"] == "workload"]
        raw = table[(table["experiment"] == experiment) & (table["backend"] == backend)
                    & (table["system"] == system) & (table["status"] == "ok")]
        figures = [
            _bar_plot(workload_part, raw[raw["source"] == "workload"], policies,
                      f"{experiment} on {system} [{backend}] (bars: mean; dots: repetitions)",
                      plots / f"{stem}-metrics.png"),
            _timeline_plot(raw, policies,
                           f"{experiment}: per step (line: mean; band: min-max over repetitions)",
                           plots / f"{stem}-timeline.png"),
            _phase_plot(raw, policies, f"{experiment}: phase durations (bars: mean; dots: repetitions)",
                        plots / f"{stem}-phases.png"),
        ]
        spec = by_name.get(experiment)
        experiments.append({
            "name": experiment, "backend": backend, "system": system,
            "anchor": anchor(experiment, system, backend),
            "finding": findings.get(experiment),
            "seed": spec.seed if spec else None,
            "cpu": _cpu_model(system), "cpu_why": spec.cpu_why if spec else None,
            "storage": storage_words(system),
            "generation": _generation(study, kept, experiment, backend, system),
            "varied": study.varied(spec) if spec else "",
            "text": format_text(part, study.baseline),
            "figures": [f for f in figures if f is not None],
            "runs": _runs_by_policy(raw, policies),
            "vmmon": _vmmon(raw, policies),
            "regime": _regime(regimes, experiment, backend, system),
            "quiet": _quiet(raw, policies),
        })
    seeds = sequential_verdicts(reproduction(comparison, table, regimes, study.verdicts),
                                table, regimes, study)
    if not seeds.empty:
        seeds = pd.DataFrame(explained(seeds.to_dict("records"),
                                       {e.name: e.on_6_1 for e in study.experiments if e.on_6_1}))
    figure = reproduction_figure(seeds)
    seed_figure = None if figure is None else _finish(
        figure, f"{study.name}: the seeds' ratios and ours", plots / "reproduction.png")
    seed_rows = _seed_rows(seeds, regimes, table)
    for e in experiments:  # each section opens with its rows' verdicts
        e["verdicts"] = [r for r in seed_rows if r["anchor"] == e["anchor"]]
    _places(seed_rows)
    inputs = _inputs(kept)
    sweeps = []
    for (backend, system), sweep in idle_sweeps(table).items():
        figure = _finish(idle_sweep_figure(sweep, policy_order(sweep["policy"], study.baseline)),
                         f"seed 000b: faults against idle time, {system} [{backend}]",
                         plots / f"idle-sweep-{system}-{backend}.png")
        sweeps.append({"backend": backend, "system": system, "figure": figure,
                       "runs": sweep["run_id"].nunique(),
                       "experiments": sorted(set(sweep["experiment"]))})
    costs = cost_table(table)
    device_costs = None if costs.empty else {
        "table": cost_markdown(costs, devices({run.record["system_name"]: run.identity["system"]
                                               for run in kept})),
        "figure": cost_figure(costs, plots / "device-costs.png")}
    context = {
        "study": study, "newest": _newest_start(kept), "source": source,
        "device_costs": device_costs,
        "beside": _beside(study, table, kept, findings_path.parent.parent, plots),
        "backends": sorted(set(table["backend"])), "runs": table["run_id"].nunique(),
        "superseded": superseded,
        "outdated": outdated,
        "failed": [{**row, "reason": reasons.get(row["run_id"], "")}
                   for row in failed.to_dict("records")],
        "experiments": experiments,
        "seeds": seed_rows,
        "signatures": signature_rows(seed_rows),
        "adjusted_p": _adjusted_p(seed_rows),
        "seed_figure": seed_figure,
        "status": findings.get(STATUS),
        "history": findings.get(HISTORY),
        # under the seed table, links only: the text is in the experiment's section
        "findings": [{"experiment": e["name"], "anchor": e["anchor"]}
                     for e in experiments if e["finding"]],
        "caveats": caveats_for(seeds),
        "unmeasured": unmeasured(seeds, table),
        "quiet_flag": QUIET_FLAG_SHARE,
        "quiet_flagged": [{"experiment": e["name"], "anchor": e["anchor"], "system": e["system"],
                           "runs": sum(q["flagged"] for q in e["quiet"]),
                           "of": sum(q["runs"] for q in e["quiet"])}
                          for e in experiments if any(q["flagged"] for q in e["quiet"])],
        "idle_sweeps": sweeps,
        "inputs": inputs,
        "guests": _guests(inputs),
        "older_instrument": [name for name, _ in study.older_instrument],
        "costs": _costs(kept),
        "totals": _totals(kept),
        "sweeps": sweeplog.summary(sweep_log, set(table["run_id"])) if sweep_log else None,
        "exported": [p.name for p in exported],
    }
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=False, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["rel"] = lambda path: Path(path).relative_to(out).as_posix()
    env.filters["num"] = _num
    markdown = env.get_template("report.md.j2").render(**context)
    (out / "report.md").write_text(markdown)
    (out / "report.html").write_text(
        env.get_template("report.html.j2").render(study=study, body=html_body(markdown)))
    return {"markdown": out / "report.md", "html": out / "report.html", "table": exported,
            "failed": len(failed)}
