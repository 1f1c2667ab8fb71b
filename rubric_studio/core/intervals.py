"""The 95% intervals every figure of agreement, flips and probes is reported with.

One confidence level and one z for the whole program (:data:`CONFIDENCE`, :data:`Z95`):
a kappa, a flip rate and a bootstrapped alpha printed side by side are all 95%.

Definitions::

    Z95                  the 0.975 quantile of the standard normal, 1.959963984540054
    wilson(x, n)         Wilson's (1927) score interval of a proportion p = x/n:
                         (p + z²/2n ± z·√(p(1 − p)/n + z²/4n²)) / (1 + z²/n)
                         inside [0, 1], and of positive width at x = 0 and x = n
    kappa_interval       Cohen's kappa κ = (p_o − p_e)/(1 − p_e) is linear in the observed
                         agreement p_o once the chance agreement p_e is held at its
                         observed value; the interval is Wilson's interval of p_o mapped
                         through that line and clipped to [−1, 1]:
                         [(lo − p_e)/(1 − p_e), (hi − p_e)/(1 − p_e)]
                         This is Cohen's (1960) interval (whose SE √(p_o(1 − p_o)/n)/(1 − p_e)
                         also holds p_e fixed) with the Wald step replaced by the score
                         interval, so the two agree for large n; unlike Cohen's it keeps a
                         width when every item agrees (p_o = 1) or none does (p_o = 0),
                         where p_o(1 − p_o) = 0 made the Wald interval a point.
    percentile bounds    a bootstrap's (1 − CONFIDENCE)/2 and (1 + CONFIDENCE)/2 quantiles
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

#: The confidence of every interval the program reports.
CONFIDENCE = 0.95
#: Its two-sided normal quantile (1.959963984540054).
Z95 = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)


def family_z(comparisons: int) -> float:
    """The z that keeps the chance of *any* false finding among ``comparisons`` intervals at
    1 − :data:`CONFIDENCE` (Bonferroni: each at 1 − (1 − CONFIDENCE)/comparisons); :data:`Z95` for one."""
    if comparisons <= 1:
        return Z95
    return NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / (2 * comparisons))


def binomial_tail(at_least: int, trials: int) -> float:
    """P(X ≥ ``at_least``) for X ~ Binomial(``trials``, ½), exactly: the one-sided exact McNemar
    p-value of ``at_least`` of ``trials`` discordant pairs going one way (1 for ``at_least`` ≤ 0, 0
    beyond ``trials``). Python integers do not overflow, so it is exact for any count; the probes,
    the judge switch and improve's evidence all test with it."""
    if at_least <= 0:
        return 1.0
    if at_least > trials:
        return 0.0
    return sum(math.comb(trials, k) for k in range(at_least, trials + 1)) / 2**trials


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (95% by default); None for n = 0.
    Unlike p ± z·SE it stays inside [0, 1] and is not empty at 0 or n successes."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def kappa_interval(agreeing: int, n: int, expected: float, z: float = Z95) -> tuple[float, float] | None:
    """The 95% interval of Cohen's kappa from ``agreeing`` of ``n`` items and the chance
    agreement ``expected`` (p_e); None when n = 0 or p_e = 1 (kappa undefined)."""
    bounds = wilson_interval(agreeing, n, z)
    if bounds is None or math.isclose(expected, 1.0):
        return None
    lo, hi = ((b - expected) / (1 - expected) for b in bounds)
    return max(-1.0, lo), min(1.0, hi)


def percentile_bounds(values: Sequence[float]) -> tuple[float, float]:
    """The central :data:`CONFIDENCE` range of sorted bootstrap ``values`` (nearest-rank)."""
    last = len(values) - 1
    tail = (1 - CONFIDENCE) / 2
    return values[int(tail * last)], values[int((1 - tail) * last)]
