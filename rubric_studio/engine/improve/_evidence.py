"""Whether a suggestion's gain on the held-out labels is evidence or luck.

A candidate changes some held-out verdicts: ``fixed`` cells disagreed with the person
before and agree after, ``broke`` cells the reverse; the rest did not move. Under the null
hypothesis that the candidate is no better than the current rubric, each changed cell is
equally likely to be a fix or a break, so the number of fixes among the changed cells is
Binomial(fixed + broke, ½). The exact McNemar test is the two-sided tail of that
distribution, computed here with integer arithmetic (no statistics library).

A gain counts as shown only when

- at least :data:`MIN_EVIDENCE_CELLS` held-out cells were compared (changed or not): a
  handful of cells cannot tell a better wording from a lucky one, and
- the exact McNemar test gives p < :data:`ALPHA` (two-sided) in favour of the candidate.

Anything else that looks better is *inconclusive*: the person decides, knowingly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_studio.core.intervals import binomial_tail

#: Held-out cells (changed or not) a gain must be measured on before it can count as shown.
MIN_EVIDENCE_CELLS = 10
#: Two-sided significance level of the exact McNemar test.
ALPHA = 0.05
TEST_NAME = "exact McNemar (two-sided)"


def mcnemar_exact(fixed: int, broke: int) -> float:
    """Two-sided exact McNemar p-value for ``fixed`` vs ``broke`` discordant pairs.

    ``min(1, 2 · P(X ≤ min(fixed, broke)))`` with X ~ Binomial(fixed + broke, ½); 1.0 when no
    pair changed. Exact for any count (Python integers do not overflow)."""
    if fixed < 0 or broke < 0:
        raise ValueError("counts of fixed and broken cells cannot be negative")
    changed = fixed + broke
    if changed == 0:
        return 1.0
    # 2 · P(X ≤ min) = 2 · P(X ≥ max) by the symmetry of Binomial(n, ½)
    return min(1.0, 2 * binomial_tail(max(fixed, broke), changed))


@dataclass(frozen=True)
class Evidence:
    """The paired test of one candidate on the held-out cells, and what it shows."""

    cells: int
    fixed: int
    broke: int
    p_value: float

    @classmethod
    def of(cls, cells: int, fixed: int, broke: int) -> Evidence:
        return cls(cells, fixed, broke, mcnemar_exact(fixed, broke))

    @property
    def enough_cells(self) -> bool:
        return self.cells >= MIN_EVIDENCE_CELLS

    @property
    def shows_gain(self) -> bool:
        """More fixes than breaks, on enough cells, and unlikely by chance."""
        return self.enough_cells and self.fixed > self.broke and self.p_value < ALPHA

    def text(self) -> str:
        """``p = 0.031 on 12 held-out cells`` or why the test cannot decide."""
        if not self.enough_cells:
            return f"only {self.cells} held-out cells; at least {MIN_EVIDENCE_CELLS} needed"
        return f"p = {self.p_value:.3g} ({TEST_NAME}, {self.fixed} fixed vs {self.broke} broken, {self.cells} cells)"

    def to_dict(self) -> dict[str, Any]:
        return {"test": TEST_NAME, "cells": self.cells, "fixed": self.fixed, "broke": self.broke,
                "p_value": round(self.p_value, 6), "min_cells": MIN_EVIDENCE_CELLS, "alpha": ALPHA,
                "shows_gain": self.shows_gain}
