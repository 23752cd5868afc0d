"""Paired comparisons: runs of two policies with the same repetition are a pair (they
share the repetition's seed and so its perturbation), as Alameldeen and Wood compare
simulations. Per pair the ratio with / without; its geometric mean, a bootstrap
confidence interval over the pairs, and a paired t-test on the log ratios. Where a
value is zero (a count that did not move) ratios cannot be logged: the ratio shown is
that of the means, its interval from resampling the pairs, and the test is on the pairs'
differences.

The verdict against a seed: "reproduced" when the whole interval lies on the seed's
side of no effect, "reversed" when it lies on the other side, "inconclusive (n=..)"
otherwise; with fewer than two pairs, or pairs that do not differ at all (nothing
varied between repetitions), nothing can be concluded. Where the seed itself expects no
effect (seed 000b's idle time outside its window), pairs that are all equal or an
interval holding 1 are "no effect found, as expected", and one excluding 1 "an effect
where none is expected". A percentile bootstrap over two
or three pairs has only a handful of distinct resamples and its interval is too
narrow, so a verdict also needs the paired t-test to agree (p < ALPHA).
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
ALPHA = 0.05
RESAMPLES = 10_000
SEED = 20261123  # the bootstrap's own random stream: the same table, the same interval
NO_EFFECT_AS_EXPECTED = "no effect found, as expected"
EFFECT_NOT_EXPECTED = "an effect where none is expected"


@dataclass(frozen=True)
class Paired:
    n: int
    ratio: float                 # geometric mean of the pair ratios (or ratio of means)
    low: float                   # the interval, on the ratio scale
    high: float
    p_value: float               # paired t-test (log ratios, or differences)
    by: str                      # "log ratio" or "difference"
    spread: bool                 # whether the pairs differ at all
    # By difference only (a zero in some pair, where a ratio may say only the sign): the
    # pairs' mean difference (with - without) and its 95% bootstrap interval.
    difference: tuple[float, float, float] | None = None

    def verdict(self, seed_ratio: float) -> str:
        """Against a seed's own ratio (with / without)."""
        if self.n < 2 or not self.spread or math.isnan(self.low):
            why = "no spread between repetitions" if self.n >= 2 and not self.spread else ""
            return f"inconclusive (n={self.n}{', ' + why if why else ''})"
        if not self.p_value < ALPHA:
            return f"inconclusive (n={self.n}, p={self.p_value:.2g})"
        seed_lower = seed_ratio < 1
        if self.high < 1 if seed_lower else self.low > 1:
            return "reproduced"
        if self.low > 1 if seed_lower else self.high < 1:
            return "reversed"
        return f"inconclusive (n={self.n})"

    def judged(self, seed_ratio: float, expects_none: bool) -> str:
        """The verdict against the seed's ratio, or against no effect where the seed
        expects none."""
        return self.verdict_of_no_effect() if expects_none else self.verdict(seed_ratio)

    def verdict_of_no_effect(self) -> str:
        """Where the seed itself expects no effect (seed 000b's idle time outside its
        window): none found when the interval holds 1 and the test does not object (or
        every pair is equal), an effect when both exclude it."""
        if self.n < 2 or math.isnan(self.low):
            return f"inconclusive (n={self.n})"
        holds_one = self.low <= 1 <= self.high
        if holds_one and not self.p_value < ALPHA:
            return NO_EFFECT_AS_EXPECTED
        if not holds_one and self.p_value < ALPHA:
            return EFFECT_NOT_EXPECTED
        return f"inconclusive (n={self.n}, p={self.p_value:.2g})"


def pairs(with_values: dict, without_values: dict) -> tuple[np.ndarray, np.ndarray]:
    """Values of the repetitions both sides have, in repetition order."""
    common = sorted(set(with_values) & set(without_values))
    return (np.array([with_values[r] for r in common], dtype=float),
            np.array([without_values[r] for r in common], dtype=float))


def _interval(samples: np.ndarray, statistic) -> tuple[float, float]:
    if len(samples) < 2 or np.all(samples == samples[0]):
        value = float(statistic(samples))
        return value, value
    return _bootstrap((samples,), statistic)


def _bootstrap(data: tuple, statistic, paired: bool = False) -> tuple[float, float]:
    """The percentile interval of `statistic` over resamples of `data` (of the pairs
    together when `paired`), from the bootstrap's own random stream."""
    # A ratio of means is infinite in resamples with nothing without the change, so the
    # bootstrap's own standard error (not used here) is not a number; the percentiles are.
    with np.errstate(invalid="ignore"):
        result = stats.bootstrap(data, statistic, paired=paired, confidence_level=CONFIDENCE,
                                 n_resamples=RESAMPLES, method="percentile",
                                 random_state=np.random.default_rng(SEED))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _p(samples: np.ndarray) -> float:
    if len(samples) < 2 or np.all(samples == samples[0]):
        return math.nan
    return float(stats.ttest_1samp(samples, 0.0).pvalue)


def paired(with_values: dict, without_values: dict) -> Paired:
    """`with_values`, `without_values`: repetition -> value of one metric."""
    a, b = pairs(with_values, without_values)
    n = len(a)
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan, "log ratio", False)
    if np.all(a > 0) and np.all(b > 0):
        logs = np.log(a / b)
        low, high = _interval(logs, np.mean)
        return Paired(n, float(np.exp(logs.mean())), math.exp(low), math.exp(high), _p(logs),
                      "log ratio", bool(n > 1 and np.ptp(logs) > 0))
    # A zero somewhere: the ratio of the means, its interval from resampling the pairs
    # (a ratio of means never goes below 0, as an interval of the mean difference over
    # the "without" mean could: every MGLRU run at 0 faults gave [-0.3, 0.4]); the test
    # is on the differences.
    differences = a - b
    spread = bool(n > 1 and np.ptp(differences) > 0)
    difference_low, difference_high = _interval(differences, np.mean)
    if b.mean() > 0:
        ratio = float(a.mean() / b.mean())
        low, high = _bootstrap((a, b), _ratio_of_means, paired=True) if spread else (ratio, ratio)
    else:  # nothing without the change: only the sign of the difference means anything
        ratio = math.inf if a.mean() > 0 else 1.0
        low, high = (_sign_as_ratio(difference_low), _sign_as_ratio(difference_high))
    return Paired(n, ratio, low, high, _p(differences), "difference", spread,
                  (float(differences.mean()), difference_low, difference_high))


def _sign_as_ratio(difference: float) -> float:
    """Against nothing, a difference's sign is all a ratio can say: inf, 1 or -inf."""
    return math.inf if difference > 0 else (1.0 if difference == 0 else -math.inf)


def _ratio_of_means(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """mean(a) / mean(b) per resample; a resample with nothing on either side is no
    effect (1), one with nothing only without the change infinite."""
    top, bottom = np.mean(a, axis=axis), np.mean(b, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1),
                        np.where(top > 0, np.inf, 1.0))
