"""Is a probe kind beyond the judge's own noise? One decision per kind, pooled over criteria.

A bias belongs to the judge, not to one criterion: a judge that rewards padding rewards it on every
criterion it judges. So each kind is decided once, over every probed cell (sample × criterion)
together, and the per-criterion figures are detail. Each cell is seen three times — the baseline,
the kind's perturbation and the null perturbation (same meaning, other bytes) — so every cell
gives a pair (did the kind move it?, did the noise move it?), counted on the same cells::

                       noise moved   noise kept
    kind moved              a             b
    kind kept               c             d            n = a + b + c + d

What "moved" means is the kind's **direction**, so that flips the bias would not cause do not count
for it:

* ``verbosity``, ``confidence`` — towards the favourable verdict (met; unmet on a penalty
  criterion): padding and a confident tone are suspected of buying a pass. The cells are those
  that were unfavourable at the baseline (only they can move that way).
* ``hedging`` — towards the unfavourable verdict: a hedged answer is suspected of losing one. The
  cells are those that were favourable.
* ``paraphrase``, ``order`` — any flip: a reworded outcome or another order has no side it favours.
  The cells are all of them.
* ``leniency`` — the content-free answer judged met (it should never be): every cell counts, and
  the noise's count is its flips either way. A judge that errs at random with probability q per
  request flips a verdict under the null perturbation with probability 2q(1 − q) and meets a
  content-free answer with probability q, so a judge that is only noisy is not called lenient
  (the comparison errs on the safe side: its unmet → met flips alone, q(1 − q), would call a
  noisy judge lenient).

**The test** is McNemar's, exact and one-sided: if the kind is only more of the judge's noise, a
cell moved by one of the two and not the other is as likely to be moved by the kind as by the noise,
so ``b`` out of the ``b + c`` discordant cells is Binomial(b + c, ½), and the p-value is
P(X ≥ b) = Σ_{i ≥ b} C(b + c, i) / 2^(b + c) (McNemar 1947; the exact conditional form, e.g.
Fagerland, Lydersen & Laake 2013, BMC Medical Research Methodology 13:91). The kind is **beyond
noise** when p ≤ 0.05 (:data:`LEVEL`, one-sided: the direction is fixed before looking). Pairing
matters: an unsteady cell tends to move under both, and those cells (``a``) carry no evidence either
way. The shift reported is (b − c)/n: how much more often the kind moves a cell than the noise does.

**No correction across kinds.** Each kind answers its own question ("does padding buy a pass?")
at 5%: adding another kind to a run does not change it. Over the six kinds a judge with no bias
can show a false finding in a run: each kind at most 5% of the time (the exact conditional test
keeps its level), so at most 6 × 5% = 30% for the run; simulated judges turning verdicts over at
random (``bench/bench_probe_decisions.py``) show 2–14%. Repeat a finding with another ``--seed``
before acting on it alone. Per criterion, the same test runs on that criterion's cells at 0.05/k
for the kind's k criteria (Bonferroni within the kind): detail that says where a bias shows,
never a second decision.

**What the test cannot see.** With few cells, or much noise, even a real shift would not reach
p ≤ 0.05. The *detectable shift* is the smallest excess that could: the least ``b`` whose p-value
is ≤ the level given the ``c`` the noise produced, as (b − c)/n — a shift below it would not
show however the cells fell (a shift just at it shows only when it is observed in full). When it
exceeds :data:`BLIND_SHIFT` (20 points) the answer is *can't tell*, with that figure, instead of
"no finding". A shift of :data:`SUGGESTIVE_SHIFT` (10 points) or more that does not reach the
level is *suggestive: probe more samples* — also not a "no" (when the probe is also too weak,
the can't-tell reason says it leans that way if the shift is at least half the detectable one).
And a judge that gave one verdict to every cell of the run is named as such: perturbations
cannot reveal anything in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rubric_studio.core.intervals import CONFIDENCE, binomial_tail

#: The level each kind is decided at (one-sided).
LEVEL = 1 - CONFIDENCE
#: A detectable shift above this many points (as a share): the probe is too weak to say "no".
BLIND_SHIFT = 0.20
#: A shift of at least this much that does not reach the level reads "suggestive", not "no".
SUGGESTIVE_SHIFT = 0.10

BEYOND, NOT_BEYOND, SUGGESTIVE, CANT_TELL = "beyond", "not_beyond", "suggestive", "cant_tell"


def exceed_p(kind_only: int, noise_only: int) -> float:
    """The exact one-sided McNemar p-value: P(X ≥ ``kind_only``), X ~ Binomial(kind_only +
    noise_only, ½); 1.0 when no cell is discordant."""
    return binomial_tail(kind_only, kind_only + noise_only)


def cells_needed(noise_only: int, level: float = LEVEL) -> int:
    """The least number of cells moved by the kind alone that is beyond noise at ``level``, given
    ``noise_only`` cells moved by the noise alone."""
    needed = noise_only + 1
    while exceed_p(needed, noise_only) > level:
        needed += 1
    return needed


def detectable_shift(n: int, noise_only: int, level: float = LEVEL) -> float | None:
    """The smallest shift (kind − noise, a share of the ``n`` cells) the test could call beyond
    noise, given the noise as measured: (cells needed − noise only) / n; above 1.0 when even every
    cell moving would not do; None for n = 0."""
    if n <= 0:
        return None
    return (cells_needed(noise_only, level) - noise_only) / n


def leans(shift: float | None, detectable: float | None) -> bool:
    """Whether a shift that did not reach the level still leans towards a bias: at least
    :data:`SUGGESTIVE_SHIFT`, and at least half the shift the test could have seen (under heavy
    noise a 10-point shift is common by chance)."""
    if shift is None or shift < SUGGESTIVE_SHIFT:
        return False
    return detectable is None or shift >= detectable / 2


def cells(n: int) -> str:
    """``1 cell``, ``14 cells``."""
    return f"{n} cell" if n == 1 else f"{n} cells"


def floor_points(share: float) -> int:
    """A share as whole points, rounded down: "a shift below 35 points" stays true for 5/14 = 35.7."""
    return math.floor(share * 100 + 1e-9)


def points(share: float) -> str:
    """``+43`` or ``-2``: a shift in points, signed."""
    return f"{share * 100:+.0f}"


def p_text(p: float) -> str:
    """``p < 0.001`` or ``p = 0.031``."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


