"""The evidence a suggestion needs before it is called an improvement: the exact McNemar test,
the minimum of held-out cells, the ranking that never puts a fit-worsening candidate first, and
the plain-sentence rule for reworded outcomes."""

from __future__ import annotations

import pytest

from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.improve import (
    Candidate,
    Delta,
    Evidence,
    mcnemar_exact,
    outcome_problem,
    read_rewordings,
)


@pytest.mark.parametrize(("fixed", "broke", "p"), [
    (0, 0, 1.0),
    (6, 0, 0.03125),            # 2 * 0.5**6
    (0, 6, 0.03125),            # two-sided: the direction does not change p
    (5, 0, 0.0625),             # five fixes and nothing broken is not yet significant
    (9, 1, 0.021484375),        # R: binom.test(1, 10)$p.value
    (8, 2, 0.109375),           # R: binom.test(2, 10)$p.value
    (3, 3, 1.0),                # capped at 1
    (15, 5, 0.04138946533203125),  # R: binom.test(5, 20)$p.value
])  # fmt: skip
def test_exact_mcnemar_matches_the_binomial_test(fixed, broke, p):
    assert mcnemar_exact(fixed, broke) == pytest.approx(p, rel=1e-12)


def test_exact_mcnemar_stays_exact_for_large_counts():
    assert mcnemar_exact(600, 600) == 1.0
    assert 0 < mcnemar_exact(650, 550) < 0.01
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_a_gain_needs_enough_cells_and_significance():
    assert not Evidence.of(8, 6, 0).shows_gain  # significant, but on 8 cells
    assert Evidence.of(10, 6, 0).shows_gain
    assert not Evidence.of(40, 7, 2).shows_gain  # p = 0.18
    assert not Evidence.of(40, 0, 6).shows_gain  # significant the wrong way


RUBRIC = Rubric.model_validate({"name": "r", "criteria": [{"id": "c", "outcome": "Says hello"}]})


def candidate(fit: Delta, holdout: Delta) -> Candidate:
    return Candidate("reword", {"outcome": "x"}, "x", RUBRIC, fit=fit, holdout=holdout)


def test_a_candidate_that_worsens_the_fitting_part_is_never_first_nor_an_improvement():
    # what a small model's garbled rewording did: the fitting part 0.06 -> -0.16, 8 held-out cells better
    garbled = candidate(Delta(20, 1, 4, 0.06, -0.16), Delta(8, 3, 0, 0.2, 0.8))
    modest = candidate(Delta(20, 1, 0, 0.06, 0.15), Delta(8, 0, 0, 0.2, 0.2))
    assert garbled.status == "worse on fitting labels" and not garbled.confirmed
    ranked = sorted([garbled, modest], key=lambda c: c.rank_key(), reverse=True)
    assert ranked[0] is modest


def test_a_shown_gain_ranks_above_a_larger_unshown_one():
    shown = candidate(Delta(30, 2, 0, 0.5, 0.6), Delta(12, 6, 0, 0.1, 0.9))
    lucky = candidate(Delta(30, 2, 0, 0.5, 0.6), Delta(9, 7, 0, 0.1, 1.0))  # too few cells
    assert (shown.status, lucky.status) == ("improves holdout", "inconclusive")
    assert sorted([lucky, shown], key=lambda c: c.rank_key(), reverse=True)[0] is shown


@pytest.mark.parametrize("text", [
    "}], // JSON object with only the outcome…",
    '{"outcome": "Gives a timeline"}',
    "<the new outcome>",
    "TODO",
    "Gives a timeline.\nThanks the customer.",
    "Gives a timeline. Thanks the customer.",
    "x" * 301,
    "   ",
    "if (x == 1) return y;",
    "Mentions the refund and ...",
    "Gives the timeline, e.g. five days. Then thanks the customer.",
    'Quotes the customer "<the complaint>" back',
    "States the refund policy. Etc.",
    "Compares Plan A. Then recommends one",
    "Answers with '...' and nothing else",
    "Gives a timeline! Thanks the customer.",
])  # fmt: skip
def test_only_one_plain_sentence_is_a_rewording(text):
    assert outcome_problem(text)


@pytest.mark.parametrize("text", [
    "Gives the number of business days (e.g. 5) until the refund arrives.",
    "States that the claim is false",
    "Mentions the refund's timeline without promising a date",
    "Names a concrete next step, e.g. The support team calls back within a day",
    "Lists the plans, i.e. Basic and Pro, with their prices",
    "Compares Plan A vs. Plan B on price and limits",
    "Says the refund goes to the U.S. Bank account on file",
    "Addresses the customer as Dr. Smith throughout",
    "Quotes the customer's words 'I waited...' back accurately",
    'Acknowledges the complaint ("It broke... again") before answering',
    "Repeats the promise “Your refund is on its way…” word for word",
    'Quotes the apology "Sorry. We will fix it." without adding to it',
])  # fmt: skip
def test_plain_sentences_pass(text):
    assert outcome_problem(text) is None


def test_garbled_rewordings_are_dropped_with_a_reason_and_all_garbled_asks_again():
    validate = read_rewordings("Mentions the refund")
    kept, dropped = validate({"rewordings": [{"outcome": "}], // JSON object with only the outcome…", "why": "?"},
                                             {"outcome": "Gives business days", "why": "timeline"}]})
    assert kept == [("Gives business days", "timeline")]
    assert len(dropped) == 1 and "braces" in dropped[0][1]
    with pytest.raises(ValueError, match="braces"):
        validate({"rewordings": [{"outcome": "{...}", "why": ""}]})
