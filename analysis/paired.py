"""Paired comparisons: runs of two policies with the same repetition are a pair (they
share the repetition's seed and so its perturbation), as Alameldeen and Wood compare
simulations.

Per pair the ratio with / without. Where every value is positive: the geometric mean of
the pairs' ratios, a paired t-test on the log ratios, and the t-interval of the mean log
ratio, so the interval excludes 1 exactly when the test rejects at the same level. Where
a value is zero (a count that did not move) ratios cannot be logged: the ratio shown is
that of the means, the test is the paired t-test on the differences, and the interval is
Fieller's for a ratio of paired means (the ratios theta for which the t-test of
`with - theta * without` does not reject), which again excludes 1 exactly when the test
does. No bootstrap: over five pairs a percentile bootstrap has 126 distinct resamples
and covers well under its nominal level.

Against a seed: "reproduced" when the test rejects no effect and the ratio lies on the
seed's side of 1, "reversed" on the other side, otherwise inconclusive. Where the seed
expects no effect (seed 000b's idle time outside its window) a failure to reject is not
evidence: the row is "equivalent" only when two one-sided tests (TOST) put the ratio
inside a declared margin, [1 / (1 + m), 1 + m]. The level a row is judged at may be
lowered for the rows it stands among (analysis/verdicts.py).
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
ALPHA = 0.05
# An equivalence margin of +-10% on the ratio, for rows whose seed expects no effect and
# whose study declares none of its own.
MARGIN = 0.10
INTERVAL_METHOD = {"log ratio": "t-interval of the mean log ratio (paired t-test)",
                   "difference": "Fieller interval of the ratio of paired means "
                                 "(paired t-test on the differences)"}
REPRODUCED, REVERSED = "reproduced", "reversed"
EQUIVALENT = "equivalent, as expected"
EFFECT_NOT_EXPECTED = "an effect where none is expected"


@dataclass(frozen=True)
class Paired:
    n: int
    ratio: float                 # geometric mean of the pair ratios (or ratio of means)
    low: float                   # the 95% interval, on the ratio scale
    high: float
    p_value: float               # paired t-test (log ratios, or differences)
    by: str                      # "log ratio" or "difference"
    spread: bool                 # whether the pairs differ at all
    # By difference only (a zero in some pair, where a ratio may say only the sign): the
    # pairs' mean difference (with - without) and its 95% t-interval.
    difference: tuple[float, float, float] | None = None
    # The pairs themselves (with, without), in repetition order: intervals at other
    # levels and equivalence tests are computed from them.
    values: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())

    @property
    def method(self) -> str:
        return INTERVAL_METHOD[self.by]

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """The ratio's interval at `confidence`, by the method that matches the test."""
        if confidence == CONFIDENCE:
            return self.low, self.high
        with_, without = map(np.array, self.values)
        return _ratio_interval(with_, without, self.by, confidence)

    def equivalence_p(self, margin: float = MARGIN) -> float:
        """TOST: the larger of the two one-sided p-values against the ratio lying at or
        beyond 1 + margin, or at or below 1 / (1 + margin). Pairs that are all equal
        have no spread to test with: 0 when their one ratio is inside the margin, else 1."""
        if self.n < 2:
            return math.nan
        upper, lower = 1 + margin, 1 / (1 + margin)
        if not self.spread:
            return 0.0 if lower < self.ratio < upper else 1.0
        a, b = map(np.array, self.values)
        if self.by == "log ratio":
            logs = np.log(a / b)
            return max(_one_sided(logs - math.log(lower), "greater"),
                       _one_sided(logs - math.log(upper), "less"))
        if b.mean() == 0:
            return 1.0  # nothing without the change: no ratio to bound
        return max(_one_sided(a - lower * b, "greater"), _one_sided(a - upper * b, "less"))

    def verdict(self, seed_ratio: float, alpha: float = ALPHA, p: float | None = None) -> str:
        """Against a seed's own ratio (with / without), at level `alpha`; `p`, the p-value
        to judge by where it is not the row's own (adjusted for the rows it stands among)."""
        if self.n < 2 or not self.spread or math.isnan(self.p_value):
            why = "no spread between repetitions" if self.n >= 2 and not self.spread else ""
            return f"inconclusive (n={self.n}{', ' + why if why else ''})"
        p = self.p_value if p is None else p
        if not p < alpha:
            return f"inconclusive (n={self.n}, p={p:.2g})"
        # the test rejects, so the interval lies wholly on the estimate's side of 1
        return REPRODUCED if (self.ratio < 1) == (seed_ratio < 1) else REVERSED

    def verdict_of_no_effect(self, margin: float = MARGIN, alpha: float = ALPHA,
                             p: float | None = None) -> str:
        """Where the seed itself expects no effect: "equivalent" only when TOST at
        `margin` rejects a difference as large as the margin (its p, or `p` where it is
        adjusted), "an effect where none is expected" when the t-test rejects no effect
        and the interval lies outside the margin; else inconclusive."""
        if self.n < 2:
            return f"inconclusive (n={self.n})"
        p = self.equivalence_p(margin) if p is None else p
        if p < alpha:
            return EQUIVALENT
        if self.p_value < alpha and (self.low > 1 + margin or self.high < 1 / (1 + margin)):
            return EFFECT_NOT_EXPECTED
        return f"inconclusive (n={self.n}, equivalence p={p:.2g} at ±{margin:.0%})"

    def judged(self, seed_ratio: float, expects_none: bool, margin: float = MARGIN) -> str:
        """The verdict against the seed's ratio, or against no effect where the seed
        expects none, each at the row's own level."""
        return self.verdict_of_no_effect(margin) if expects_none else self.verdict(seed_ratio)


