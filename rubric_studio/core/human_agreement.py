"""Agreement among people, and whether the judge is within it.

Over the labels of several annotators (:attr:`~rubric_studio.core.labels.LabelSet.by_annotator`;
the ``adjudicated`` label is no annotator here: it only settles consensus). An *item* is a
sample's verdict (pass / fail; "overall") or one criterion's cell (met / unmet; "per criterion").

Definitions::

    pairwise kappa        Cohen's kappa of two annotators over the items both labelled, with
                          the 95% interval of :mod:`rubric_studio.core.agreement` (Wilson's
                          score interval of the observed agreement mapped to kappa,
                          :mod:`rubric_studio.core.intervals`); None below 2 shared items. Only
                          pairs sharing an item are reported; beyond PAIRS_LISTED pairs, the
                          lowest LOWEST_NAMED are named and ``pairs_summary`` gives how many pairs
                          there are and their kappas' min / median / max
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

import heapq
import math
import random
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from rubric_studio.core.agreement import MIN_KAPPA_ITEMS, Agreement, _round
from rubric_studio.core.intervals import percentile_bounds
from rubric_studio.core.labels import ADJUDICATED, Label, annotator_names, consensus
from rubric_studio.core.results import SampleResult, Status, Verdict

#: Items two raters must share for their kappa to count in the within-humans verdict.
MIN_OVERLAP = 5
#: Pairs of annotators listed one by one (all pairs of 10 annotators); beyond, the lowest are named.
PAIRS_LISTED = 45
#: Pairs named when there are more than PAIRS_LISTED.
LOWEST_NAMED = 10
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
# An item with m values, c_v of them v, adds to the coincidence matrix o_vw = c_v·c_w / (m − 1)
# (v ≠ w) and o_vv = c_v·(c_v − 1) / (m − 1): its row sums are c_v, so the marginals n_v are the
# value counts over the pairable items, and its observed disagreement is
# Σ_{v,w} c_v·c_w·δ(v, w) / (m − 1). Alpha needs only those sums: each item is read once, in
# O(values it holds) (O(values²) for the interval metric, at most 11 values on 0–10), never
# pair by pair of the raters who labelled it.
def _delta(metric: str) -> Any:
    if metric == "nominal":
        return lambda a, b: float(a != b)
    return lambda a, b: (float(a) - float(b)) ** 2


def _unit(values: Sequence[Any], metric: str) -> tuple[dict[Any, int], float]:
    """One pairable item: its value counts and its observed disagreement."""
    counts: dict[Any, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    m = len(values)
    if metric == "nominal":
        observed = (m * m - sum(c * c for c in counts.values())) / (m - 1)
    else:
        delta = _delta(metric)
        observed = sum(ca * cb * delta(a, b) for a, ca in counts.items() for b, cb in counts.items()) / (m - 1)
    return counts, observed


def _rows(units: Sequence[tuple[dict[Any, int], float]]) -> tuple[list[Any], list[tuple[float, ...]]]:
    """The values met, and each item as ``(observed, count of each value...)`` in that order."""
    values = list(dict.fromkeys(value for counts, _ in units for value in counts))
    return values, [(observed, *(counts.get(v, 0) for v in values)) for counts, observed in units]


def _alpha_of_rows(values: list[Any], rows: Sequence[tuple[float, ...]], metric: str) -> float | None:
    """Alpha from items' rows (see :func:`_rows`); None without disagreement to expect (one value
    throughout)."""
    if not rows:
        return None
    observed, *marginals = (sum(column) for column in zip(*rows, strict=True))
    n = sum(marginals)
    delta = _delta(metric)
    expected = sum(ma * mb * delta(a, b) for a, ma in zip(values, marginals, strict=True)
                   for b, mb in zip(values, marginals, strict=True))
    if n <= 1 or expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def krippendorff_alpha(units: Iterable[Sequence[Any]], metric: str = "nominal") -> float | None:
    """Krippendorff's alpha of items, each the values its raters gave (items with fewer than 2 are
    not pairable and are left out). ``metric``: ``nominal`` or ``interval``."""
    return _alpha_of_rows(*_rows([_unit(u, metric) for u in units if len(u) >= 2]), metric)


def alpha_with_ci(units: Iterable[Sequence[Any]], metric: str = "nominal") -> dict[str, Any] | None:
    """``{"value", "ci", "n"}`` (n: pairable items), the interval bootstrapped over items; None when
    no item has two values."""
    pairable = [_unit(u, metric) for u in units if len(u) >= 2]
    if not pairable:
        return None
    values, rows = _rows(pairable)
    value = _alpha_of_rows(values, rows, metric)
    draws = random.Random(BOOTSTRAP_SEED)
    boots: list[float] = []
    for _ in range(BOOTSTRAP_RESAMPLES if value is not None else 0):
        alpha = _alpha_of_rows(values, draws.choices(rows, k=len(rows)), metric)
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


def _table(n: int, both: int, a_pos: int, b_pos: int) -> Agreement:
    """The 2×2 table of a pair (``a`` in the human slot) from its counts."""
    return Agreement(both, n - a_pos - b_pos + both, b_pos - both, a_pos - both)


def _masks(ratings: Ratings, items: Mapping[str, int], positive: str) -> dict[str, tuple[int, int]]:
    """rater -> (items rated, items rated positive), each a bit set over ``items``."""
    masks: dict[str, tuple[int, int]] = {}
    for name, given in ratings.items():
        rated = positive_bits = 0
        for item, value in given.items():
            bit = 1 << items[item]
            rated |= bit
            if value == positive:
                positive_bits |= bit
        masks[name] = (rated, positive_bits)
    return masks


def _bits(mask: int) -> Iterator[int]:  # written out in pairwise's hot loop
    """The indexes of the bits set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


