"""Group-sequential looks: the boundaries spend alpha as declared, the rule's false
verdicts stay at or under alpha (Monte Carlo, from a stream of its own), and its replay
over the published seeds-gem5 pairs."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from analysis.sequential import SIMULATIONS, holm_decisions, nominal_levels, spent

LOOKS = (3, 5, 10)


def _running_p(draws: np.ndarray, looks) -> np.ndarray:
    """The paired t-test's p at each look over rows of normal log ratios."""
    out = []
    for n in looks:
        part = draws[:, :n]
        t = part.mean(axis=1) / (part.std(axis=1, ddof=1) / math.sqrt(n))
        out.append(2 * stats.t.sf(np.abs(t), n - 1))
    return np.stack(out, axis=1)


@pytest.mark.parametrize("kind", ["obrien-fleming", "pocock"])
def test_each_look_spends_what_the_spending_function_allows(kind):
    levels = nominal_levels(LOOKS, 0.05, kind)
    p = _running_p(np.random.default_rng(11).standard_normal((200_000, 10)), LOOKS)
    alive = np.ones(len(p), dtype=bool)
    for k, n in enumerate(LOOKS):
        crossed = alive & (p[:, k] < levels[k])
        expected = spent(kind, n / 10, 0.05) - (spent(kind, LOOKS[k - 1] / 10, 0.05) if k else 0)
        # an independent stream: within 4 standard errors of the increment
        assert abs(crossed.mean() - expected) < 4 * math.sqrt(expected / 200_000) + 1e-5
        alive &= ~crossed
    if kind == "obrien-fleming":   # spends almost nothing early, nearly alpha at the end
        assert levels[0] < 0.001 < levels[1] < 0.01 < 0.04 < levels[2] < 0.05
    else:
        assert all(0.01 < level < 0.03 for level in levels)


@pytest.mark.parametrize("kind", ["obrien-fleming", "pocock"])
@pytest.mark.parametrize("looks", [(3, 5, 10), (3, 5), (2, 4, 6)])
def test_under_no_effect_one_rows_false_verdicts_stay_at_or_under_alpha(kind, looks):
    trials = 100_000
    p = _running_p(np.random.default_rng(sum(looks)).standard_normal((trials, looks[-1])), looks)
    false = (p < np.array(nominal_levels(looks, 0.05, kind))).any(axis=1).mean()
    # at or under alpha, give or take three standard errors of the simulation (0.0021)
    assert false <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    # and not far under it: the boundaries spend what they may
    assert false >= 0.05 - 3 * math.sqrt(0.05 * 0.95 / trials) - 0.05 * 3 / math.sqrt(SIMULATIONS)


def test_under_no_effect_sequential_holm_keeps_the_familys_false_verdicts_under_alpha():
    rng = np.random.default_rng(5)
    trials, false = 3000, 0
    looks = [LOOKS, LOOKS, (3, 5), (3, 5)]
    for _ in range(trials):
        p_at = [list(_running_p(rng.standard_normal((1, ls[-1])), ls)[0]) for ls in looks]
        false += any(d is not None for d in holm_decisions(p_at, looks, 0.05, "obrien-fleming"))
    assert false / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


def test_holm_gives_a_decided_rows_share_of_alpha_to_the_others():
    # alone, 0.015 at the last look is decided (under 0.046); beside a row at 0.3 it is
    # judged at alpha / 2 (last-look level ~0.022) and still decided; beside three rows
    # at 0.3 it is not (alpha / 4: ~0.0115)
    solo = [[0.5, 0.2, 0.015]]
    assert holm_decisions(solo, [LOOKS], 0.05, "obrien-fleming") == [2]
    assert holm_decisions(solo + [[0.5, 0.4, 0.3]], [LOOKS] * 2, 0.05, "obrien-fleming") == [2, None]
    assert holm_decisions(solo + [[0.5, 0.4, 0.3]] * 3, [LOOKS] * 4, 0.05,
                          "obrien-fleming") == [None] * 4
    # a row decided early frees alpha for one that needs it: 1e-7 at 3 pairs is decided at
    # alpha / 2, after which 0.03 at the last look is judged at alpha (0.046)
    assert holm_decisions([[1e-7], [0.5, 0.3, 0.03]], [(3, 5), LOOKS], 0.05,
                          "obrien-fleming") == [0, 2]
    assert holm_decisions([[math.nan]], [(3, 5)], 0.05, "pocock") == [None]


