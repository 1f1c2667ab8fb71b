"""Fitting a rubric to human labels: pass_threshold and criterion weights.

No judge calls: the cells of every labelled sample are already known, so a
candidate rubric is re-scored with the rule of docs/concepts/scoring.md#sample-score-and-verdict
(:func:`case_score`, the same arithmetic as :func:`~rubric_studio.core.scoring.score_sample`, which the tests
hold it to; a required criterion unmet still fails the sample). Only samples with a human verdict and a pass/fail rubric
verdict take part.

* **Threshold**: every distinct cut between the observed sample scores is tried
  (equivalent to trying the midpoints between consecutive scores, plus "all pass"
  and "all fail"); the cut with the highest Cohen's kappa wins, then accuracy, then
  the cut nearest the current threshold. Within the winning cut the current
  threshold is kept if it lies there, else the roundest value in the middle half of
  the cut (e.g. 0.55 for scores 0.5 | 0.6).
* **Weights**: coordinate search — each criterion's weight is tried on a grid of
  0.5 steps (sign kept: penalties stay negative; required flags untouched), with
  the threshold re-fitted for each trial, repeated until no change helps. Ties
  prefer weights closer to the current ones.
* **Holdout**: a seeded, stratified split (``holdout`` share of each human class,
  when there are at least :data:`MIN_FOR_HOLDOUT` labels). The fit sees only the
  training part; agreement of the current and the fitted rubric is reported on
  both parts, so over-fitting shows: ``overfit`` when the holdout gets worse,
  ``unconfirmed`` when train improves but an imperfect holdout does not.

:func:`apply_fit` (:mod:`.fit_write`) writes the result into the rubric file, changing
only ``pass_threshold`` and ``weight`` values (round-trip YAML, atomic write).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.results import SampleResult, Status, Verdict
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.scoring import EPSILON
from rubric_studio.engine.fit._write import apply_fit as apply_fit  # where callers have always found it

MIN_FOR_HOLDOUT = 8
WEIGHT_STEP = 0.5
MAX_WEIGHT = 5.0
MAX_PASSES = 6


@dataclass(frozen=True)
class Case:
    """One labelled sample, reduced to what scoring needs."""

    id: str
    human_pass: bool
    cells: tuple[tuple[int, float], ...]  # (criterion index, score) of met/unmet cells
    required_unmet: bool


def cases_from(samples: Sequence[SampleResult], labels: Mapping[str, Label], rubric: Rubric) -> list[Case]:
    """The samples that can take part in a fit, as :class:`Case`s."""
    index = {c.key: i for i, c in enumerate(rubric.criteria)}
    out = []
    for sample in samples:
        label = labels.get(sample.id)
        if label is None or label.verdict is None or sample.verdict not in (Verdict.PASS, Verdict.FAIL):
            continue
        cells, required_unmet = [], False
        for cell in sample.criteria:
            if cell.id not in index or cell.status not in (Status.MET, Status.UNMET):
                continue
            cells.append((index[cell.id], cell.score if cell.score is not None else 0.0))
            required_unmet |= rubric.criteria[index[cell.id]].required and cell.status is Status.UNMET
        out.append(Case(sample.id, label.verdict == "pass", tuple(cells), required_unmet))
    return out


def case_score(case: Case, weights: Sequence[float]) -> float:
    """The score of docs/concepts/scoring.md#sample-score-and-verdict, as
    :func:`~rubric_studio.core.scoring.score_sample` computes it."""
    positive = sum(weights[i] for i, _ in case.cells if weights[i] > 0)
    total = sum(weights[i] * s for i, s in case.cells)
    if positive <= 0:
        return 0.0 if total < 0 else 1.0
    return min(1.0, max(0.0, total / positive))


def evaluate(cases: Sequence[Case], weights: Sequence[float], threshold: float) -> Agreement:
    """Agreement of the rubric with these weights and threshold on ``cases``."""
    return Agreement.of(
        (c.human_pass, not c.required_unmet and case_score(c, weights) >= threshold - EPSILON) for c in cases
    )


def _key(agreement: Agreement) -> tuple[float, float]:
    kappa = agreement.kappa
    return (-2.0 if kappa is None else round(kappa, 9), round(agreement.accuracy or 0.0, 9))


def _roundest(lo: float, hi: float) -> float:
    """A short decimal in the middle half of the cut (lo, hi]."""
    width = hi - lo
    middle = (lo + hi) / 2
    low, high = lo + width / 4, hi - width / 4
    for digits in range(1, 5):
        step = 10**-digits
        first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
        if first <= last:
            best = min(range(first, last + 1), key=lambda k: (abs(k * step - middle), k))
            return round(best * step, digits)
    return round(middle, 6)


def fit_threshold(cases: Sequence[Case], weights: Sequence[float], current: float) -> tuple[float, Agreement]:
    """The pass_threshold with the best agreement for fixed ``weights`` (see module docstring)."""
    fixed = [c for c in cases if c.required_unmet]
    scored = sorted((case_score(c, weights), c.human_pass) for c in cases if not c.required_unmet)
    values = sorted({s for s, _ in scored})
    base_fail_pass = sum(1 for c in fixed if c.human_pass)
    base_fail_fail = len(fixed) - base_fail_pass
    scores = [s for s, _ in scored]
    suffix_pass = [0] * (len(scored) + 1)  # human-pass among scored[i:]
    for i in range(len(scored) - 1, -1, -1):
        suffix_pass[i] = suffix_pass[i + 1] + (1 if scored[i][1] else 0)
    total_pass = suffix_pass[0]
    # Cut j: thresholds in (bounds[j], bounds[j + 1]]; samples scoring above bounds[j] pass.
    bounds = [-math.inf, *values]
    if not values or values[-1] < 1.0:
        bounds.append(1.0)
    best: tuple[Any, ...] | None = None
    for j in range(len(bounds) - 1):
        lo, hi = bounds[j], bounds[j + 1]
        start = bisect.bisect_right(scores, lo)  # first sample that passes
        r_pass_h_pass = suffix_pass[start]
        r_pass = len(scored) - start
        agreement = Agreement(
            both_pass=r_pass_h_pass,
            both_fail=(start - (total_pass - r_pass_h_pass)) + base_fail_fail,
            rubric_pass_human_fail=r_pass - r_pass_h_pass,
            rubric_fail_human_pass=(total_pass - r_pass_h_pass) + base_fail_pass,
        )
        low = 0.0 if lo == -math.inf else lo
        inside = low < current <= hi or (lo == -math.inf and current <= hi)
        distance = 0.0 if inside else min(abs(current - low), abs(current - hi))
        key = (*_key(agreement), -distance)
        if best is None or key > best[0]:
            best = (key, lo, hi, inside, agreement)
    assert best is not None
    _, lo, hi, inside, agreement = best
    if inside:
        return current, agreement
    return (_roundest(0.0, hi) if lo == -math.inf else _roundest(lo, hi)), agreement


def _grid(weight: float) -> list[float]:
    top = max(MAX_WEIGHT, abs(weight))
    steps = [WEIGHT_STEP * k for k in range(1, int(top / WEIGHT_STEP) + 1)]
    return steps if weight > 0 else [-s for s in steps]


def fit_weights(
    cases: Sequence[Case], rubric: Rubric, threshold: float
) -> tuple[list[float], float, Agreement]:
    """Coordinate search over weights (threshold re-fitted each trial); see module docstring."""
    current = [c.weight for c in rubric.criteria]
    used = sorted({i for case in cases for i, _ in case.cells})

    def score(weights: list[float]) -> tuple[tuple[float, ...], float, Agreement]:
        t, agreement = fit_threshold(cases, weights, threshold)
        distance = sum(abs(w - c) for w, c in zip(weights, current, strict=True))
        return (*_key(agreement), -round(distance, 9), -abs(t - threshold)), t, agreement

    weights = list(current)
    best = score(weights)
    for _ in range(MAX_PASSES):
        improved = False
        for i in used:
            for candidate in _grid(current[i]):
                if candidate == weights[i]:
                    continue
                trial = [*weights[:i], candidate, *weights[i + 1 :]]
                result = score(trial)
                if result[0] > best[0]:
                    best, weights, improved = result, trial, True
        if not improved:
            break
    return weights, best[1], best[2]


def split(cases: Sequence[Case], fraction: float, seed: int) -> tuple[list[Case], list[Case]]:
    """Seeded split stratified by human verdict: (train, holdout)."""
    if len(cases) < MIN_FOR_HOLDOUT or fraction <= 0:
        return list(cases), []
    rng = random.Random(seed)
    holdout_ids: set[str] = set()
    for human_pass in (True, False):
        ids = sorted(c.id for c in cases if c.human_pass is human_pass)
        rng.shuffle(ids)
        holdout_ids.update(ids[: round(len(ids) * fraction)])
    return [c for c in cases if c.id not in holdout_ids], [c for c in cases if c.id in holdout_ids]


@dataclass
class FitResult:
    """A fitted threshold and weights, with agreement before/after on train and holdout."""

    rubric_hash: str
    current_threshold: float
    threshold: float
    current_weights: dict[str, float]
    weights: dict[str, float]
    threshold_only: float  # best threshold keeping the current weights
    seed: int
    holdout_fraction: float
    train_ids: list[str]
    holdout_ids: list[str]
    train: dict[str, Agreement]  # "current" / "fitted"
    holdout: dict[str, Agreement] | None
    all: dict[str, Agreement]
    warnings: list[str] = field(default_factory=list)

    @property
    def changed_weights(self) -> dict[str, tuple[float, float]]:
        return {k: (self.current_weights[k], w) for k, w in self.weights.items() if w != self.current_weights[k]}

    @property
    def changed(self) -> bool:
        return bool(self.changed_weights) or self.threshold != self.current_threshold

    @property
    def overfit(self) -> bool:
        """The fitted rubric agrees less with the holdout labels than the current one."""
        if not self.holdout:
            return False
        return _key(self.holdout["fitted"]) < _key(self.holdout["current"])

    @property
    def unconfirmed(self) -> bool:
        """Train agreement improved, but the holdout (not already perfect) did not."""
        if not self.holdout or self.holdout["current"].accuracy in (None, 1.0):
            return False
        return _key(self.train["fitted"]) > _key(self.train["current"]) and not (
            _key(self.holdout["fitted"]) > _key(self.holdout["current"])
        )

    def fitted_rubric(self, rubric: Rubric) -> Rubric:
        """A copy of ``rubric`` with the fitted threshold and weights."""
        copy = rubric.model_copy(deep=True)
        copy.pass_threshold = self.threshold
        for criterion in copy.criteria:
            criterion.weight = self.weights.get(criterion.key, criterion.weight)
        copy._source_text = None
        copy._scoring_plan = None  # the copy's cached plan holds the old weights
        return copy

    def to_dict(self) -> dict[str, Any]:
        """The ``fit`` key of ``calibrate --format json``."""

        def pair(d: dict[str, Agreement] | None) -> dict[str, Any] | None:
            return None if d is None else {k: v.to_dict() for k, v in d.items()}

        return {
            "pass_threshold": {"current": self.current_threshold, "fitted": self.threshold,
                               "threshold_only": self.threshold_only},
            "weights": {k: {"current": self.current_weights[k], "fitted": w} for k, w in self.weights.items()},
            "changed": self.changed,
            "split": {"seed": self.seed, "holdout_fraction": self.holdout_fraction, "train": len(self.train_ids),
                      "holdout": len(self.holdout_ids), "holdout_ids": list(self.holdout_ids)},
            "train": pair(self.train),
            "holdout": pair(self.holdout),
            "all": pair(self.all),
            "overfit": self.overfit,
            "unconfirmed": self.unconfirmed,
            "warnings": list(self.warnings),
        }  # fmt: skip


def fit(
    rubric: Rubric,
    samples: Sequence[SampleResult],
    labels: Mapping[str, Label],
    *,
    seed: int = 0,
    holdout: float = 0.3,
    weights: bool = True,
) -> FitResult:
    """Fit threshold (and weights unless ``weights=False``) to the labels; see the module docstring."""
    cases = cases_from(samples, labels, rubric)
    train, held = split(cases, holdout, seed)
    current = [c.weight for c in rubric.criteria]
    threshold_only, _ = fit_threshold(train, current, rubric.pass_threshold)
    if weights:
        fitted, threshold, _ = fit_weights(train, rubric, rubric.pass_threshold)
    else:
        fitted, threshold = current, threshold_only
    ids = [c.key for c in rubric.criteria]

    def both(subset: Sequence[Case]) -> dict[str, Agreement]:
        return {"current": evaluate(subset, current, rubric.pass_threshold), "fitted": evaluate(subset, fitted, threshold)}

    result = FitResult(
        rubric_hash=rubric.content_hash(),
        current_threshold=rubric.pass_threshold,
        threshold=threshold,
        current_weights=dict(zip(ids, current, strict=True)),
        weights=dict(zip(ids, fitted, strict=True)),
        threshold_only=threshold_only,
        seed=seed,
        holdout_fraction=holdout if held else 0.0,
        train_ids=[c.id for c in train],
        holdout_ids=[c.id for c in held],
        train=both(train),
        holdout=both(held) if held else None,
        all=both(cases),
    )
    result.warnings = _warnings(result, len(cases))
    return result


def _warnings(result: FitResult, n: int) -> list[str]:
    out = []
    if n == 0:
        out.append("nothing to fit: no labelled sample has a pass/fail rubric verdict")
    elif not result.holdout:
        out.append(f"only {n} labelled samples: no holdout (needs {MIN_FOR_HOLDOUT}); the fit may not generalise")
    if result.holdout:
        before, after = result.holdout["current"], result.holdout["fitted"]
        change = (f"holdout accuracy {_pct(before.accuracy)} → {_pct(after.accuracy)}, "
                  f"kappa {_fmt(before.kappa)} → {_fmt(after.kappa)}")  # fmt: skip
        if result.overfit:
            out.append(f"likely over-fitting: the fit agrees worse with the holdout labels ({change}); "
                       "label more samples before accepting")  # fmt: skip
        elif result.unconfirmed:
            out.append(f"the holdout does not confirm the training gain ({change}); it may not generalise")
    return out


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