_Rater = tuple[str, int, int]  # name, items rated, items rated positive (bit sets)
_Defined = tuple[bool, float, int, str, str, int, int, int]  # uncounted?, kappa, −n, a, b, both, a_pos, b_pos


def _shares(raters: list[_Rater], n_items: int) -> list[tuple[int, int]]:
    """Per rater, the later raters (bit set over rater indexes) sharing an item, and sharing two or more."""
    by_item = [0] * n_items
    for index, (_, rated, _) in enumerate(raters):
        for item in _bits(rated):
            by_item[item] |= 1 << index
    shares = []
    for index, (_, rated, _) in enumerate(raters):
        later = -1 << (index + 1)
        once = twice = 0
        for item in _bits(rated):
            twice |= once & by_item[item]
            once |= by_item[item]
        shares.append((once & later, twice & later))
    return shares


def _visit(raters: list[_Rater], others_of: list[int],
           keep: bool) -> tuple[list[tuple[str, str, int, int, int, int]], list[_Defined]]:
    """The pairs among them with a kappa (for ranking) of each rater with the later raters
    ``others_of`` names, and (``keep``) every such pair's 2×2 counts, in rater order."""
    found: list[tuple[str, str, int, int, int, int]] = []
    defined: list[_Defined] = []
    isclose = math.isclose
    for index, (a, rated_a, pos_a) in enumerate(raters):
        others = others_of[index]
        while others:  # the hot loop: _bits and the kappa of Agreement written out
            low = others & -others
            others ^= low
            b, rated_b, pos_b = raters[low.bit_length() - 1]
            shared = rated_a & rated_b
            n = shared.bit_count()
            both = (pos_a & pos_b).bit_count()
            a_pos, b_pos = (pos_a & shared).bit_count(), (pos_b & shared).bit_count()
            if keep:
                found.append((a, b, n, both, a_pos, b_pos))
            if n < MIN_KAPPA_ITEMS:
                continue
            p_o = (2 * both + n - a_pos - b_pos) / n
            p_e = (b_pos * a_pos + (n - b_pos) * (n - a_pos)) / (n * n)
            if not isclose(p_e, 1.0):
                defined.append((n < MIN_OVERLAP, (p_o - p_e) / (1 - p_e), -n, a, b, both, a_pos, b_pos))
    return found, defined


