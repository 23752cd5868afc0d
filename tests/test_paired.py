"""Paired comparisons by repetition: known answers, and the verdict rule at its edges."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis.paired import paired


def test_pairs_are_matched_by_repetition_and_the_ratio_is_their_geometric_mean():
    with_ = {0: 2.0, 1: 4.0, 2: 9.0, 7: 100.0}      # repetition 7 has no partner
    without = {0: 4.0, 1: 4.0, 2: 3.0, 5: 1.0}
    result = paired(with_, without)
    assert result.n == 3 and result.by == "log ratio"
    logs = np.log([0.5, 1.0, 3.0])
    assert result.ratio == pytest.approx(math.exp(logs.mean()))
    assert result.p_value == pytest.approx(stats.ttest_1samp(logs, 0).pvalue)
    assert result.low < result.ratio < result.high


def test_a_consistent_halving_is_reproduced_for_a_seed_that_halved():
    with_ = {r: 1.0 + 0.01 * r for r in range(5)}
    without = {r: 2.0 + 0.03 * r for r in range(5)}
    result = paired(with_, without)
    assert result.high < 1
    assert result.verdict(seed_ratio=0.49) == "reproduced"
    assert result.verdict(seed_ratio=1.99) == "reversed"


def test_an_interval_across_no_effect_is_inconclusive_with_its_n():
    result = paired({0: 1.0, 1: 2.0, 2: 1.1}, {0: 1.1, 1: 1.0, 2: 1.2})
    assert result.low < 1 < result.high
    assert result.verdict(0.5).startswith("inconclusive (n=3")


def test_a_narrow_bootstrap_of_two_pairs_is_not_enough_without_the_paired_test():
    # Two pairs, ratios 0.25 and 0.5: every resample lies below 1, but the t-test on
    # two log ratios (one degree of freedom) cannot tell: p = 0.2.
    result = paired({0: 1.0, 1: 2.0}, {0: 4.0, 1: 4.0})
    assert result.high < 1 and result.p_value > 0.05
    assert result.verdict(0.5) == f"inconclusive (n=2, p={result.p_value:.2g})"


def test_one_pair_or_pairs_that_do_not_differ_conclude_nothing():
    assert paired({0: 1.0}, {0: 2.0}).verdict(0.5) == "inconclusive (n=1)"
    identical = paired({0: 1.0, 1: 1.0, 2: 1.0}, {0: 2.0, 1: 2.0, 2: 2.0})
    assert identical.ratio == 0.5 and not identical.spread
    assert identical.verdict(0.5) == "inconclusive (n=3, no spread between repetitions)"
    assert paired({}, {0: 1.0}).verdict(0.5) == "inconclusive (n=0)"


def test_zeros_fall_back_to_differences_with_no_effect_still_at_one():
    result = paired({0: 0.0, 1: 1.0, 2: 0.0, 3: 1.0}, {0: 10.0, 1: 12.0, 2: 9.0, 3: 11.0})
    assert result.by == "difference"
    assert result.ratio == pytest.approx(0.5 / 10.5)
    assert result.high < 1 and result.verdict(0.06) == "reproduced"
    # nothing at all without the change: only the sign tells
    grown = paired({0: 3.0, 1: 5.0, 2: 4.0}, {0: 0.0, 1: 0.0, 2: 0.0})
    assert grown.ratio == math.inf and grown.low == math.inf
    assert grown.verdict(2.0) == "reproduced" and grown.verdict(0.5) == "reversed"


def test_the_interval_is_the_same_every_time():
    values = ({r: 1.0 + r % 3 for r in range(6)}, {r: 2.0 + r % 2 for r in range(6)})
    assert paired(*values) == paired(*values)


def test_where_the_seed_expects_no_effect_equal_pairs_agree_and_a_clear_change_does_not():
    equal = paired({0: 1.0, 1: 0.0, 2: 2.0}, {0: 1.0, 1: 0.0, 2: 2.0})
    assert equal.verdict_of_no_effect() == "no effect found, as expected"
    across = paired({0: 1.0, 1: 2.0, 2: 1.1}, {0: 1.1, 1: 1.0, 2: 1.2})
    assert across.verdict_of_no_effect() == "no effect found, as expected"
    halved = paired({r: 1.0 + 0.01 * r for r in range(5)}, {r: 2.0 + 0.03 * r for r in range(5)})
    assert halved.verdict_of_no_effect() == "an effect where none is expected"
    assert paired({0: 1.0}, {0: 2.0}).verdict_of_no_effect() == "inconclusive (n=1)"


def test_a_ratio_of_counts_with_zeros_keeps_its_interval_at_or_above_zero():
    # Every run with the change at 0 (MGLRU's faults in the file server): the ratio is 0
    # and so is all of its interval; an interval of the mean difference over the mean
    # without would reach below 0 (1 - 50/26).
    none = paired({r: 0.0 for r in range(5)}, {0: 20.0, 1: 30.0, 2: 25.0, 3: 5.0, 4: 50.0})
    assert (none.ratio, none.low, none.high) == (0.0, 0.0, 0.0)
    assert none.by == "difference" and none.spread and none.verdict(0.06) == "reproduced"
    some = paired({0: 0.0, 1: 4.0, 2: 1.0, 3: 0.0, 4: 2.0}, {r: 10.0 + r for r in range(5)})
    assert 0 <= some.low < some.ratio < some.high < 1


def test_resamples_with_nothing_without_the_change_make_the_interval_open_above(recwarn):
    result = paired({0: 1.0, 1: 2.0, 2: 3.0}, {0: 0.0, 1: 4.0, 2: 0.0})
    assert result.ratio == 1.5 and result.low < 1 and result.high == math.inf
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
