"""A quote the judge took from the input or the reference answer is told apart from a made-up one."""

from __future__ import annotations

from rubric_studio.core.results import Evidence
from rubric_studio.core.samples import Sample
from rubric_studio.judges.evidence import check_quotes, check_sample_quotes

SAMPLE = Sample(
    id="refund-1",
    input="Hi, I bought the blender on 3 May and it stopped working. Can I get my money back?",
    output="Sorry to hear that! Refunds are available within 30 days of purchase, so you qualify.",
    ground_truth="Offer a full refund because the purchase is inside the 30-day window.",
)


def one(quote: str, sample: Sample = SAMPLE) -> Evidence:
    (evidence,) = check_sample_quotes([quote], sample)
    return evidence


def test_a_quote_of_the_input_is_not_found_but_not_made_up_either():
    evidence = one("it stopped working")
    assert not evidence.found and evidence.start is None
    assert evidence.quoted_from == "input" and not evidence.made_up
    assert evidence.reason is not None and "input" in evidence.reason


def test_a_quote_of_the_reference_answer_names_the_reference():
    evidence = one("Offer a full refund")
    assert evidence.quoted_from == "reference" and not evidence.made_up and not evidence.found


def test_the_input_is_matched_like_the_output_case_spacing_and_curly_quotes_aside():
    evidence = one("CAN I  get my money\nback?")
    assert evidence.quoted_from == "input"


def test_a_quote_in_no_text_the_judge_saw_is_made_up():
    evidence = one("we never give refunds")
    assert not evidence.found and evidence.quoted_from is None and evidence.made_up
    assert evidence.reason == "not in the sample"


def test_a_quote_in_the_output_is_found_even_when_the_input_has_it_too():
    both = Sample(id="s", input="Refunds are available within 30 days", output=SAMPLE.output)
    evidence = one("Refunds are available within 30 days", both)
    assert evidence.found and evidence.quoted_from is None and not evidence.made_up
    assert SAMPLE.output[evidence.start : evidence.end] == "Refunds are available within 30 days"


def test_the_rules_that_make_a_quote_no_evidence_hold_for_the_input_too():
    negated = Sample(id="s", input="We never ask for your password.", output="Please reset it in the app.")
    assert one("We ... ask for your password", negated).made_up  # the "..." hides "never"
    assert one("ok", Sample(id="s", input="ok then", output="Fine.")).made_up  # too short to be evidence


def test_without_other_texts_nothing_is_quoted_from_elsewhere():
    (evidence,) = check_quotes(["it stopped working"], SAMPLE.output)
    assert evidence.made_up and evidence.quoted_from is None
    (evidence,) = check_quotes(["it stopped working"], SAMPLE.output, elsewhere={"input": None, "reference": ""})
    assert evidence.made_up


def test_the_json_of_evidence_only_gains_a_field():
    from_input, made_up, found = check_sample_quotes(
        ["it stopped working", "we never give refunds", "so you qualify"], SAMPLE
    )
    assert from_input.to_dict() == {"quote": "it stopped working", "found": False,
                                    "reason": "quoted from the input, not from the output", "quoted_from": "input"}
    assert made_up.to_dict() == {"quote": "we never give refunds", "found": False, "reason": "not in the sample"}
    assert found.to_dict() == {"quote": "so you qualify", "found": True}