def pairs(with_values: dict, without_values: dict) -> tuple[np.ndarray, np.ndarray]:
    """Values of the repetitions both sides have, in repetition order."""
    common = sorted(set(with_values) & set(without_values))
    return (np.array([with_values[r] for r in common], dtype=float),
            np.array([without_values[r] for r in common], dtype=float))


def _quantile(n: int, confidence: float) -> float:
    return float(stats.t.ppf(0.5 + confidence / 2, n - 1))


def _mean_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The t-interval of the mean (a point where the samples do not differ)."""
    mean = float(samples.mean())
    if len(samples) < 2 or np.ptp(samples) == 0:
        return (mean, mean) if len(samples) else (math.nan, math.nan)
    half = _quantile(len(samples), confidence) * float(samples.std(ddof=1)) / math.sqrt(len(samples))
    return mean - half, mean + half


def _p(samples: np.ndarray) -> float:
    if len(samples) < 2 or np.all(samples == samples[0]):
        return math.nan
    return float(stats.ttest_1samp(samples, 0.0).pvalue)


def _one_sided(samples: np.ndarray, alternative: str) -> float:
    if np.ptp(samples) == 0:  # no spread: the sign alone decides
        mean = samples.mean()
        return 0.0 if (mean > 0 if alternative == "greater" else mean < 0) else 1.0
    return float(stats.ttest_1samp(samples, 0.0, alternative=alternative).pvalue)


def fieller(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Fieller's interval for mean(a) / mean(b) over pairs: every theta at which the
    paired t-test of a - theta * b keeps "mean zero". Clipped at 0 (both are counts);
    unbounded above where mean(b) is not clearly above 0."""
    n = len(a)
    q2 = _quantile(n, confidence) ** 2 / n
    cov = np.cov(a, b, ddof=1)
    # (mean_a - theta mean_b)^2 <= q2 (var_a - 2 theta cov_ab + theta^2 var_b)
    qa = b.mean() ** 2 - q2 * cov[1, 1]
    qb = -2 * (a.mean() * b.mean() - q2 * cov[0, 1])
    qc = a.mean() ** 2 - q2 * cov[0, 0]
    estimate = a.mean() / b.mean() if b.mean() > 0 else math.inf
    disc = qb * qb - 4 * qa * qc
    if qa > 0:
        root = math.sqrt(max(disc, 0.0))
        low, high = (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)
    elif disc <= 0 or qa == 0:
        low, high = -math.inf, math.inf
    else:
        # mean(b) is not clearly above 0: the set is the outside of two roots, two rays.
        # Shown whole (unbounded) when it holds 1; where the test rejects 1 (it lies
        # between the roots), the ray that holds the estimate, so the two still agree.
        root = math.sqrt(disc)
        r1, r2 = sorted(((-qb - root) / (2 * qa), (-qb + root) / (2 * qa)))
        if r1 < 1 < r2:
            low, high = (r2, math.inf) if estimate >= r2 else (-math.inf, r1)
        else:
            low, high = -math.inf, math.inf
    return max(low, 0.0), high


def _ratio_interval(a: np.ndarray, b: np.ndarray, by: str,
                    confidence: float) -> tuple[float, float]:
    if by == "log ratio":
        low, high = _mean_interval(np.log(a / b), confidence)
        return math.exp(low), math.exp(high)
    differences = a - b
    if len(a) < 2 or np.ptp(differences) == 0:
        ratio = _ratio_of_means(a, b)
        return ratio, ratio
    if b.mean() > 0:
        return fieller(a, b, confidence)
    # nothing without the change: only the sign of the difference means anything
    low, high = _mean_interval(differences, confidence)
    return _sign_as_ratio(low), _sign_as_ratio(high)


def _ratio_of_means(a: np.ndarray, b: np.ndarray) -> float:
    if b.mean() > 0:
        return float(a.mean() / b.mean())
    return math.inf if a.mean() > 0 else 1.0


def _sign_as_ratio(difference: float) -> float:
    """Against nothing, a difference's sign is all a ratio can say: inf, 1 or -inf."""
    return math.inf if difference > 0 else (1.0 if difference == 0 else -math.inf)


def paired(with_values: dict, without_values: dict) -> Paired:
    """`with_values`, `without_values`: repetition -> value of one metric."""
    a, b = pairs(with_values, without_values)
    n = len(a)
    values = (tuple(map(float, a)), tuple(map(float, b)))
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan, "log ratio", False)
    if np.all(a > 0) and np.all(b > 0):
        logs = np.log(a / b)
        low, high = _ratio_interval(a, b, "log ratio", CONFIDENCE)
        return Paired(n, float(np.exp(logs.mean())), low, high, _p(logs), "log ratio",
                      bool(n > 1 and np.ptp(logs) > 0), values=values)
    differences = a - b
    low, high = _ratio_interval(a, b, "difference", CONFIDENCE)
    return Paired(n, _ratio_of_means(a, b), low, high, _p(differences), "difference",
                  bool(n > 1 and np.ptp(differences) > 0),
                  (float(differences.mean()), *_mean_interval(differences, CONFIDENCE)),
                  values)
