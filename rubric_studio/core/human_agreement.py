"""Agreement among people, and whether the judge is within it.

Over the labels of several annotators (:attr:`~rubric_studio.core.labels.LabelSet.by_annotator`;
the ``adjudicated`` label is no annotator here: it only settles consensus). An *item* is a
sample's verdict (pass / fail; "overall") or one criterion's cell (met / unmet; "per criterion").

Definitions::

    pairwise kappa        Cohen's kappa of two annotators over the items both labelled, with
                          the 95% interval of :mod:`rubric_studio.core.agreement` (Wilson's
                          score interval of the observed agreement mapped to kappa,
                          :mod:`rubric_studio.core.intervals`); None below 2 shared items
    alpha                 Krippendorff's alpha (nominal) over every item at least two annotators
                          labelled, reported with 3 or more annotators: 1 − D_o / D_e from the
                          coincidence matrix; its 95% interval is a percentile bootstrap over the
                          items (1000 resamples, seed 0: the same labels give the same interval)
    score_alpha           the same with the interval metric (δ = (a − b)²) over 0–10 scores
    judge_vs[name]        Cohen's kappa of the judge against one annotator (same interval)
    judge_vs_consensus    against the consensus label (majority; a tie is no consensus; the
                          adjudicated label wins)
    judge_within_humans   True when the judge's mean kappa against the annotators is at least the
                          lowest kappa between two annotators: the judge disagrees with people no
                          more than people disagree with each other. Only pairs (of annotators, and
                          judge–annotator) sharing at least MIN_OVERLAP items with a defined kappa
                          count; None ("not enough overlap") when no pair of each kind does.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rubric_studio.core.agreement import Agreement, _round
from rubric_studio.core.intervals import percentile_bounds
from rubric_studio.core.labels import ADJUDICATED, Label, annotator_names, consensus
from rubric_studio.core.results import SampleResult, Status, Verdict

#: Items two raters must share for their kappa to count in the within-humans verdict.
MIN_OVERLAP = 5
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
CI_METHOD = (
    "pairwise and judge kappa: 95% Wilson score interval of observed agreement mapped to kappa; alpha: 95% percentile bootstrap over items "
    f"({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED})"
)
WITHIN_RULE = (
    f"judge's mean kappa against the annotators >= the lowest kappa between two annotators "
    f"(pairs sharing >= {MIN_OVERLAP} items)"
)
Ratings = dict[str, dict[str, Any]]  # rater -> item -> value


# -- Krippendorff's alpha -------------------------------------------------------------------
def _unit_coincidences(values: Sequence[Any]) -> dict[tuple[Any, Any], float]:
    """One item's contribution to the coincidence matrix: each ordered pair of its values, 1/(m − 1)."""
    m = len(values)
    found: dict[tuple[Any, Any], float] = {}
    for i, a in enumerate(values):
        for j, b in enumerate(values):
            if i != j:
                found[(a, b)] = found.get((a, b), 0.0) + 1 / (m - 1)
    return found


def _alpha_of(coincidences: Iterable[dict[tuple[Any, Any], float]], metric: str) -> float | None:
    """Alpha from items' coincidences; None without disagreement to expect (one value throughout)."""
    total: dict[tuple[Any, Any], float] = {}
    for unit in coincidences:
        for pair, weight in unit.items():
            total[pair] = total.get(pair, 0.0) + weight
    marginals: dict[Any, float] = {}
    for (a, _), weight in total.items():
        marginals[a] = marginals.get(a, 0.0) + weight
    n = sum(marginals.values())

    def delta(a: Any, b: Any) -> float:
        return float(a != b) if metric == "nominal" else (float(a) - float(b)) ** 2

    observed = sum(weight * delta(a, b) for (a, b), weight in total.items())
    expected = sum(marginals[a] * marginals[b] * delta(a, b) for a in marginals for b in marginals)
    if n <= 1 or expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def krippendorff_alpha(units: Iterable[Sequence[Any]], metric: str = "nominal") -> float | None:
    """Krippendorff's alpha of items, each the values its raters gave (items with fewer than 2 are
    not pairable and are left out). ``metric``: ``nominal`` or ``interval``."""
    return _alpha_of([_unit_coincidences(u) for u in units if len(u) >= 2], metric)


