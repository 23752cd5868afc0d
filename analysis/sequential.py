"""Group-sequential replication: a study declares its looks (say after 3, 5 and 10 pairs)
and an alpha-spending function, and an experiment gets more pairs only while a verdict
of its is undecided.

The spending function alpha*(t) (Lan and DeMets) says how much of the type-I error may be
spent by information fraction t = pairs / the last look's pairs. O'Brien-Fleming's
shape, 2 - 2 Phi(z_{1 - alpha/2} / sqrt t), spends almost nothing early; Pocock's,
alpha ln(1 + (e - 1) t), spends evenly. Each look gets a nominal p-value threshold such
that the chance of first crossing there, under no effect, is exactly the increment
alpha*(t_k) - alpha*(t_{k-1}).

The looks' tests are paired t-tests over few pairs (2 degrees of freedom at 3 pairs),
whose joint law has heavier tails than the normal one the classic boundaries assume:
with z boundaries read through each test's own p, 3/5/10 looks made 5.1-5.8% false
verdicts at alpha = 5%. So the thresholds come from the t-tests' own joint law under no
effect, which does not depend on the pairs' scale: the running one-sample t-test over
normal log ratios, simulated once per set of looks from a fixed random stream
(SIMULATIONS draws; the spent alpha is then exact to about 0.0004).

Many rows are tested at once, so the rule is Holm's step-down in group-sequential form
(Maurer and Bretz's graphical approach with equal weights): each of the m rows still
open is tested with its own boundaries at alpha / m; a row that crosses at any look so
far is rejected and its share of alpha goes to the rest, whose boundaries are made again
at alpha / (m - 1), and so on, until no open row crosses. The family's chance of any
false verdict stays at or under alpha.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import stats

SPENDING = ("obrien-fleming", "pocock")
SIMULATIONS = 400_000
STREAM = 20261206


def spent(kind: str, fraction: float, alpha: float) -> float:
    """alpha*(t): the type-I error spent by information fraction t (0 < t <= 1)."""
    if kind == "obrien-fleming":
        return float(2 - 2 * stats.norm.cdf(stats.norm.ppf(1 - alpha / 2) / math.sqrt(fraction)))
    if kind == "pocock":
        return float(alpha * math.log(1 + (math.e - 1) * fraction))
    raise ValueError(f"spending {kind!r}; allowed: {', '.join(SPENDING)}")


def check_looks(looks) -> tuple[int, ...]:
    looks = tuple(looks)
    if not looks or list(looks) != sorted(set(looks)) or looks[0] < 2 \
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in looks):
        raise ValueError(f"looks {list(looks)}: allowed: increasing whole pair counts, "
                         f"the first at least 2")
    return looks


@lru_cache(maxsize=16)
def null_p_values(looks: tuple[int, ...]) -> np.ndarray:
    """SIMULATIONS x looks: the running paired t-test's two-sided p at each look, under
    no effect."""
    draws = np.random.default_rng(STREAM).standard_normal((SIMULATIONS, looks[-1]))
    sums, squares = np.cumsum(draws, axis=1), np.cumsum(draws ** 2, axis=1)
    out = np.empty((SIMULATIONS, len(looks)))
    for k, n in enumerate(looks):
        mean = sums[:, n - 1] / n
        sd = np.sqrt((squares[:, n - 1] - n * mean ** 2) / (n - 1))
        out[:, k] = 2 * stats.t.sf(np.abs(mean) / (sd / math.sqrt(n)), n - 1)
    return out


@lru_cache(maxsize=64)
def nominal_levels(looks: tuple[int, ...], alpha: float, kind: str) -> tuple[float, ...]:
    """Each look's two-sided p-value threshold."""
    looks = check_looks(looks)
    p = null_p_values(looks)
    alive = np.ones(len(p), dtype=bool)
    levels = []
    for k, n in enumerate(looks):
        increment = spent(kind, n / looks[-1], alpha) - (
            spent(kind, looks[k - 1] / looks[-1], alpha) if k else 0.0)
        # the level below which `increment` of all draws first cross here
        count = int(round(increment * len(p)))
        candidates = np.sort(p[alive, k])
        level = float(candidates[count]) if 0 < count < len(candidates) else 0.0
        levels.append(level)
        alive &= ~(p[:, k] < level)
    return tuple(levels)


def holm_decisions(p_at: list[list[float]], looks: list[tuple[int, ...]], alpha: float,
                   kind: str) -> list[int | None]:
    """Sequential Holm over a family of rows: row i's p at each of its looks so far
    (`p_at[i]`, NaN where it has no test there; shorter than `looks[i]` where its pairs
    have not reached the later looks) and its looks. Each row's index of the look at
    which it was rejected, or None while it is not."""
    decided: list[int | None] = [None] * len(p_at)
    testable = [i for i, ps in enumerate(p_at) if any(p == p for p in ps)]
    while True:
        open_rows = [i for i in testable if decided[i] is None]
        if not open_rows:
            return decided
        share = alpha / len(open_rows)
        crossed = False
        for i in open_rows:
            levels = nominal_levels(tuple(looks[i]), share, kind)
            hit = next((k for k, p in enumerate(p_at[i]) if p == p and p < levels[k]), None)
            if hit is not None:
                decided[i] = hit
                crossed = True
        if not crossed:
            return decided
