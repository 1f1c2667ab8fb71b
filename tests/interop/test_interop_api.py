"""The studio-facing API: FORMATS, export_rubric, import_rubric, rubric_to_yaml, detection."""

from __future__ import annotations

import pytest

from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import (
    FORMATS,
    ExportResult,
    ImportResult,
    export_rubric,
    import_rubric,
    rubric_to_yaml,
)
from rubric_studio.interop._formats import BUILTIN


def test_every_format_says_what_it_is_and_which_directions_it_takes():
    """A property of each registered format, so a new format is its entry and no edit here."""
    assert {info.name for info in BUILTIN} <= set(FORMATS) and len(FORMATS) >= 2
    for name, info in FORMATS.items():
        assert info.name == name and info.title.strip() and info.description.strip(), name
        assert info.can_export or info.can_import, f"{name} neither exports nor imports"
        assert info.suffix.startswith(".") and info.suffix != ".", name
    suffixes = [info.suffix for info in FORMATS.values()]
    assert len(set(suffixes)) == len(suffixes)  # a file's suffix names one format
    assert not FORMATS["markdown"].can_import and FORMATS["markdown"].can_export  # a review table, one way
    assert FORMATS["docent"].suffix == ".docent.json"


def test_unknown_names_raise_value_error(support_reply):
    with pytest.raises(ValueError, match="unknown export target 'inspect'"):
        export_rubric(support_reply, "inspect")
    with pytest.raises(ValueError, match="unknown import source 'markdown'"):
        import_rubric("x: 1", "markdown")


@pytest.mark.parametrize(("relative", "expected"), [
    ("agentv/rubric-features.eval.yaml", "agentv"),
    ("agentv/suite-level.eval.yaml", "agentv"),
    ("agentv/legacy.yaml", "agentv"),
    # AgentV's own examples, named as its discovery finds them (**/evals/**/suite.yaml) and with
    # nothing only AgentV writes in them
    ("agentv/examples/basic-jsonl/evals/suite.yaml", "agentv"),
    ("agentv/examples/suite-level-input/evals/suite.yaml", "agentv"),
    ("agentv/examples/provider-owned-batching/evals/suite.yaml", "agentv"),
    ("promptfoo/promptfooconfig.yaml", "promptfoo"),
    ("promptfoo/all-must-pass.yaml", "promptfoo"),
    ("letta/suite.yaml", "letta"),
    ("letta/legacy_suite.yaml", "letta"),
    ("docent/rubric.json", "docent"),
    ("healthbench/items.jsonl", "healthbench"),
    ("healthbench/examples.jsonl", "healthbench"),
])
def test_auto_detects_every_fixture_and_returns_a_valid_rubric(fixtures, relative, expected):
    result = import_rubric(fixtures / relative)
    assert isinstance(result, ImportResult)
    assert result.detected == expected
    assert isinstance(result.rubric, Rubric) and result.rubric.name.strip()
    Rubric.model_validate(result.rubric.model_dump(by_alias=True))  # still valid as data
    reparsed = parse_rubric(rubric_to_yaml(result.rubric))
    assert reparsed.model_dump() == result.rubric.model_dump()


@pytest.mark.parametrize("target", ["agentv", "promptfoo", "letta", "docent", "healthbench"])
def test_auto_detects_our_own_exports(support_reply, target):
    result = export_rubric(support_reply, target)
    assert isinstance(result, ExportResult) and result.text.endswith("\n")
    assert import_rubric(result.text).detected == target


def test_ambiguous_files_ask_for_from():
    with pytest.raises(RubricError, match="--from"):
        import_rubric("tests:\n  - vars: {q: hi}\n")


def test_yaml_syntax_errors_carry_positions():
    with pytest.raises(RubricError) as caught:
        import_rubric("graders:\n  q:\n    kind: [model_judge\n", "letta")
    problem = caught.value.problems[0]
    assert problem.file == "<text>" and problem.line == 4 and "YAML syntax error" in problem.message


def test_native_rubric_is_recognised(support_reply):
    result = import_rubric(support_reply.path)
    assert result.detected == "native" and result.rubric.model_dump() == support_reply.model_dump()


def test_rubric_to_yaml_round_trips_bundled_rubrics(sample_rubric):
    text = rubric_to_yaml(sample_rubric)
    assert parse_rubric(text).model_dump() == sample_rubric.model_dump()


def test_rubric_to_yaml_is_clean(support_reply):
    text = rubric_to_yaml(support_reply)
    keys = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith((" ", "#", "-"))]
    assert keys == ["name", "description", "pass_threshold", "judge", "criteria"]
    assert "max_tokens" not in text and "on_error" not in text and "weight: 1\n" not in text
    assert "check: {type: length, max_words: 150}" in text
    assert "    score_ranges:\n      0: Rude, dismissive, or blames the customer\n" in text
    assert "tags: [axis:safety, policy]" in text
    assert "description: >-\n  Replies drafted by the billing-support assistant" in text
    # id-then-operator-then-outcome order, as docs/reference/files.md#writing-rubrics gives it
    block = text[text.index("- id: policy-accurate"):]
    assert block.index("operator:") < block.index("outcome:") < block.index("weight:")


def test_plain_strings_only_where_nothing_is_lost():
    rubric = Rubric.model_validate({"name": "p", "criteria": [
        "Is polite", {"id": "kept", "outcome": "Has an id"}, "Is short", {"outcome": "Weighted", "weight": 2},
    ]})
    text = rubric_to_yaml(rubric)
    assert "  - Is polite\n" in text and "  - Is short\n" in text
    assert "id: kept" in text and "id: c3" in text  # the weighted one keeps its generated id
    assert parse_rubric(text).model_dump() == rubric.model_dump()



@pytest.mark.parametrize("target", ["agentv", "promptfoo", "letta", "docent"])
def test_edge_rubric_round_trips(edge_rubric, target):
    """Penalty checks, graded required criteria, a penalty with bands, whole-word keywords."""
    result = export_rubric(edge_rubric, target)
    imported = import_rubric(result.text, target).rubric
    kept = {c.key: c for c in imported.criteria}
    expressible = [c for c in edge_rubric.criteria if c.is_judged or target in ("agentv", "promptfoo")]
    assert [c.key for c in imported.criteria] == [c.key for c in expressible]
    for criterion in expressible:
        back = kept[criterion.key]
        assert back.model_dump(exclude={"min_score"}) == criterion.model_dump(exclude={"min_score"}), criterion.key
        assert back.effective_min_score == criterion.effective_min_score
    assert imported.pass_threshold == edge_rubric.pass_threshold
    dropped = [c.key for c in edge_rubric.criteria if c not in expressible]
    for key in dropped:
        assert any(f"'{key}'" in w for w in result.warnings), key


@pytest.mark.parametrize("target", ["agentv", "promptfoo"])
@pytest.mark.parametrize("judge", [
    {"model": "ollama:llama3.1"},
    {"model": "openai-compatible:qwen2.5", "base_url": "http://gpu-box:8000/v1", "temperature": 0.2},
    {"model": "anthropic:claude-sonnet-4-5"},
])
def test_judge_settings_round_trip(target, judge):
    rubric = Rubric.model_validate({"name": "j", "judge": judge, "criteria": ["Is correct"]})
    back = import_rubric(export_rubric(rubric, target).text, target).rubric.judge
    assert (back.model, back.base_url, back.temperature) == (rubric.judge.model, rubric.judge.base_url,
                                                             rubric.judge.temperature)
