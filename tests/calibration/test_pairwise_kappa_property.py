"""The pairwise kappas among annotators are computed over bit sets (:func:`rubric_studio.core.
human_agreement.pairwise`, with the kappa of :class:`~rubric_studio.core.agreement.Agreement`
written out in its hot loop); on generated ratings they must be the kappas ``Agreement`` gives
pair by pair, over the items both raters labelled.

The reference here walks every pair of raters the plain way and ranks them with exact fractions,
so a pair left out, a miscounted item or a kappa off in its arithmetic shows as a difference."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_studio.core.agreement import MIN_KAPPA_ITEMS, Agreement, _round
from rubric_studio.core.human_agreement import (
    LOWEST_NAMED,
    MIN_OVERLAP,
    PAIRS_LISTED,
    pair_agreement,
    pairwise,
)

POSITIVE = "pass"
RATERS = [f"r{index:02d}" for index in range(14)]
ITEMS = [f"s{index}" for index in range(24)]


@st.composite
def ratings(draw) -> dict[str, dict[str, str]]:
    """rater -> item -> value: up to 14 raters (so more than PAIRS_LISTED pairs sometimes), each over
    a subset of the items, some raters with none, values mostly pass / fail and now and then another."""
    raters = draw(st.permutations(RATERS))[: draw(st.one_of(st.integers(0, 6), st.integers(10, len(RATERS))))]
    pool = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=len(ITEMS), unique=True))
    value = st.sampled_from(["pass", "fail", "pass", "fail", "unsure"])
    least = draw(st.integers(0, min(2, len(pool))))
    return {name: draw(st.dictionaries(st.sampled_from(pool), value, min_size=least, max_size=len(pool)))
            for name in raters}  # fmt: skip


def exact_kappa(table: Agreement) -> Fraction | None:
    """Cohen's kappa of ``table`` as a fraction (None where ``Agreement.kappa`` is None)."""
    n = table.n
    if n < MIN_KAPPA_ITEMS:
        return None
    p_o = Fraction(table.both_pass + table.both_fail, n)
    p_e = Fraction(table.rubric_pass * table.human_pass + table.rubric_fail * table.human_fail, n * n)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def reference(given_ratings: dict[str, dict[str, str]]) -> list[tuple[str, str, Agreement]]:
    """Every pair of raters (in rater order) sharing an item, with its table built directly."""
    names = [name for name in given_ratings if given_ratings[name]]
    pairs = []
    for index, a in enumerate(names):
        for b in names[index + 1:]:
            table = pair_agreement(given_ratings[a], given_ratings[b], POSITIVE)
            if table.n:
                pairs.append((a, b, table))
    return pairs


def entry(a: str, b: str, table: Agreement) -> dict:
    ci = table.kappa_ci
    return {"a": a, "b": b, "kappa": _round(table.kappa), "ci": None if ci is None else [_round(x) for x in ci],
            "n": table.n}  # fmt: skip


def close(x: float | None, y: float | None) -> bool:
    return (x is None) == (y is None) and (x is None or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12))


@settings(max_examples=200)
@given(ratings())
def test_the_bit_set_pairwise_kappas_are_agreements_kappas(given_ratings):
    found = pairwise(given_ratings, POSITIVE)
    pairs = reference(given_ratings)
    defined = [(a, b, table) for a, b, table in pairs if table.kappa is not None]
    counted = sorted(table.kappa for _, _, table in defined if table.n >= MIN_OVERLAP)
    summary = found["summary"]

    assert (summary["pairs"], summary["with_kappa"]) == (len(pairs), len(defined))
    assert summary["sharing_min_overlap"] == len(counted)
    assert len(found["counted"]) == len(counted)
    assert all(close(x, y) for x, y in zip(sorted(found["counted"]), counted, strict=True))
    kappas = [table.kappa for _, _, table in defined]
    for key, figure in (("kappa_min", min), ("kappa_max", max), ("kappa_median", statistics.median)):
        expected = _round(figure(kappas)) if kappas else None
        assert close(summary[key], expected) or abs(summary[key] - expected) <= 1.0001e-4, key  # rounding's last digit

    if len(pairs) <= PAIRS_LISTED:
        assert summary["listed"] == "all"
        assert found["pairs"] == [entry(a, b, table) for a, b, table in pairs]
        return
    assert summary["listed"] == "lowest"
    by_pair = {(a, b): table for a, b, table in pairs}
    assert all(listed == entry(listed["a"], listed["b"], by_pair[listed["a"], listed["b"]]) for listed in found["pairs"])
    ranked = sorted((table.n < MIN_OVERLAP, exact_kappa(table)) for _, _, table in defined)[:LOWEST_NAMED]
    shown = [(by_pair[p["a"], p["b"]].n < MIN_OVERLAP, exact_kappa(by_pair[p["a"], p["b"]])) for p in found["pairs"]]
    assert shown == ranked  # the lowest, first among the pairs that count, in order


def test_the_generated_ratings_reach_both_listings():
    seen = {"all": 0, "lowest": 0}

    @settings(max_examples=150, database=None, derandomize=True)
    @given(ratings())
    def count(given_ratings) -> None:
        seen[pairwise(given_ratings, POSITIVE)["summary"]["listed"]] += 1

    count()
    assert min(seen.values()) >= 10, seen
