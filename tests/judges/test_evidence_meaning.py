"""Evidence quotes count only when they say what the sample says, where the sample says it."""

from __future__ import annotations

import unicodedata

import pytest

from rubric_studio.judges import check_quotes
from rubric_studio.judges.evidence import MAX_ELIDED


def one(quote: str, text: str):
    (evidence,) = check_quotes([quote], text)
    return evidence


def quoted(quote: str, text: str) -> str:
    """The stretch of ``text`` the quote was found at (fails when it was not found)."""
    evidence = one(quote, text)
    assert evidence.found, evidence.reason
    assert evidence.start is not None and evidence.end is not None
    return text[evidence.start : evidence.end]


# --- an ellipsis must not hide a negation -------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "text", "word"),
    [
        ("We ... ask for your password", "We never ask for your password.", "never"),
        ("Our team will ... share your data", "Our team will not share your data.", "not"),
        ("We ... charge a fee", "We don\u2019t ever charge a fee.", "don't"),
        ("Orders ship ... tracking", "Orders ship without tracking.", "without"),
        ("You ... reset it yourself", "You cannot reset it yourself.", "cannot"),
        ("There is ... fee for returns", "There is no fee for returns.", "no"),
        ("Refunds are ... issued", "Refunds are NEVER issued.", "never"),
    ],
)
def test_an_ellipsis_that_skips_a_negation_is_not_found(quote, text, word):
    evidence = one(quote, text)
    assert not evidence.found and evidence.start is None
    assert evidence.reason is not None and f'"{word}"' in evidence.reason


def test_a_negation_inside_the_quote_itself_is_fine():
    text = "We never ask for your password."
    assert quoted("We never ... your password", text) == "We never ask for your password"


def test_a_later_passage_without_the_negation_is_the_one_found():
    text = "We never ask for your password by email. In the app we do ask for your password once."
    assert quoted("We ... ask for your password", text) == "we do ask for your password"


# --- an ellipsis trims a passage, it does not stitch the sample together ---------------


def test_parts_too_far_apart_are_not_found():
    filler = "The weather was pleasant and the team met for lunch. " * 6
    assert len(filler) > MAX_ELIDED
    evidence = one(
        "Refunds ... within 5 days",
        f"Refunds are handled by the billing team. {filler}We reply within 5 days.",
    )
    assert not evidence.found
    assert evidence.reason is not None and str(MAX_ELIDED) in evidence.reason


def test_a_legitimate_elision_is_found_at_the_passage_it_trims():
    text = "Refunds take up to 5 business days."
    assert quoted("Refunds take ... 5 business days", text) == "Refunds take up to 5 business days"
    far = "Refunds take priority over exchanges. " + "Our store is open every day of the week. " * 8
    text = far + "Refunds take up to 5 business days."
    assert quoted("Refunds take ... 5 business days", text) == "Refunds take up to 5 business days"


def test_an_elision_of_a_couple_of_sentences_is_still_found():
    text = "Thanks for writing. I checked your order. It shipped on Monday. It should arrive by Friday."
    assert quoted("Thanks for writing ... should arrive by Friday", text) == text.rstrip(".")


def test_an_ellipsis_character_in_the_sample_matches_three_dots():
    text = "Wait for it \u2026 done. Then\u2026 rest."
    assert quoted("WAIT FOR IT ... DONE", text) == "Wait for it \u2026 done"
    assert quoted("then... rest", text) == "Then\u2026 rest"


def test_parts_out_of_order_are_not_found():
    evidence = one("business days ... Refunds take", "Refunds take up to 5 business days.")
    assert not evidence.found and evidence.reason == "not in the sample"


# --- too short to be evidence -------------------------------------------------------------


@pytest.mark.parametrize("quote", ["a", "I", "ok", "5", "\u201cno\u201d", "a ... b", "I ... am", "..."])
def test_quotes_too_short_to_be_evidence_are_not_found(quote):
    text = "I am ok: a b 5 no ... yes, I am sure."
    evidence = one(quote, text)
    assert not evidence.found and evidence.start is None
    assert evidence.reason is not None and "too short" in evidence.reason


