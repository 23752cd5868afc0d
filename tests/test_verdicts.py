"""A study's verdicts as a family: multiplicity adjustment, the interval at each verdict's
level, equivalence and out-of-regime rows, and the study file's [verdicts] table."""

import math

import numpy as np
import pandas as pd
import pytest

from analysis.paired import EQUIVALENT, paired
from analysis.verdicts import OUT_OF_REGIME, adjust, confidences, explained, judge, untestable
from reclaimstudy.config.verdict_rules import VerdictRules, verdict_rules
from reclaimstudy.errors import StudyError


def test_holm_and_benjamini_hochberg_adjust_as_written():
    p = [0.01, 0.04, 0.03, 0.005, math.nan]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
    # then never smaller than the one before: 0.02, 0.03, 0.06, 0.06
    assert adjust(p, "holm")[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: times 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04, never larger than the next
    assert adjust(p, "bh")[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "none")[:4] == p[:4]
    assert all(math.isnan(a[4]) for a in (adjust(p, m) for m in ("holm", "bh", "none")))
    # Holm's k-th smallest p is judged at alpha / (m - k + 1): its interval's level
    assert confidences(p, adjust(p, "holm"), "holm", 0.05)[:4] == pytest.approx(
        [1 - 0.05 / 3, 1 - 0.05 / 1, 1 - 0.05 / 2, 1 - 0.05 / 4])


def _row(seed_ratio=0.5, expects_none=False, untestable=None, experiment="e"):
    return {"seed_ratio": seed_ratio, "expects_none": expects_none, "untestable": untestable,
            "experiment": experiment}


def test_a_verdict_uses_the_adjusted_p_and_its_interval_agrees():
    rng = np.random.default_rng(3)
    for _ in range(60):
        m = int(rng.integers(2, 12))
        pairs, rows = [], []
        for _ in range(m):
            n = int(rng.integers(3, 11))
            without = rng.lognormal(2, 0.3, n)
            with_ = without * np.exp(rng.normal(rng.uniform(-0.4, 0.4), 0.15, n))
            pairs.append(paired(dict(enumerate(with_)), dict(enumerate(without))))
            rows.append(_row())
        for method in ("holm", "bh", "none"):
            judged = judge(rows, pairs, VerdictRules(multiplicity=method))
            for row, _pair in zip(judged, pairs):
                decided = not row["verdict"].startswith("inconclusive")
                assert decided == (row["adjusted_p"] < 0.05)
                excludes = not row["adjusted_low"] <= 1 <= row["adjusted_high"]
                # the interval at a level excludes 1 exactly when the row's own test
                # rejects at that level, so a decided row's interval excludes 1
                assert excludes == (row["row_p"] < 1 - row["adjusted_confidence"]), row
                if decided:
                    assert excludes, (method, row)
                assert row["family"] == m


def test_holm_turns_a_lone_significant_row_inconclusive_among_many():
    lone = paired(dict(enumerate([0.85, 0.95, 0.9, 1.0, 0.88])), {r: 1.0 for r in range(5)})
    assert 0.005 < lone.p_value < 0.05
    alone = judge([_row()], [lone], VerdictRules())[0]
    assert alone["verdict"] == "reproduced"
    null = [paired({r: 1.0 + 0.05 * ((r + k) % 3 - 1) for r in range(5)},
                   {r: 1.0 for r in range(5)}) for k in range(9)]
    among = judge([_row()] * 10, [lone] + null, VerdictRules())[0]
    # the smallest of ten p-values (the others 0.6-0.97) is judged at alpha / 10
    assert among["adjusted_p"] == pytest.approx(10 * lone.p_value)
    assert among["verdict"].startswith("inconclusive") and among["row_p"] == lone.p_value


def test_equivalence_rows_join_the_family_with_their_tost_p():
    equal = paired({r: 3.0 + r for r in range(5)}, {r: 3.0 + r for r in range(5)})
    wide = paired({0: 1.0, 1: 2.0, 2: 1.1}, {0: 1.1, 1: 1.0, 2: 1.2})
    out = judge([_row(0.06, True), _row(0.06, True)], [equal, wide], VerdictRules())
    assert out[0]["verdict"] == EQUIVALENT and out[0]["test"] == "equivalence (TOST, ±10%)"
    assert out[1]["verdict"].startswith("inconclusive (n=3, equivalence p=")
    assert out[1]["row_p"] == pytest.approx(wide.equivalence_p(0.10))
    narrow = judge([_row(0.06, True)], [wide], VerdictRules(equivalence_margin=1.0))[0]
    assert narrow["row_p"] < out[1]["row_p"]  # a wider margin is easier to meet


def test_a_row_out_of_regime_in_every_run_is_untestable_and_leaves_the_family():
    checks = pd.DataFrame({"in_regime": [False] * 5, "why": ["a file that thrashes."] * 5})
    why = untestable(checks)
    assert why == f"{OUT_OF_REGIME} (5 of 5 short: a file that thrashes)"
    assert untestable(checks.assign(in_regime=[True] + [False] * 4)) is None
    assert untestable(None) is None and untestable(checks.iloc[:0]) is None
    strong = paired({r: 0.5 + 0.01 * r for r in range(5)}, {r: 1.0 for r in range(5)})
    out = judge([_row(untestable=why), _row()], [strong, strong], VerdictRules())
    assert out[0]["verdict"] == why and math.isnan(out[0]["adjusted_p"])
    assert out[1]["family"] == 1 and out[1]["adjusted_p"] == strong.p_value


def test_a_study_says_why_an_untestable_row_cannot_occur_on_6_1_and_a_contradiction_shows():
    checks = pd.DataFrame({"in_regime": [False] * 5, "why": ["a file that thrashes"] * 5})
    strong = paired({r: 0.5 + 0.01 * r for r in range(5)}, {r: 1.0 for r in range(5)})
    rows = judge([_row(experiment="thrash", untestable=untestable(checks)),
                  _row(experiment="thrash", untestable=None), _row(experiment="control")],
                 [strong] * 3, VerdictRules())
    notes = {"thrash": "the distance counts all anon. The control carries it."}
    out = explained(rows, notes)
    assert out[0]["verdict"].startswith(OUT_OF_REGIME)
    assert out[0]["verdict"].endswith("; on Linux 6.1: the distance counts all anon. "
                                      "The control carries it")
    assert out[1]["verdict"].startswith(rows[1]["verdict"]) and \
        "against the study's reason it cannot occur on 6.1" in out[1]["verdict"]
    assert out[2] == rows[2] and explained(rows, {}) == rows


def test_the_study_files_verdicts_table_is_checked_naming_key_value_and_what_is_allowed():
    rules = verdict_rules({"multiplicity": "bh", "looks": [3, 5, 10]}, "s.toml")
    assert rules.multiplicity == "bh" and rules.looks == (3, 5, 10) and rules.alpha == 0.05
    assert verdict_rules(None, "s.toml") == VerdictRules()
    for table, message in (
            ({"multiplicity": "bonferroni"}, r"s.toml \[verdicts\]: multiplicity = 'bonferroni'; "
                                             r"allowed: holm, bh, none"),
            ({"alpha": 1.5}, r"alpha = 1.5; allowed: a number between 0 and 1"),
            ({"looks": [5, 3]}, r"looks = \[5, 3\]; allowed: a list of increasing"),
            ({"looks": [1, 3]}, r"the first at least 2"),
            ({"spending": "haybittle"}, r"allowed: obrien-fleming, pocock"),
            ({"equivalence_margin": 0}, r"equivalence_margin = 0; allowed: a relative margin"),
            ({"margin": 0.1}, r"unknown key\(s\) margin; allowed: alpha, equivalence_margin, "
                              r"looks, multiplicity, spending")):
        with pytest.raises(StudyError, match=message):
            verdict_rules(table, "s.toml")