@dataclass(frozen=True)
class Table:
    """The paired cells of a kind against the noise (see the module docstring)."""

    both: int = 0
    kind_only: int = 0
    noise_only: int = 0
    neither: int = 0

    @property
    def n(self) -> int:
        return self.both + self.kind_only + self.noise_only + self.neither

    @property
    def kind_moved(self) -> int:
        return self.both + self.kind_only

    @property
    def noise_moved(self) -> int:
        return self.both + self.noise_only

    @property
    def shift(self) -> float | None:
        return (self.kind_only - self.noise_only) / self.n if self.n else None

    def __add__(self, other: Table) -> Table:
        return Table(self.both + other.both, self.kind_only + other.kind_only,
                     self.noise_only + other.noise_only, self.neither + other.neither)  # fmt: skip

    @classmethod
    def of(cls, pairs: list[tuple[bool, bool]]) -> Table:
        """From (kind moved, noise moved) per cell."""
        both = sum(1 for k, z in pairs if k and z)
        kind_only = sum(1 for k, z in pairs if k and not z)
        noise_only = sum(1 for k, z in pairs if z and not k)
        return cls(both, kind_only, noise_only, len(pairs) - both - kind_only - noise_only)


@dataclass(frozen=True)
class Reading:
    """How one table reads at one level: ``outcome`` one of beyond / not_beyond / suggestive /
    cant_tell, with the p-value and the detectable shift; ``why`` says why it can't tell (set
    for an outcome decided before any test: a constant judge, no cell that could move)."""

    outcome: str
    table: Table
    level: float
    p_value: float | None = None
    detectable: float | None = None
    why: str | None = None
    #: ``why`` in a few words, for a table column.
    why_short: str | None = None

    @property
    def beyond_noise(self) -> bool:
        return self.outcome == BEYOND

    @property
    def small(self) -> bool:
        """Too few cells (or too much noise) to see a shift of :data:`BLIND_SHIFT`."""
        return self.detectable is not None and self.detectable > BLIND_SHIFT

    def detectable_text(self) -> str:
        """``a shift below 35 points would not show`` (or, above 100, that none could)."""
        if self.detectable is None:
            return ""
        if self.detectable > 1.0:
            return "even every cell moving would not show"
        return f"a shift below {floor_points(self.detectable)} points would not show"


def read_table(table: Table, level: float = LEVEL) -> Reading:
    """The test on ``table`` at ``level``, and what it can and cannot say."""
    if table.n == 0:
        return Reading(CANT_TELL, table, level, why="no cell was judged under both")
    p = exceed_p(table.kind_only, table.noise_only)
    detectable = detectable_shift(table.n, table.noise_only, level)
    shift = table.shift or 0.0
    if p <= level and table.kind_only > table.noise_only:
        outcome = BEYOND
    elif detectable is not None and detectable > BLIND_SHIFT:
        outcome = CANT_TELL
    elif shift >= SUGGESTIVE_SHIFT:
        outcome = SUGGESTIVE
    else:
        outcome = NOT_BEYOND
    return Reading(outcome, table, level, p, detectable)


