"""A group-sequential rule replayed over a study's finished pairs: had the study looked
after `looks` pairs (analysis/sequential.py) and stopped each experiment once every
row of its was decided, how many runs would it have made, what would they have cost,
and would every verdict be the same?

Each experiment's looks are the study's that its own repetitions reach (a five-pair
experiment of a study that looks at 3, 5 and 10 looks at 3 and 5, its boundaries made
for those). At each look the rows are judged on the first n pairs (repetitions 0 to
n - 1) by the same tests as the reproduction table (analysis/seeds.py); a row is decided
by sequential Holm among all the study's rows (analysis/sequential.py), or when it is
out of regime (more runs cannot make it testable); an experiment stops at the look where
all its rows are decided, or at its last. A row's verdict follows from the look it was
decided at, as the table's does; a row never decided is inconclusive.
"""

import math

import pandas as pd

from analysis.compare import compare
from analysis.paired import EQUIVALENT, REPRODUCED, REVERSED
from analysis.published import published_dir, published_table
from analysis.regimes import regime_checks
from analysis.seeds import reproduction
from analysis.sequential import holm_decisions
from analysis.verdicts import short
from reclaimstudy.config.verdict_rules import VerdictRules
from reclaimstudy.results.record import published_runs

KEY = ["experiment", "what", "backend", "system"]


def experiment_looks(looks: tuple[int, ...], repetitions: int) -> tuple[int, ...]:
    """The study's looks an experiment of `repetitions` pairs reaches."""
    return tuple(n for n in looks if n <= repetitions)


def _rows_at(table: pd.DataFrame, regimes: pd.DataFrame | None, pairs: int, baseline: str,
             rules: VerdictRules) -> pd.DataFrame:
    """The reproduction table's rows over the first `pairs` pairs, each row's own p."""
    first = table[table["repetition"] < pairs]
    kept = None if regimes is None or regimes.empty else regimes[regimes["repetition"] < pairs]
    alone = rules.model_copy(update={"multiplicity": "none"})
    return reproduction(compare(first, baseline), first, kept, alone).set_index(KEY)


def _label(row: pd.Series, decided: bool) -> str:
    if row["test"] == "out of regime":
        return "untestable"
    if not decided:
        return "inconclusive"
    if row["expects_none"]:
        return short(EQUIVALENT)
    return REPRODUCED if (row["paired_ratio"] < 1) == (row["seed_ratio"] < 1) else REVERSED


def _walk(table: pd.DataFrame, regimes: pd.DataFrame | None, baseline: str,
          rules: VerdictRules, index, repetitions: dict[str, int], reached: dict[str, int]):
    """The rule over the looks each experiment's finished pairs reach (`reached`: its
    leading repetitions with every run done), in order of pairs across the study.
    `index`: the reproduction rows' keys. An experiment stops at the look where every
    row of it is decided or out of regime, or at its last planned look."""
    looks = {e: experiment_looks(rules.looks or (), repetitions[e])
             for e in set(index.get_level_values(0)) if e in repetitions}
    looks = {e: ls for e, ls in looks.items() if ls}
    keys = [k for k in index if k[0] in looks]
    at = {n: _rows_at(table, regimes, n, baseline, rules)
          for n in sorted({n for e, ls in looks.items() for n in ls if n <= reached.get(e, 0)})}
    p_at: dict[tuple, list[float]] = {k: [] for k in keys}
    stopped: dict[str, int] = {}
    decisions: list[int | None] = [None] * len(keys)
    for n in sorted(at):
        for key in keys:
            experiment = key[0]
            if experiment not in stopped and n in looks[experiment] and n <= reached[experiment]:
                p_at[key].append(at[n].loc[key, "row_p"] if key in at[n].index else math.nan)
        decisions = holm_decisions([p_at[k] for k in keys], [looks[k[0]] for k in keys],
                                   rules.alpha, rules.spending)
        for experiment in looks:
            if experiment in stopped or n not in looks[experiment] or n > reached[experiment]:
                continue
            mine = [i for i, k in enumerate(keys) if k[0] == experiment]
            if n == looks[experiment][-1] or all(
                    decisions[i] is not None or at[n].loc[keys[i], "test"] == "out of regime"
                    for i in mine):
                stopped[experiment] = n
    return keys, looks, at, p_at, stopped, decisions