PUBLISHED = Path(__file__).resolve().parents[1] / "results" / "published" / "seeds-gem5"


@pytest.mark.skipif(not (PUBLISHED / "report" / "table.parquet").is_file(),
                    reason="the published seeds-gem5 table is not in this checkout")
def test_replayed_over_the_published_pairs_the_rule_saves_runs_and_keeps_every_verdict():
    from analysis.sequential_replay import replay_published
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.paths import RESULTS

    (rows, experiments), _ = replay_published(load_study("seeds-gem5"), RESULTS, LOOKS,
                                              "obrien-fleming")
    assert rows["same"].all(), rows[~rows["same"]].to_dict("records")
    stops = dict(zip(experiments["experiment"], experiments["stopped_at"]))
    # Expected from the rule, by the published p-values at each look (report.md's table
    # and `./study pairs`): ebizzy's one-thread 1.46x is p < 1e-4 at 3 pairs, under even
    # alpha/16's first level, but its two-thread row (p 1.4e-4 at 3 pairs) is decided only
    # at 5, so ebizzy stops at 5; thrash is out of regime in every run at
    # its first look, so more runs cannot make it testable; file-server-T0.01's pairs
    # are equal in every repetition (TOST p = 0), but O'Brien-Fleming spends nothing
    # at 3 of 10 pairs at alpha/16 (level 0), so it stops at 5; every other experiment
    # keeps a row undecided until its last look (the desktop's faults, the file
    # server's T = 0.6 s seed row, make-grep's grep, thrash-control are inconclusive
    # at the end; T = 0.1 s's seed row is decided only at 10).
    assert stops == {"ebizzy": 5, "thrash": 3, "file-server-T0.01": 5, "make-grep": 5,
                     "iozone-mmap": 5, "thrash-control": 5, "file-server-T0.25": 10,
                     "file-server-T0.1": 10, "desktop": 10, "file-server-T0.6": 10}
    # 3 policies x 2 pairs saved for thrash, 4 x 5 for T = 0.01 s
    assert experiments["runs_fixed"].sum() == 275
    assert experiments["runs_sequential"].sum() == 275 - 6 - 20


@pytest.mark.skipif(not (PUBLISHED / "report" / "table.parquet").is_file(),
                    reason="the published seeds-gem5 table is not in this checkout")
def test_a_sequential_studys_report_says_the_look_each_verdict_was_decided_at():
    import dataclasses

    from analysis.compare import compare
    from analysis.published import published_table
    from analysis.regimes import regime_checks
    from analysis.seeds import reproduction
    from analysis.sequential_replay import sequential_verdicts
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.paths import RESULTS
    from reclaimstudy.results.record import published_runs

    study = load_study("seeds-gem5")
    sequential = dataclasses.replace(study, verdicts=study.verdicts.model_copy(
        update={"looks": LOOKS}))
    table = published_table(study, RESULTS)
    # as a sweep under the rule would have left it: ebizzy's r3-r4 never made
    table = table[~((table["experiment"] == "ebizzy") & (table["repetition"] >= 3))]
    ids = set(table["run_id"])
    kept = [run for run in published_runs(PUBLISHED, study.name) if run.record["run_id"] in ids]
    regimes = regime_checks(table, kept)
    rows = sequential_verdicts(reproduction(compare(table, study.baseline), table, regimes,
                                            study.verdicts), table, regimes, sequential)
    verdicts = dict(zip(rows["experiment"] + ": " + rows["metric"], rows["verdict"]))
    assert verdicts["ebizzy: records_per_s"] == "reproduced (decided at 3 pairs)"
    assert verdicts["thrash: late_rounds_mean_s"] == "untestable (out of regime at 3 pairs, stopped)"
    assert verdicts["make-grep: grep_s"] == "inconclusive (undecided at 5 pairs, its last look)"
    assert verdicts["desktop: pgmajfault"] == "inconclusive (undecided at 10 pairs, its last look)"