#: What a kind counts, as the report words it (see :func:`counted_label`).
FLIPPED, CONTENT_FREE_MET = "flipped", "content-free"


@dataclass(frozen=True)
class KindDecision:
    """A kind's one decision, pooled over its criteria: ``beyond_noise`` True, False, or None with
    the reason it can't tell (:meth:`reads`). ``counted``: what moved means for this kind
    ("unmet → met", "met → unmet", "flipped", "content-free", "towards a pass" …)."""

    reading: Reading
    counted: str

    @property
    def beyond_noise(self) -> bool | None:
        """True (beyond noise), False (not, and the probe could have seen a shift), None (can't tell)."""
        if self.reading.outcome == BEYOND:
            return True
        return False if self.reading.outcome == NOT_BEYOND else None

    @property
    def cant_tell(self) -> str | None:
        """Why the probe can't tell (small n, a constant judge, a suggestive shift …), else None."""
        return self.reads() if self.beyond_noise is None else None

    def counts(self) -> str:
        """``16 of 37 unmet → met, 0 of 37 under the noise``."""
        t = self.reading.table
        if self.counted == CONTENT_FREE_MET:
            return f"met {t.kind_moved} of {t.n} content-free answers, the noise flipped {t.noise_moved} of {t.n}"
        what = "cells flipped" if self.counted == FLIPPED else self.counted
        return f"{t.kind_moved} of {t.n} {what}, {t.noise_moved} of {t.n} under the noise"

    def _figures(self) -> str:
        r = self.reading
        return f"{points(r.table.shift or 0.0)} points, exact one-sided {p_text(r.p_value if r.p_value is not None else 1.0)}"

    def reads(self, compact: bool = False) -> str:
        """The decision in words (``compact``: for a table column)."""
        r = self.reading
        if r.why:
            return (r.why_short or r.why) if compact else r.why
        shift = r.table.shift or 0.0
        p = p_text(r.p_value if r.p_value is not None else 1.0)
        seen = "" if r.detectable is None else str(math.ceil(r.detectable * 100 - 1e-9))
        if r.outcome == BEYOND:
            return f"beyond noise: {points(shift)} pts, {p}" if compact else (
                f"beyond this judge's noise: {self.counts()} ({self._figures()})")
        if r.outcome == NOT_BEYOND:
            return f"not beyond noise: {points(shift)} pts; ≥ {seen} would show" if compact else (
                f"not beyond this judge's noise: {self.counts()} ({self._figures()}); "
                f"a shift of {seen} points or more would have shown")
        if r.outcome == SUGGESTIVE:
            return f"suggestive: {points(shift)} pts, {p}: probe more" if compact else (
                f"suggestive: probe more samples — {self.counts()} ({self._figures()})")
        unseen = r.detectable_text()
        if compact:
            if r.detectable is not None and r.detectable > 1.0:
                return f"can't tell: {cells(r.table.n)}, too few"
            return f"can't tell: {cells(r.table.n)}, < {floor_points(r.detectable or 0.0)} pts unseen"
        lean = (f" — {self.counts()} ({points(shift)} points): suggestive, probe more samples"
                if leans(shift, r.detectable) else f" ({self.counts()})")  # fmt: skip
        return f"can't tell with {cells(r.table.n)}: {unseen}{lean}"

    def json_value(self) -> bool | dict[str, str]:
        """``beyond_noise`` in the report: true, false or ``{"cant_tell": why}``."""
        verdict = self.beyond_noise
        return {"cant_tell": self.reads()} if verdict is None else verdict

    def to_dict(self) -> dict[str, object]:
        r, t = self.reading, self.reading.table
        return {
            "counted": self.counted, "cells": t.n, "moved": t.kind_moved, "noise_moved": t.noise_moved,
            "both": t.both, "kind_only": t.kind_only, "noise_only": t.noise_only,
            "shift": None if t.shift is None else round(t.shift, 4),
            "p_value": None if r.p_value is None else round(r.p_value, 6), "level": round(r.level, 6),
            "detectable_shift": None if r.detectable is None else round(r.detectable, 4),
            "reading": r.outcome,
        }  # fmt: skip


def counted_label(direction: str | None, penalties: list[bool], leniency: bool = False) -> str:
    """What a kind counts as moved, in words: any flip (no direction), a content-free answer met
    (leniency), else the direction's verdicts — "unmet → met" towards the favourable verdict on
    criteria that are not penalties, "towards a pass" when the kind's criteria mix both."""
    if leniency:
        return CONTENT_FREE_MET
    if direction is None:
        return FLIPPED
    favourable = direction == "favourable"
    if penalties and all(penalties):
        return "met → unmet" if favourable else "unmet → met"
    if any(penalties):
        return "towards a pass" if favourable else "towards a fail"
    return "unmet → met" if favourable else "met → unmet"