def alpha_with_ci(units: Iterable[Sequence[Any]], metric: str = "nominal") -> dict[str, Any] | None:
    """``{"value", "ci", "n"}`` (n: pairable items), the interval bootstrapped over items; None when
    no item has two values."""
    pairable = [_unit_coincidences(u) for u in units if len(u) >= 2]
    if not pairable:
        return None
    value = _alpha_of(pairable, metric)
    draws = random.Random(BOOTSTRAP_SEED)
    boots: list[float] = []
    for _ in range(BOOTSTRAP_RESAMPLES if value is not None else 0):
        alpha = _alpha_of(draws.choices(pairable, k=len(pairable)), metric)
        if alpha is not None:
            boots.append(alpha)
    ci = None
    if len(boots) >= 20:
        boots.sort()
        lo, hi = percentile_bounds(boots)
        ci = [_round(lo), _round(hi)]
    return {"value": _round(value), "ci": ci, "n": len(pairable)}


# -- pairs ------------------------------------------------------------------------------------
def pair_agreement(a: Mapping[str, str], b: Mapping[str, str], positive: str) -> Agreement:
    """Cohen's 2×2 table of two raters over the items both rated (``a`` in the human slot)."""
    shared = [item for item in a if item in b]
    return Agreement.of((a[item] == positive, b[item] == positive) for item in shared)


def _kappa_entry(agreement: Agreement) -> dict[str, Any]:
    ci = agreement.kappa_ci
    return {
        "kappa": _round(agreement.kappa),
        "ci": None if ci is None else [_round(ci[0]), _round(ci[1])],
        "n": agreement.n,
    }


def _counted(agreement: Agreement) -> bool:
    return agreement.n >= MIN_OVERLAP and agreement.kappa is not None


def within_humans(pairs: list[Agreement], judge: list[Agreement]) -> tuple[bool | None, dict[str, Any]]:
    """The judge-within-humans verdict (see the module docstring) and the figures it rests on."""
    human = [p.kappa for p in pairs if _counted(p)]
    judged = [p.kappa for p in judge if _counted(p)]
    figures: dict[str, Any] = {
        "rule": WITHIN_RULE,
        "human_kappa_min": _round(min(human)) if human else None,
        "human_kappa_max": _round(max(human)) if human else None,
        "judge_kappa_mean": _round(statistics.fmean(judged)) if judged else None,
    }
    if not human or not judged:
        whose = "two annotators" if not human else "the judge and an annotator"
        figures["reason"] = f"not enough overlap: no {whose} share {MIN_OVERLAP} items with a defined kappa"
        return None, figures
    verdict = statistics.fmean(judged) >= min(human)  # type: ignore[type-var]
    figures["reason"] = (
        f"judge's mean kappa {figures['judge_kappa_mean']:.2f} is "
        f"{'at least' if verdict else 'below'} the lowest human pair's {figures['human_kappa_min']:.2f}"
    )
    return verdict, figures


def _section(
    ratings: Ratings, judge: Mapping[str, str], agreed: Mapping[str, str], positive: str
) -> dict[str, Any]:
    """Pairs, alpha, judge against each and against the consensus, and the within verdict, for one kind of item."""
    names = list(ratings)
    pairs = [
        (a, b, pair_agreement(ratings[a], ratings[b], positive))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]
    versus = {name: pair_agreement(ratings[name], judge, positive) for name in names}
    items = dict.fromkeys(item for values in ratings.values() for item in values)
    units = [[ratings[name][item] for name in names if item in ratings[name]] for item in items]
    verdict, figures = within_humans([p for _, _, p in pairs], list(versus.values()))
    return {
        "pairs": [{"a": a, "b": b, **_kappa_entry(p)} for a, b, p in pairs],
        "alpha": alpha_with_ci(units) if len(names) >= 3 else None,
        "judge_vs": {name: _kappa_entry(p) for name, p in versus.items()},
        "judge_vs_consensus": _kappa_entry(pair_agreement(agreed, judge, positive)),
        "judge_within_humans": verdict,
        "within_humans": figures,
    }