def pairwise(ratings: Ratings, positive: str) -> dict[str, Any]:
    """Cohen's kappa of every pair of raters who share an item (pairs sharing none are left out).

    ``pairs`` lists them all (in rater order) up to :data:`PAIRS_LISTED`; beyond, it lists the
    :data:`LOWEST_NAMED` lowest — first among the pairs sharing :data:`MIN_OVERLAP` items or more,
    by kappa — and ``summary`` says how many there are and their kappas' min / median / max.
    ``counted``: the kappas of pairs sharing :data:`MIN_OVERLAP` items or more (the within-humans
    verdict's).

    Raters and items are bit sets: for each rater, OR-ing the rater sets of the items they rated
    gives every later rater who shares one (counted, never visited), and the raters met twice on
    the way are those sharing two or more — the only pairs with a kappa, and the only ones visited
    (their items are intersected as bit sets). The cost follows the pairs with a kappa, not the
    square of the raters.
    """
    items = {item: index for index, item in enumerate(dict.fromkeys(i for v in ratings.values() for i in v))}
    masks = _masks(ratings, items, positive)
    raters = [(name, *masks[name]) for name in ratings if masks[name][0]]
    shares = _shares(raters, len(items))
    overlapping = sum(once.bit_count() for once, _ in shares)
    listed_all = overlapping <= PAIRS_LISTED
    found, defined = _visit(raters, [once if listed_all else twice for once, twice in shares], listed_all)
    if listed_all:
        listed = [(a, b, _table(n, both, a_pos, b_pos)) for a, b, n, both, a_pos, b_pos in found]
    else:
        lowest = heapq.nsmallest(LOWEST_NAMED, defined)
        listed = [(a, b, _table(-neg_n, both, a_pos, b_pos)) for _, _, neg_n, a, b, both, a_pos, b_pos in lowest]
    kappas = [entry[1] for entry in defined]
    summary = {
        "pairs": overlapping,
        "with_kappa": len(kappas),
        "sharing_min_overlap": sum(1 for entry in defined if not entry[0]),
        "kappa_min": _round(min(kappas)) if kappas else None,
        "kappa_median": _round(statistics.median(kappas)) if kappas else None,
        "kappa_max": _round(max(kappas)) if kappas else None,
        "listed": "all" if listed_all else "lowest",
    }
    return {
        "pairs": [{"a": a, "b": b, **_kappa_entry(table)} for a, b, table in listed],
        "summary": summary,
        "counted": [entry[1] for entry in defined if not entry[0]],
    }


def _counted(agreement: Agreement) -> bool:
    return agreement.n >= MIN_OVERLAP and agreement.kappa is not None


def within_humans(human: list[float], judge: list[Agreement]) -> tuple[bool | None, dict[str, Any]]:
    """The judge-within-humans verdict (see the module docstring) and the figures it rests on;
    ``human``: the kappas of the pairs of annotators that count."""
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
    pairs = pairwise(ratings, positive)
    versus = {name: pair_agreement(ratings[name], judge, positive) for name in names if ratings[name]}
    units: dict[str, list[Any]] = {}
    for name in names:
        for item, value in ratings[name].items():
            units.setdefault(item, []).append(value)
    verdict, figures = within_humans(pairs["counted"], list(versus.values()))
    return {
        "pairs": pairs["pairs"],
        "pairs_summary": pairs["summary"],
        "alpha": alpha_with_ci(units.values()) if len(names) >= 3 else None,
        "judge_vs": {name: _kappa_entry(p) for name, p in versus.items()},
        "judge_vs_consensus": _kappa_entry(pair_agreement(agreed, judge, positive)),
        "judge_within_humans": verdict,
        "within_humans": figures,
    }


# -- words shared by the reports and the studio ----------------------------------------------
#: Annotators named in a heading; beyond, their number and the first few.
NAMES_SHOWN = 8


def annotators_text(names: list[str]) -> str:
    """The annotators, or their number and the first few when there are many."""
    if len(names) <= NAMES_SHOWN:
        return ", ".join(names)
    return f"{len(names)} annotators ({', '.join(names[:NAMES_SHOWN])}, …)"


def open_count(queue: list[dict[str, Any]]) -> int:
    """Disagreements between annotators not adjudicated yet: what "to adjudicate" counts everywhere."""
    return sum(1 for item in queue if item["adjudicated"] is None)


def adjudication_words(queue: list[dict[str, Any]]) -> str:
    """``2 to adjudicate (1 of 3 disagreements between annotators settled)``."""
    open_ = open_count(queue)
    return f"{open_} to adjudicate ({len(queue) - open_} of {len(queue)} disagreements between annotators settled)"


# -- the report ---------------------------------------------------------------------------
def _ratings(
    by_sample: Mapping[str, Mapping[str, Label]], names: list[str], criterion: str | None
) -> Ratings:
    """rater -> sample -> verdict (``criterion`` None) or that criterion's met / unmet."""
    out: Ratings = {name: {} for name in names}
    for sample_id, labels in by_sample.items():
        for name, label in labels.items():
            if name not in out:
                continue
            value = label.verdict if criterion is None else label.criteria.get(criterion)
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
        [label.score for n, label in labels.items() if n != ADJUDICATED and label.score is not None]
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
