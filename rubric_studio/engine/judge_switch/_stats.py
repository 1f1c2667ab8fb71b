"""The arithmetic of a judge switch: one judge against another on the same labelled cells.

Each labelled cell both judges gave a verdict to is one *pair*: the current judge agreed
with the label or not, and so did the candidate. Four counts hold everything::

    both_right   current right, candidate right
    worse        current right, candidate wrong      (the candidate made this cell worse)
    better       current wrong, candidate right      (the candidate made this cell better)
    both_wrong   current wrong, candidate wrong

**The paired test** looks only at the cells whose agreement changed (``worse + better``):
under "the candidate is no worse and no better", each of them is as likely to have gone
one way as the other, so ``worse`` is Binomial(worse + better, 1/2) — McNemar's exact test
(the binomial test on the discordant pairs). It is read in the direction that matters:
``p_worse = P(X ≥ worse)`` is the chance of at least this many worsened cells if the
candidate were no worse (small: the candidate is worse); ``p_better = P(X ≥ better)`` the
other way round; ``p_two_sided = min(1, 2·P(X ≥ max(worse, better)))``. With no discordant
cell every p is 1.

**The drop** is current accuracy minus candidate accuracy on the pairs, ``(worse − better)/n``
(positive: the candidate agrees with the labels less often), with Tango's score interval for a
difference of paired proportions (Tango 1998, *Statistics in Medicine* 17:891; recommended by
Fagerland, Lydersen & Laake 2013, *Statistics in Medicine* 32:1007): every drop Δ whose score test
is not rejected at 5% two-sided, the test using the restricted maximum-likelihood shares of
worse and better cells under Δ::

    Z(Δ) = (worse − better − nΔ) / sqrt(n · (2q̃ + Δ − Δ²))      q̃: the better cells' share under Δ

Unlike the conditional test it keeps a width when no cell changed: with 0 of n cells changed the
upper bound is z²/(n + z²) — 6 pairs alike still allow a drop of 39 points, 80 pairs 4.6 —
which is what "can't tell" needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.intervals import Z95, binomial_tail

DIGITS = 4


def _restricted_q(worse: int, better: int, n: int, delta: float) -> float:
    """The maximum-likelihood share of *better* cells given that worse − better shares = ``delta``
    (the root of 2n·q² − B·q − C = 0 with B = w(1−Δ) + b(1−3Δ) − 2(n−w−b)Δ and C = bΔ(1−Δ))."""
    rest = n - worse - better
    b_term = worse * (1 - delta) + better * (1 - 3 * delta) - 2 * rest * delta
    c_term = better * delta * (1 - delta)
    q = (b_term + math.sqrt(max(0.0, b_term * b_term + 8 * n * c_term))) / (4 * n)
    return min(max(q, max(0.0, -delta)), (1 - delta) / 2)


def _score(worse: int, better: int, n: int, delta: float) -> float:
    """Tango's score statistic for H0: drop = ``delta`` (positive: the data say the drop is larger)."""
    q = _restricted_q(worse, better, n, delta)
    variance = n * (2 * q + delta - delta * delta)
    excess = worse - better - n * delta
    if variance <= 0:
        return 0.0 if abs(excess) < 1e-12 else math.copysign(math.inf, excess)
    return excess / math.sqrt(variance)


def _bound(worse: int, better: int, n: int, start: float, end: float, z: float) -> float:
    """The drop between ``start`` (the estimate) and ``end`` (±1) where the score test starts to
    reject (the score reaches −z going up, +z going down), by bisection; ``end`` when it never does."""
    upward = end > start

    def rejected(delta: float) -> bool:
        score = _score(worse, better, n, delta)
        return score < -z if upward else score > z

    edge = end - math.copysign(1e-12, end - start)
    if start == end or not rejected(edge):
        return end
    inside, outside = start, edge
    for _ in range(100):
        middle = (inside + outside) / 2
        inside, outside = (inside, middle) if rejected(middle) else (middle, outside)
    return (inside + outside) / 2