def complete_pairs(table: pd.DataFrame, policies: dict[str, int]) -> dict[str, int]:
    """experiment -> how many leading repetitions have an ok run of each of its
    `policies[experiment]` policies."""
    ok = table[table["status"] == "ok"][["experiment", "policy", "repetition"]].drop_duplicates()
    out = {}
    for experiment, count in policies.items():
        done = ok[ok["experiment"] == experiment].groupby("repetition")["policy"].nunique()
        n = 0
        while done.get(n, 0) >= count:
            n += 1
        out[experiment] = n
    return out


def stopped_experiments(table: pd.DataFrame, regimes: pd.DataFrame | None, baseline: str,
                        rules: VerdictRules, repetitions: dict[str, int],
                        policies: dict[str, int]) -> dict[str, int]:
    """For a sweep under a sequential rule: experiment -> the pairs it stopped at, for
    those the finished runs already stop (every row decided or out of regime at a look
    their complete pairs reach, or their last look reached)."""
    table = table[table["status"] == "ok"]
    if table.empty:
        return {}
    rows = reproduction(compare(table, baseline), table, regimes,
                        VerdictRules(**(rules.model_dump() | {"multiplicity": "none"})))
    if rows.empty:
        return {}
    return _walk(table, regimes, baseline, rules, rows.set_index(KEY).index, repetitions,
                 complete_pairs(table, policies))[4]


def replay(table: pd.DataFrame, regimes: pd.DataFrame | None, baseline: str,
           rules: VerdictRules, repetitions: dict[str, int],
           cpu_seconds: dict[str, float] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows, experiments): per reproduction row, its p at each look it reached, the look
    it was decided at and its verdict beside the fixed study's; per experiment, the
    runs (and gem5 CPU-hours, from `cpu_seconds` by run id) made and those the rule would
    have made. `repetitions`: each experiment's pairs."""
    if not rules.looks:
        raise ValueError("the study declares no looks ([verdicts] looks = [...])")
    table = table[table["status"] == "ok"]
    fixed = reproduction(compare(table, baseline), table, regimes, rules).set_index(KEY)
    walked = _walk(table, regimes, baseline, rules, fixed.index, repetitions, repetitions)
    keys, looks, at, p_at, stopped, decisions = walked
    rows = []
    for key, decided in zip(keys, decisions):
        experiment = key[0]
        seen = at[looks[experiment][decided]].loc[key] if decided is not None else \
            at[stopped[experiment]].loc[key]
        rows.append({**dict(zip(KEY, key)), "test": seen["test"], "looks": looks[experiment],
                     "p_at_looks": p_at[key], "stopped_at": stopped[experiment],
                     "decided_at": None if decided is None else looks[experiment][decided],
                     "sequential_verdict": _label(seen, decided is not None),
                     "fixed_verdict": short(fixed.loc[key, "verdict"])})
        rows[-1]["same"] = rows[-1]["sequential_verdict"] == rows[-1]["fixed_verdict"]
    experiments = []
    cost = cpu_seconds or {}
    for experiment, stop in stopped.items():
        runs = table[table["experiment"] == experiment][["run_id", "repetition"]].drop_duplicates()
        made = runs[runs["repetition"] < stop]
        experiments.append({"experiment": experiment, "looks": looks[experiment],
                            "stopped_at": stop, "runs_fixed": len(runs),
                            "runs_sequential": len(made),
                            "cpu_h_fixed": sum(cost.get(r, 0.0) for r in runs["run_id"]) / 3600,
                            "cpu_h_sequential": sum(cost.get(r, 0.0) for r in made["run_id"]) / 3600})
    return pd.DataFrame(rows), pd.DataFrame(experiments)


