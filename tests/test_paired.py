"""Paired comparisons by repetition: known answers, and the verdict rule at its edges."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis.paired import EQUIVALENT, paired


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


def test_two_pairs_below_one_are_not_enough_when_the_paired_test_cannot_tell():
    # Two pairs, ratios 0.25 and 0.5: both lie below 1, but the t-test on two log ratios
    # (one degree of freedom) cannot tell (p = 0.2), and the interval, made to match the
    # test, holds 1 (a percentile bootstrap of the two put it wholly below).
    result = paired({0: 1.0, 1: 2.0}, {0: 4.0, 1: 4.0})
    assert result.low < 1 < result.high and result.p_value > 0.05
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


def test_no_effect_needs_equivalence_not_a_failure_to_reject():
    equal = paired({0: 1.0, 1: 0.0, 2: 2.0}, {0: 1.0, 1: 0.0, 2: 2.0})
    assert equal.verdict_of_no_effect() == EQUIVALENT
    # ratios 0.91, 2.0, 0.92: the t-test cannot reject no effect, but neither can the
    # data bound the ratio within 10%: inconclusive, not "no effect"
    across = paired({0: 1.0, 1: 2.0, 2: 1.1}, {0: 1.1, 1: 1.0, 2: 1.2})
    assert across.p_value > 0.05 and across.equivalence_p(0.10) > 0.05
    assert across.verdict_of_no_effect().startswith("inconclusive (n=3, equivalence p=")
    # ten tight pairs around 1.02: equivalent within 10%; beyond a 1% margin, an effect
    tight = paired({r: 1.02 * (10 + r) * (1 + 0.003 * (-1) ** r) for r in range(10)},
                   {r: 10.0 + r for r in range(10)})
    assert tight.equivalence_p(0.10) < 1e-6 and tight.verdict_of_no_effect(0.10) == EQUIVALENT
    assert tight.verdict_of_no_effect(0.01) == "an effect where none is expected"
    assert tight.verdict_of_no_effect(0.02).startswith("inconclusive")
    halved = paired({r: 1.0 + 0.01 * r for r in range(5)}, {r: 2.0 + 0.03 * r for r in range(5)})
    assert halved.verdict_of_no_effect() == "an effect where none is expected"
    assert paired({0: 1.0}, {0: 2.0}).verdict_of_no_effect() == "inconclusive (n=1)"


def test_equivalence_is_the_two_one_sided_tests_at_the_margin():
    logs = np.array([0.01, -0.03, 0.05, 0.02, -0.01])
    result = paired({r: math.exp(x) for r, x in enumerate(logs)}, {r: 1.0 for r in range(5)})
    low, high = math.log(1 / 1.1), math.log(1.1)
    expected = max(stats.ttest_1samp(logs - low, 0, alternative="greater").pvalue,
                   stats.ttest_1samp(logs - high, 0, alternative="less").pvalue)
    assert result.equivalence_p(0.10) == pytest.approx(expected)
    # TOST at level a is the (1 - 2a) interval inside the margin
    inside = 1 / 1.1 < result.interval(0.90)[0] and result.interval(0.90)[1] < 1.1
    assert inside == (expected < 0.05)


@pytest.mark.parametrize("zeros", [False, True])
def test_the_interval_excludes_one_exactly_when_the_paired_test_rejects(zeros):
    rng = np.random.default_rng(7)
    disagreements, rejected = 0, 0
    for _ in range(400):
        n = int(rng.integers(2, 11))
        if zeros:   # counts, some zero: the ratio of means with Fieller's interval
            a, b = rng.poisson(rng.uniform(0.5, 3), n), rng.poisson(rng.uniform(0.5, 3), n)
            if b.sum() == 0:
                continue
        else:
            b = rng.lognormal(2, 0.4, n)
            a = b * np.exp(rng.normal(rng.uniform(-0.3, 0.3), 0.2, n))
        result = paired(dict(enumerate(a)), dict(enumerate(b)))
        if math.isnan(result.p_value):
            continue
        assert result.by == ("difference" if zeros and (a == 0).any() or (b == 0).any()
                             else result.by)
        excludes = not result.low <= 1 <= result.high
        rejected += result.p_value < 0.05
        # equal within rounding at the boundary only
        disagreements += excludes != (result.p_value < 0.05) and abs(result.p_value - 0.05) > 1e-9
    assert disagreements == 0 and rejected > 20


def _coverage(draw, truth: float, n: int, trials: int) -> float:
    hits = 0
    for _ in range(trials):
        a, b = draw(n)
        result = paired(dict(enumerate(a)), dict(enumerate(b)))
        hits += result.low <= truth <= result.high
    return hits / trials


@pytest.mark.parametrize("n", [3, 5, 10])
def test_the_printed_95_percent_interval_covers_the_true_ratio_93_to_97_percent(n):
    """Monte Carlo: pairs drawn from known distributions, the true ratio known."""
    rng = np.random.default_rng(20261206 + n)
    trials = 3000   # the coverage's standard error: 0.4 points

    def normal(n):       # log ratios normal around log 0.8
        without = rng.lognormal(3, 0.5, n)
        return without * np.exp(math.log(0.8) + rng.normal(0, 0.1, n)), without

    def skewed(n):       # right-skewed run times (gamma), a shared part and each arm's own
        shared = rng.gamma(2, 10, n)
        return 0.8 * shared * rng.gamma(8, 1 / 8, n), shared * rng.gamma(8, 1 / 8, n)

    def counts(n):       # counts with zeros (Poisson): the ratio of means, Fieller
        level = rng.uniform(2, 6, n)
        return rng.poisson(0.5 * level), rng.poisson(level)

    for name, draw, truth in (("normal", normal, 0.8), ("skewed", skewed, 0.8),
                              ("counts", counts, 0.5)):
        covered = _coverage(draw, truth, n, trials)
        assert 0.93 <= covered <= 0.97, f"{name}, n={n}: covered {covered:.3f}"


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
