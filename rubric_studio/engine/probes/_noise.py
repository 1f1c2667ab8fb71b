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
It never collapses to a point (φ̂ < 1 whenever it is positive), but where about half the cells
moved under both and a small one-sided shift exists it is narrower than Tango's score interval
and holds the true shift about 90% of the time (``bench/bench_probe_decisions.py``, part 4):
detail, which the decision never reads.

Here the two rates are of the events the kind is tested on (:mod:`._decision`: flips towards
the kind's direction, over the cells that could move that way), so θ is the shift the decision is
about, per criterion. The interval is what the report shows beside each criterion: detail. The
decision is the exact one-sided test of :mod:`._decision` — once per kind, pooled over its
criteria; per criterion at 0.05/k for the kind's k criteria — and never depends on the other
kinds of the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.intervals import Z95, wilson_interval
from rubric_studio.engine.probes._decision import (
    BEYOND,
    CANT_TELL,
    LEVEL,
    NOT_BEYOND,
    SUGGESTIVE,
    Reading,
    Table,
    cells,
    floor_points,
    leans,
    read_table,
)


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
    """One kind × criterion against the null perturbation, over the ``n`` cells compared under both:
    the paired table of the kind's events and the noise's, the shift with its 95% interval, and how
    the test reads at the kind's within-kind level."""

    n: int
    #: The paired table: moved under both, the kind only, the noise only.
    both: int
    kind_only: int
    noise_only: int
    noise_rate: float | None
    value: float | None
    ci: tuple[float, float] | None
    #: The kind's criteria this one is decided among (Bonferroni within the kind, never across kinds).
    comparisons: int = 1
    reading: Reading | None = None

    @property
    def beyond_noise(self) -> bool:
        """The exact one-sided test at 0.05/``comparisons``: the kind moves more cells than the noise."""
        return self.reading is not None and self.reading.beyond_noise

    def to_dict(self) -> dict[str, object]:
        reading = self.reading
        return {
            "value": None if self.value is None else round(self.value, 4),
            "ci": None if self.ci is None else [round(self.ci[0], 4), round(self.ci[1], 4)],
            "n": self.n, "kind_only": self.kind_only, "noise_only": self.noise_only, "both": self.both,
            "decided_over": self.comparisons,
            "level": round(LEVEL / self.comparisons, 6),
            "p_value": None if reading is None or reading.p_value is None else round(reading.p_value, 6),
            "reading": None if reading is None else reading.outcome,
            "detectable_shift": None if reading is None or reading.detectable is None else round(reading.detectable, 4),
        }  # fmt: skip


def compare_with_noise(kind: Mapping[str, bool], noise: Mapping[str, bool], noise_rate: float | None,
                       comparisons: int = 1) -> NoiseComparison:
    """``kind`` and ``noise``: cell id -> moved (the kind's event, and the noise's, on the cells
    each compared); paired on the cells compared under both. ``comparisons``: the criteria of this
    kind the decision is shared among (the test runs at 0.05/``comparisons``)."""
    shared = [sid for sid in kind if sid in noise]
    table = Table.of([(kind[sid], noise[sid]) for sid in shared])
    found = paired_difference(table.both, table.kind_only, table.noise_only, table.neither)
    value, ci = found if found is not None else (None, None)
    reading = read_table(table, LEVEL / max(1, comparisons))
    return NoiseComparison(table.n, table.both, table.kind_only, table.noise_only, noise_rate, value, ci,
                           max(1, comparisons), reading)  # fmt: skip


def _points(value: float) -> str:
    return f"{value * 100:+.0f}"


def noise_verdict(
    beyond: bool, noise_rate: float | None, difference: Mapping[str, Any] | None, *, compact: bool = False
) -> str:
    """How one criterion of a kind reads against the noise, in the words the table, the studio and
    the inspector use: ``beyond this judge's noise (noise 5%): +35 points, 95% CI +12 to +58``;
    ``suggestive: probe more samples (noise 0%): +16 points, 95% CI -2 to +35`` (a large shift
    whose interval reaches 0); ``can't tell with 9 cells (noise 0%): a shift below 55 points would
    not show``; ``not distinguishable from this judge's own noise (noise 31%): +2 points, 95% CI
    -8 to +12`` (``compact``: a short form for a table column); empty when no noise was measured."""
    if noise_rate is None or not difference:
        return ""
    if difference.get("value") is None:
        return f"no cell could move this kind's way (noise {noise_rate:.0%})" if difference.get("n") == 0 else ""
    value, ci = difference["value"], difference["ci"]
    reading = difference.get("reading") or (BEYOND if beyond else NOT_BEYOND)
    noise = f"noise {noise_rate:.0%}"
    figures = f"{_points(value)} points, 95% CI {_points(ci[0])} to {_points(ci[1])}"
    short = f"{_points(value)} pts, CI {_points(ci[0])}…{_points(ci[1])}"
    if reading == BEYOND:
        if compact:
            return f"beyond noise ({noise_rate:.0%}): {short}"
        return f"beyond this judge's noise ({noise}): {figures}"
    if reading == SUGGESTIVE:
        if compact:
            return f"suggestive ({noise_rate:.0%}): {short}: probe more"
        return f"suggestive: probe more samples ({noise}): {figures}"
    if reading == CANT_TELL:
        detectable, n = difference.get("detectable_shift"), difference.get("n", 0)
        unseen = ("even every cell moving would not show" if detectable is None or detectable > 1
                  else f"a shift below {floor_points(detectable)} points would not show")  # fmt: skip
        if compact:
            return f"can't tell ({cells(n)}): {unseen.replace(' points', ' pts')}"
        lean = f"; {figures}: suggestive, probe more samples" if leans(value, detectable) else ""
        return f"can't tell with {cells(n)} ({noise}): {unseen}{lean}"
    if compact:
        return f"not beyond noise ({noise_rate:.0%}): no finding"
    return f"not distinguishable from this judge's own noise ({noise}): {figures}"