# -- the report ---------------------------------------------------------------------------
def _ratings(
    by_sample: Mapping[str, Mapping[str, Label]], names: list[str], criterion: str | None
) -> Ratings:
    """rater -> sample -> verdict (``criterion`` None) or that criterion's met / unmet."""
    out: Ratings = {name: {} for name in names}
    for sample_id, labels in by_sample.items():
        for name in names:
            label = labels.get(name)
            value = (
                None
                if label is None
                else label.verdict
                if criterion is None
                else label.criteria.get(criterion)
            )
            if value is not None:
                out[name][sample_id] = value
    return out


def _judged(samples: Iterable[SampleResult], criterion: str | None) -> dict[str, str]:
    """The judge's pass / fail (or a criterion's met / unmet) by sample id, where it gave one."""
    out: dict[str, str] = {}
    for sample in samples:
        if criterion is None:
            if sample.verdict in (Verdict.PASS, Verdict.FAIL):
                out[sample.id] = str(sample.verdict)
            continue
        cell = sample.cell(criterion)
        if cell is not None and cell.status in (Status.MET, Status.UNMET):
            out[sample.id] = str(cell.status)
    return out


def human_disagreements(
    by_sample: Mapping[str, Mapping[str, Label]], criterion_ids: Sequence[str]
) -> list[dict[str, Any]]:
    """The adjudication queue: each verdict or cell two annotators labelled differently, with every
    annotator's value, the adjudicated value (None: not yet) and the consensus it makes."""
    queue: list[dict[str, Any]] = []
    for sample_id, labels in by_sample.items():
        people = {n: lab for n, lab in labels.items() if n != ADJUDICATED}
        settled, agreed = labels.get(ADJUDICATED, Label()), consensus(labels)
        for criterion in (None, *criterion_ids):
            given = {
                n: (lab.verdict if criterion is None else lab.criteria.get(criterion))
                for n, lab in people.items()
            }
            given = {n: v for n, v in given.items() if v is not None}
            if len(set(given.values())) < 2:
                continue
            queue.append({
                "id": sample_id, "criterion": criterion, "labels": given,
                "adjudicated": settled.verdict if criterion is None else settled.criteria.get(criterion),
                "consensus": agreed.verdict if criterion is None else agreed.criteria.get(criterion),
            })  # fmt: skip
    return queue


def human_agreement(
    by_sample: Mapping[str, Mapping[str, Label]],
    samples: Iterable[SampleResult],
    criterion_ids: Sequence[str],
) -> dict[str, Any]:
    """The ``humans`` object of ``calibrate``'s JSON (see the module docstring)."""
    samples = list(samples)
    names = [n for n in annotator_names(by_sample) if n != ADJUDICATED]
    agreed = {sid: consensus(labels) for sid, labels in by_sample.items() if labels}
    overall = _section(
        _ratings(by_sample, names, None),
        _judged(samples, None),
        {sid: lab.verdict for sid, lab in agreed.items() if lab.verdict},
        "pass",
    )
    per_criterion = {}
    for criterion in criterion_ids:
        ratings = _ratings(by_sample, names, criterion)
        if any(ratings.values()):
            cells = {sid: lab.criteria[criterion] for sid, lab in agreed.items() if criterion in lab.criteria}
            per_criterion[criterion] = _section(ratings, _judged(samples, criterion), cells, "met")
    scores = [
        [labels[n].score for n in names if n in labels and labels[n].score is not None]
        for labels in by_sample.values()
    ]
    return {
        "annotators": names,
        "adjudicated": sum(1 for labels in by_sample.values() if ADJUDICATED in labels),
        "ci_method": CI_METHOD,
        **overall,
        "score_alpha": alpha_with_ci(scores, "interval") if len(names) >= 3 else None,
        "per_criterion": per_criterion,
        "disagreements": human_disagreements(by_sample, criterion_ids),
    }
