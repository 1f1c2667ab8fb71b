"""Reading replies: finding the JSON, validating its shape, checking quotes."""

from __future__ import annotations

import pytest

from rubric_studio.judges import check_quotes, extract_json
from rubric_studio.judges.parsing import batch_entries, read_single

OBJ = {"verdict": "met", "rationale": "ok", "evidence": ["a"]}


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "met", "rationale": "ok", "evidence": ["a"]}',
        '```json\n{"verdict": "met", "rationale": "ok", "evidence": ["a"]}\n```',
        'Here you go:\n```\n{"verdict": "met", "rationale": "ok", "evidence": ["a"]}\n```\nHope that helps.',
        'After reading it, my judgement is {"verdict": "met", "rationale": "ok", "evidence": ["a"]} as requested.',
        '<answer>{"verdict": "met", "rationale": "ok", "evidence": ["a"]}</answer>',
        '<think>maybe {"verdict": "unmet"}? no.</think>\n<json>\n{"verdict": "met", "rationale": "ok", "evidence": ["a"]}\n</json>',
        '\ufeff  {"verdict": "met", "rationale": "ok", "evidence": ["a"]}  ',
    ],
    ids=["bare", "json-fence", "fence-in-prose", "prose", "answer-tag", "think-then-tag", "bom"],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == OBJ


def test_first_balanced_object_even_with_braces_in_strings():
    text = 'Sure. {"rationale": "uses {curly} braces", "verdict": "unmet", "evidence": []} and {"other": 1}'
    assert extract_json(text)["rationale"] == "uses {curly} braces"


@pytest.mark.parametrize("text", ["", "   ", "I think it's met.", "{verdict: met", "```json\n{oops}\n```"])
def test_garbage_raises_with_a_reason(text):
    with pytest.raises(ValueError) as info:
        extract_json(text)
    assert "empty" in str(info.value) or "no JSON object" in str(info.value)


def test_read_single_tolerates_unambiguous_variants():
    assert read_single({"verdict": "Met"}, analytic=False).verdict == "met"
    assert read_single({"verdict": "not met", "rationale": "r"}, analytic=False).verdict == "unmet"
    assert read_single({"verdict": True}, analytic=False).verdict == "met"
    assert read_single({"score": "7"}, analytic=True).score == 7
    assert read_single({"score": 7.6}, analytic=True).score == 8
    assert read_single({"score": 14}, analytic=True).score == 10 and read_single({"score": -2}, analytic=True).score == 0
    lone = read_single({"verdict": "met", "evidence": "a quote"}, analytic=False)
    assert lone.quotes == ["a quote"] and lone.rationale == ""


@pytest.mark.parametrize(
    ("data", "analytic", "message"),
    [
        ({"rationale": "r"}, False, 'no "verdict" field'),
        ({"verdict": "maybe"}, False, '"met" or "unmet"'),
        ({"score": "high"}, True, "integer from 0 to 10"),
        ({"score": None}, True, "integer from 0 to 10"),
        (["met"], False, "expected a JSON object"),
        ({"verdict": "met", "evidence": 3}, False, "list of quotes"),
    ],
)
def test_read_single_rejects_what_is_ambiguous(data, analytic, message):
    with pytest.raises(ValueError, match=message):
        read_single(data, analytic)


def test_batch_entries_shapes():
    # keyed by criterion id (what the schema asks for); ids not asked about are ignored
    assert batch_entries({"a": {"verdict": "met"}, "zz": {"verdict": "met"}}, ("a", "b")) == {"a": {"verdict": "met"}}
    # the older list shape: first entry for an id wins, entries without an id are skipped
    entries = batch_entries(
        {"criteria": [{"id": "a", "verdict": "met"}, {"id": "b", "score": 3}, {"id": "a", "verdict": "unmet"}, {"x": 1}]},
        ("a", "b"),
    )
    assert entries["a"]["verdict"] == "met" and entries["b"]["score"] == 3
    # a criterion whose id is "criteria" is read as keyed, not as the list shape
    assert batch_entries({"criteria": {"verdict": "met"}}, ("criteria", "b")) == {"criteria": {"verdict": "met"}}
    assert batch_entries({"verdict": "met"}, ("a", "b")) == {}
    with pytest.raises(ValueError, match="keyed by criterion id"):
        batch_entries(["a"], ("a",))


TEXT = "Hello Sam,\n\nOur  refund policy gives you \u201c30 days\u201d \u2014 no questions asked.\n**Warm** regards"


def test_quotes_exact_with_offsets():
    (ev,) = check_quotes(["refund policy gives"], TEXT)
    assert ev.found and TEXT[ev.start : ev.end] == "refund policy gives"
    assert ev.to_dict() == {"quote": "refund policy gives", "found": True}


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        ("OUR REFUND POLICY", "Our  refund policy"),
        ('"our refund   policy"', "Our  refund policy"),
        ('gives you "30 days" - no', "gives you \u201c30 days\u201d \u2014 no"),
        ("Warm regards", "Warm** regards"),
        ("Hello Sam, Our refund", "Hello Sam,\n\nOur  refund"),
        ("refund policy ... no questions asked", "refund policy gives you \u201c30 days\u201d \u2014 no questions asked"),
    ],
)
def test_quotes_normalised_match_maps_back_to_the_original(quote, span):
    (ev,) = check_quotes([quote], TEXT)
    assert ev.found and TEXT[ev.start : ev.end] == span


def test_quotes_not_found_and_empty_ones_skipped():
    evidence = check_quotes(["refunds within 60 days", "", "   ", "no questions ... refund policy"], TEXT)
    assert [(e.quote, e.found) for e in evidence] == [("refunds within 60 days", False), ("no questions ... refund policy", False)]
    assert evidence[0].start is None
