"""CPU-hours per decided verdict, before (fixed pairs, timing CPU) and after (a
sequential rule's looks, and a ladder's cheaper CPU where it may stand in)."""

import pandas as pd
import pytest

from analysis.verdict_cost import format_cost, totals, verdict_cost


def _rows(*rows):
    return pd.DataFrame([{"experiment": e, "fixed_verdict": f, "sequential_verdict": s,
                          "same": f == s} for e, f, s in rows])


def _experiments(*experiments):
    return pd.DataFrame([{"experiment": e, "runs_fixed": rf, "runs_sequential": rs,
                          "cpu_h_fixed": hf, "cpu_h_sequential": hs}
                         for e, rf, rs, hf, hs in experiments])


ROWS = _rows(("ebizzy", "reproduced", "reproduced"),
             ("desktop", "reversed", "reversed"), ("desktop", "inconclusive", "inconclusive"),
             ("thrash", "untestable", "untestable"), ("make-grep", "equivalent", "equivalent"))
EXPERIMENTS = _experiments(("ebizzy", 15, 9, 1.2, 0.72), ("desktop", 40, 40, 30.0, 30.0),
                           ("thrash", 15, 9, 3.0, 1.8), ("make-grep", 15, 15, 5.0, 5.0))


def _ladder(experiment, may, speed_up, rows=1):
    return pd.DataFrame([{"experiment": experiment, "may_stand_in": may, "speed_up": speed_up}
                         for _ in range(rows)])


def test_a_rung_that_may_stand_in_divides_its_experiments_sequential_cost_by_its_speed_up():
    ladder = pd.concat([_ladder("make-grep", True, 2.0), _ladder("ebizzy", False, 1.3, rows=2)])
    cost = verdict_cost(ROWS, EXPERIMENTS, ladder).set_index("experiment")
    assert cost.loc["make-grep", "cpu_h_after"] == pytest.approx(2.5)
    assert cost.loc["make-grep", "cpu"] == "cheaper rung"
    # ebizzy's rung may not stand in: only the looks save
    assert cost.loc["ebizzy", "cpu_h_after"] == pytest.approx(0.72)
    assert cost.loc["ebizzy", "cpu"] == "timing"
    # inconclusive and untestable rows are not decided
    assert cost["decided_fixed"].to_dict() == {"ebizzy": 1, "desktop": 1, "thrash": 0,
                                               "make-grep": 1}
    t = totals(cost.reset_index())
    assert t["cpu_h_fixed"] == pytest.approx(39.2) and t["decided_fixed"] == 3
    assert t["cpu_h_after"] == pytest.approx(0.72 + 30.0 + 1.8 + 2.5)
    assert t["factor"] == pytest.approx((39.2 / 3) / (35.02 / 3))
    assert t["same_verdicts"]
    assert "1.12x fewer CPU-hours per decided verdict" in format_cost(cost.reset_index())


def test_a_rung_stands_in_only_where_every_row_of_its_experiment_allows_it():
    ladder = pd.DataFrame([{"experiment": "desktop", "may_stand_in": True, "speed_up": 3.0},
                           {"experiment": "desktop", "may_stand_in": False, "speed_up": 3.0}])
    cost = verdict_cost(ROWS, EXPERIMENTS, ladder).set_index("experiment")
    assert cost.loc["desktop", "cpu_h_after"] == pytest.approx(30.0)


def test_a_verdict_the_rule_changes_is_said_and_counted_as_what_it_became():
    rows = _rows(("ebizzy", "reproduced", "inconclusive"))
    cost = verdict_cost(rows, _experiments(("ebizzy", 15, 9, 1.2, 0.72)), pd.DataFrame())
    [c] = cost.to_dict("records")
    assert (c["decided_fixed"], c["decided_after"], c["same_verdicts"]) == (1, 0, False)
    assert "(a verdict changed)" in format_cost(cost)
    assert "every verdict the same: no" in format_cost(cost)


def test_the_ladder_command_prices_the_published_study_from_its_own_run_records(capsys):
    import json

    from reclaimstudy.cli import main
    from reclaimstudy.paths import REPO

    assert main(["ladder", "ladder", "--published", "--looks", "3,5,10"]) == 0
    out = capsys.readouterr().out
    total = sum(json.loads(p.read_text())["backend_info"]["cpu_seconds"]
                for p in (REPO / "results/published/seeds-gem5").glob("*/run.json")) / 3600
    line = next(x for x in out.splitlines() if x.startswith("all: "))
    # before: every published run's CPU time; after: fewer, every verdict the same
    assert line.startswith(f"all: {total:.1f} gem5 CPU-hours for ")
    before, after = (float(x.split(" each")[0]) for x in line.split("(")[1:3])
    assert after < before and line.endswith("every verdict the same: yes")
    # ebizzy's rung was published outside the timing CPU's interval: it may not stand in
    assert any(x.startswith("ebizzy") and " timing " in x for x in out.splitlines())