def paired_difference_interval(both_right: int, worse: int, better: int, both_wrong: int, z: float = Z95
                               ) -> tuple[float, float] | None:
    """Tango's score interval (95%) of the drop (worse − better)/n (see the module docstring); None for no pairs."""
    n = both_right + worse + better + both_wrong
    if n == 0:
        return None
    estimate = (worse - better) / n
    return _bound(worse, better, n, estimate, -1.0, z), _bound(worse, better, n, estimate, 1.0, z)


@dataclass
class Paired:
    """The pairs of one comparison (overall, a criterion, all criteria): the label and both
    judges' verdicts per pair, and the cells left out (errors are never counted as worse)."""

    #: (human positive, current positive, candidate positive), one per pair.
    pairs: list[tuple[bool, bool, bool]]
    current_errors: int = 0
    candidate_errors: int = 0
    #: Left out for another reason: pending, unjudged, missing in one report.
    other_excluded: int = 0

    @property
    def n(self) -> int:
        return len(self.pairs)

    def counts(self) -> tuple[int, int, int, int]:
        """(both_right, worse, better, both_wrong)."""
        right = [(h == c, h == d) for h, c, d in self.pairs]
        return (sum(1 for a, b in right if a and b), sum(1 for a, b in right if a and not b),
                sum(1 for a, b in right if b and not a), sum(1 for a, b in right if not a and not b))  # fmt: skip

    @property
    def before(self) -> Agreement:
        return Agreement.of((h, c) for h, c, _ in self.pairs)

    @property
    def after(self) -> Agreement:
        return Agreement.of((h, d) for h, _, d in self.pairs)

    @property
    def p_worse(self) -> float:
        _, worse, better, _ = self.counts()
        return binomial_tail(worse, worse + better)

    @property
    def p_better(self) -> float:
        _, worse, better, _ = self.counts()
        return binomial_tail(better, worse + better)

    @property
    def p_two_sided(self) -> float:
        _, worse, better, _ = self.counts()
        return min(1.0, 2 * binomial_tail(max(worse, better), worse + better)) if worse + better else 1.0

    @property
    def drop(self) -> float | None:
        _, worse, better, _ = self.counts()
        return (worse - better) / self.n if self.n else None

    @property
    def drop_ci(self) -> tuple[float, float] | None:
        return paired_difference_interval(*self.counts())

    def to_dict(self, threshold: float) -> dict[str, Any]:
        """The comparison in JSON: n, both judges' kappa and accuracy on the pairs, the counts,
        the paired test (``worse`` when ``p_worse`` < ``threshold``), the drop and what was left out."""
        both_right, worse, better, both_wrong = self.counts()
        drop, ci = self.drop, self.drop_ci
        return {
            "n": self.n,
            "before": _agreement_figures(self.before),
            "after": _agreement_figures(self.after),
            "better": better, "worse": worse, "unchanged": both_right + both_wrong,
            "p_worse": round(self.p_worse, 6), "p_better": round(self.p_better, 6),
            "p_two_sided": round(self.p_two_sided, 6),
            "worse_significant": self.n > 0 and self.p_worse < threshold,
            "drop": None if drop is None else round(drop, DIGITS),
            "drop_ci": None if ci is None else [round(ci[0], DIGITS), round(ci[1], DIGITS)],
            "excluded": {"current_errors": self.current_errors, "candidate_errors": self.candidate_errors,
                         "other": self.other_excluded},
        }  # fmt: skip

    def merged(self, other: Paired) -> Paired:
        return Paired([*self.pairs, *other.pairs], self.current_errors + other.current_errors,
                      self.candidate_errors + other.candidate_errors, self.other_excluded + other.other_excluded)


def _agreement_figures(agreement: Agreement) -> dict[str, Any]:
    full = agreement.to_dict()
    return {"kappa": full["kappa"], "kappa_ci": full["kappa_ci"], "accuracy": full["accuracy"]}