def test_every_part_of_an_elided_quote_must_be_long_enough():
    evidence = one("refund policy ... x", "Our refund policy gives x days.")
    assert not evidence.found and evidence.reason is not None and '"x"' in evidence.reason


def test_short_but_real_quotes_still_count():
    assert quoted("Yes", "Yes, it ships today.") == "Yes"
    assert quoted("100%", "It is 100% refundable.") == "100%"


def test_the_reason_is_reported_only_for_quotes_not_found():
    found, short = check_quotes(["ships today", "a"], "Yes, it ships today, a bargain.")
    assert found.to_dict() == {"quote": "ships today", "found": True}
    assert short.to_dict()["found"] is False and "too short" in short.to_dict()["reason"]


# --- Unicode normal forms -----------------------------------------------------------------

NFD_TEXT = unicodedata.normalize("NFD", "Bonjour ! Un café crème au lait, s’il vous plaît. Merci, Zoë.")


@pytest.mark.parametrize(
    ("quote", "expected"),
    [
        ("Un café crème", "Un café crème"),
        ("CRÈME AU LAIT", "crème au lait"),
        ("s'il vous plaît", "s’il vous plaît"),
        ("Merci, Zoë", "Merci, Zoë"),
        ("plaît ... Zoë", "plaît. Merci, Zoë"),
    ],
)
def test_precomposed_quote_matches_decomposed_text_at_the_right_offsets(quote, expected):
    assert not unicodedata.is_normalized("NFC", NFD_TEXT)
    # the offsets cover the original (decomposed) characters, combining accents included
    assert quoted(unicodedata.normalize("NFC", quote), NFD_TEXT) == unicodedata.normalize("NFD", expected)


def test_decomposed_quote_matches_precomposed_text():
    text = "Un café crème au lait"
    assert quoted(unicodedata.normalize("NFD", "CAFÉ CRÈME"), text) == "café crème"


def test_decomposed_hangul_matches_precomposed():
    text = unicodedata.normalize("NFD", "환불은 5일 이내에 처리됩니다")
    assert quoted("환불은 5일", text) == unicodedata.normalize("NFD", "환불은 5일")


# --- quotes running across list items ----------------------------------------------------


@pytest.mark.parametrize("marker", ["-", "*", "+", "\u2022", "\u2013", "1.", "1)", "a)", "(i)", ">", "#"])
def test_a_quote_across_list_items_is_found(marker):
    second = {"1.": "2.", "1)": "2)", "a)": "b)", "(i)": "(ii)"}.get(marker, marker)
    text = f"To fix it:\n  {marker} Reset your password.\n  {second} Contact support.\nThanks!"
    span = quoted("Reset your password. Contact support.", text)
    assert span == f"Reset your password.\n  {second} Contact support."


def test_a_quote_that_keeps_the_markers_is_found_too():
    text = "Steps:\n1. Reset your password.\n2. Contact support."
    assert (
        quoted("1. Reset your password. 2. Contact support.", text)
        == "Reset your password.\n2. Contact support."
    )
    assert (
        quoted("- Reset your password. - Contact support.", text)
        == "Reset your password.\n2. Contact support."
    )


def test_list_markers_are_dropped_only_at_the_start_of_a_line():
    evidence = one("the total is 5 days", "the total is - 5 days")
    assert not evidence.found


# --- staying fast on large or repetitive samples -----------------------------------------


@pytest.mark.timeout(20)
def test_elided_quotes_in_a_large_repetitive_sample_finish():
    text = "aaa bbb " * 25_000
    evidence = check_quotes(["aaa ... bbb ... aaa ... bbb ... ccc", "aaa ... ccc", "bbb ... aaa"], text)
    assert [e.found for e in evidence] == [False, False, True]
    assert text[evidence[2].start : evidence[2].end] == "bbb aaa"


@pytest.mark.timeout(20)
def test_many_combining_marks_finish():
    text = "e" + "\u0301" * 20_000 + " refund policy"
    assert quoted("REFUND policy", unicodedata.normalize("NFC", text[:5]) + text[5:]) == "refund policy"