def replay_published(study, results, looks: tuple[int, ...], spending: str | None = None):
    """replay() over a study's published table and run.json files, at `looks`."""
    table = published_table(study, results)
    ids = set(table["run_id"])
    kept = [run for run in published_runs(published_dir(study.name, results), study.name)
            if run.record["run_id"] in ids]
    cpu = {run.record["run_id"]: (run.record.get("backend_info") or {}).get("cpu_seconds") or 0.0
           for run in kept}
    update = {"looks": tuple(looks)} | ({"spending": spending} if spending else {})
    rules = VerdictRules(**(study.verdicts.model_dump() | update))
    return replay(table, regime_checks(table, kept), study.baseline, rules,
                  {e.name: study.repetitions_of(e) for e in study.experiments}, cpu), rules


def format_replay(rows: pd.DataFrame, experiments: pd.DataFrame, rules: VerdictRules) -> str:
    lines = [f"looks {list(rules.looks or ())}, {rules.spending} spending, sequential Holm at "
             f"alpha {rules.alpha}", ""]
    for row in rows.to_dict("records"):
        ps = ", ".join("-" if p != p else f"{p:.3g}" for p in row["p_at_looks"])
        decided = row["decided_at"]
        at = f"decided at {int(decided)} pairs" if decided == decided and decided else "never decided"
        mark = "" if row["same"] else f"   (fixed: {row['fixed_verdict']})"
        lines.append(f"{row['experiment']}: {row['what'][:60]}\n    p at {list(row['looks'])}: "
                     f"[{ps}]; {at}, stopped at {row['stopped_at']}: "
                     f"{row['sequential_verdict']}{mark}")
    lines.append("")
    for e in experiments.to_dict("records"):
        lines.append(f"{e['experiment']:<20} stops at {e['stopped_at']:>2} pairs: "
                     f"{e['runs_sequential']:>3} of {e['runs_fixed']:>3} runs, "
                     f"{e['cpu_h_sequential']:6.1f} of {e['cpu_h_fixed']:6.1f} gem5 CPU-hours")
    total = experiments[["runs_sequential", "runs_fixed", "cpu_h_sequential", "cpu_h_fixed"]].sum()
    lines.append(f"{'all':<20}                 {int(total['runs_sequential']):>3} of "
                 f"{int(total['runs_fixed']):>3} runs, {total['cpu_h_sequential']:6.1f} of "
                 f"{total['cpu_h_fixed']:6.1f} gem5 CPU-hours; "
                 f"{int(rows['same'].sum())} of {len(rows)} verdicts the same")
    return "\n".join(lines)


def sequential_verdicts(seeds: pd.DataFrame, table: pd.DataFrame,
                        regimes: pd.DataFrame | None, study) -> pd.DataFrame:
    """The reproduction rows of a study that declares looks, judged as its sweep made
    them: each verdict from sequential Holm at the look it was decided at, or
    inconclusive at the experiment's last look, or still open."""
    rules = study.verdicts
    if seeds.empty or not rules.looks:
        return seeds
    ok = table[table["status"] == "ok"]
    experiments = {e.name: e for e in study.experiments}
    repetitions = {name: study.repetitions_of(e) for name, e in experiments.items()}
    reached = complete_pairs(ok, {name: len(e.policies) for name, e in experiments.items()})
    index = seeds.set_index(KEY).index
    keys, looks, at, _, stopped, decisions = _walk(ok, regimes, study.baseline, rules, index,
                                                   repetitions, reached)
    out = seeds.copy()
    for key, decided in zip(keys, decisions):
        row = (out["experiment"] == key[0]) & (out["what"] == key[1]) \
            & (out["backend"] == key[2]) & (out["system"] == key[3])
        experiment = key[0]
        if decided is not None:
            n = looks[experiment][decided]
            verdict = f"{_label(at[n].loc[key], True)} (decided at {n} pairs)"
        elif experiment in stopped:
            n = stopped[experiment]
            kind = _label(at[n].loc[key], False)
            why = "out of regime" if kind == "untestable" else "undecided"
            verdict = f"{kind} ({why} at {n} pairs, {'its last look' if n == looks[experiment][-1] else 'stopped'})"
        else:
            verdict = (f"open: undecided at {reached.get(experiment, 0)} of "
                       f"{looks[experiment][-1]} pairs")
        out.loc[row, "verdict"] = verdict
        out.loc[row, "looks"] = ", ".join(map(str, looks[experiment]))
    return out
