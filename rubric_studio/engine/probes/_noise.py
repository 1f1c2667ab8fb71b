"""A probe kind against the judge's own noise: is its flip rate beyond what the null perturbation
(same meaning, other bytes) already flips?

Every probed cell (sample × criterion) is judged under the kind and under the null perturbation,
both compared with the same baseline, so the two flip rates are measured on the *same* cells and
are correlated: a cell the judge is unsure about tends to flip under both. A test for two
independent proportions would ignore that pairing and give too wide (or, with negative
correlation, too narrow) an interval. The cells compared under both make a paired 2×2 table::

                     noise flipped   noise kept
    kind flipped           a              b
    kind kept              c              d

    difference θ = (a + b)/n − (a + c)/n = (b − c)/n        (the kind's flip rate − the noise's)

Its 95% interval is Newcombe's square-and-add interval for paired proportions, *method 10* of
R. G. Newcombe, "Improved confidence intervals for the difference between binomial proportions
based on paired data", Statistics in Medicine 17 (1998) 2635–2650 (the worked example of
Altman et al., *Statistics with Confidence*, 2nd ed., 2000, p. 52; also Fagerland, Lydersen &
Laake, *Statistical Analysis of Contingency Tables*, 2017, §8.5). It combines the Wilson score
intervals (l₁, u₁) and (l₂, u₂) of the two margins with φ, the correlation of the table::

    L = θ − √((p₁ − l₁)² − 2φ̂(p₁ − l₁)(u₂ − p₂) + (u₂ − p₂)²)
    U = θ + √((p₂ − l₂)² − 2φ̂(p₂ − l₂)(u₁ − p₁) + (u₁ − p₁)²)

    φ̂ = C / √((a+b)(c+d)(a+c)(b+d)),  C = ad − bc − n/2 if ad − bc > n/2; ad − bc if it is < 0; else 0
    (φ̂ = 0 when a margin is empty)

Why this one: it stays inside [−1, 1], is defined when b = c = 0 (a clean judge: θ = 0 with an
interval of positive width, where the Wald interval collapses to [0, 0]), and Newcombe found its
coverage close to nominal at small n, unlike Wald's; unlike an exact conditional (McNemar-based)
interval it is about the difference of the two rates — what the report shows — not their odds.

A kind is **beyond noise** when the interval excludes 0 from above: L > 0, hence its flip rate
exceeds the noise's. A probe run makes one such comparison per kind × criterion, and at 95% each,
a judge that is only noisy would show a "finding" in about one run of six over ten comparisons; so
the decision uses the same interval at the family-wise level (Bonferroni over the run's
comparisons, :func:`rubric_studio.core.intervals.family_z`), while the interval reported stays
the 95% one. Anything else — a small n, a judge that flips as often on an unchanged
meaning — is not distinguishable from the judge's own noise, and is not a finding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.intervals import Z95, family_z, wilson_interval


def _phi(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's φ̂ of the paired table, shrunk by n/2 towards 0 when positive (his method 10)."""
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    n, cross = a + b + c + d, a * d - b * c
    numerator = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
    return numerator / math.sqrt(margins)


def paired_difference(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, tuple[float, float]] | None:
    """(θ, (L, U)): the difference of the first and second proportion of a paired 2×2 table
    (a both, b first only, c second only, d neither) and its Newcombe (1998, method 10) interval;
    None when the table is empty."""
    n = a + b + c + d
    if n == 0:
        return None
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, z) or (0.0, 0.0)
    l2, u2 = wilson_interval(a + c, n, z) or (0.0, 0.0)
    phi = _phi(a, b, c, d)
    theta = p1 - p2
    low = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = theta + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return theta, (max(-1.0, low), min(1.0, high))


@dataclass(frozen=True)
class NoiseComparison:
    """One kind × criterion against the null perturbation, over the ``n`` cells compared under both."""

    n: int
    #: The paired table: flipped under both, the kind only, the noise only.
    both: int
    kind_only: int
    noise_only: int
    noise_rate: float | None
    value: float | None
    ci: tuple[float, float] | None
    #: The comparisons of the run the decision is made over, and the interval at that family-wise level.
    comparisons: int = 1
    decision_ci: tuple[float, float] | None = None

    @property
    def beyond_noise(self) -> bool:
        """The family-wise interval lies above 0: the kind flips more cells than the null perturbation does."""
        ci = self.decision_ci if self.decision_ci is not None else self.ci
        return ci is not None and self.value is not None and ci[0] > 0 and self.value > 0

    def to_dict(self) -> dict[str, object]:
        return {
            "value": None if self.value is None else round(self.value, 4),
            "ci": None if self.ci is None else [round(self.ci[0], 4), round(self.ci[1], 4)],
            "n": self.n,
            "decided_over": self.comparisons,
        }


def compare_with_noise(kind: Mapping[str, bool], noise: Mapping[str, bool], noise_rate: float | None,
                       comparisons: int = 1) -> NoiseComparison:
    """``kind`` and ``noise``: sample id -> flipped, for the cells each compared; paired on the
    samples compared under both. ``comparisons``: how many kind × criterion comparisons the run
    makes (the decision holds the chance of any false finding among them at 5%)."""
    shared = [sid for sid in kind if sid in noise]
    both = sum(1 for sid in shared if kind[sid] and noise[sid])
    kind_only = sum(1 for sid in shared if kind[sid] and not noise[sid])
    noise_only = sum(1 for sid in shared if noise[sid] and not kind[sid])
    found = paired_difference(both, kind_only, noise_only, len(shared) - both - kind_only - noise_only)
    value, ci = found if found is not None else (None, None)
    table = (both, kind_only, noise_only, len(shared) - both - kind_only - noise_only)
    family = paired_difference(*table, z=family_z(comparisons)) if comparisons > 1 else None
    return NoiseComparison(len(shared), both, kind_only, noise_only, noise_rate, value, ci,
                           comparisons, None if family is None else family[1])


def _points(value: float) -> str:
    return f"{value * 100:+.0f}"


def noise_verdict(
    beyond: bool, noise_rate: float | None, difference: Mapping[str, Any] | None, *, compact: bool = False
) -> str:
    """How a kind's flip rate reads against the noise, in the words the table and the studio use:
    ``beyond this judge's noise (noise 5%): +35 points, 95% CI +12 to +58`` or ``not
    distinguishable from this judge's own noise (noise 31%)`` (``compact``, for a table column:
    ``beyond noise (5%): +35 pts, CI +12…+58``, ``not beyond noise (31%): no finding``); empty
    when no noise was measured."""
    if noise_rate is None or not difference or difference.get("value") is None:
        return ""
    noise = f"noise {noise_rate:.0%}"
    if not beyond:
        if compact:
            return f"not beyond noise ({noise_rate:.0%}): no finding"
        return f"not distinguishable from this judge's own noise ({noise})"
    value, ci = difference["value"], difference["ci"]
    if compact:
        return f"beyond noise ({noise_rate:.0%}): {_points(value)} pts, CI {_points(ci[0])}…{_points(ci[1])}"
    return f"beyond this judge's noise ({noise}): {_points(value)} points, 95% CI {_points(ci[0])} to {_points(ci[1])}"
