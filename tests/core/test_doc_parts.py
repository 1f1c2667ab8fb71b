"""The parts behind the rubric document: its history bound, style detection and criteria layout."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from rubric_studio.core.document import RubricDocument, detect_style, find_layout

FOUR_SPACES = "name: x\njudge:\n    model: m\ncriteria:\n    - id: a\n      outcome: A\n      tags: [x]\n"


def test_undo_keeps_at_most_history_limit_steps(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(RubricDocument, "history_limit", 3)
    document = RubricDocument.from_text("name: v0\ncriteria:\n  - id: a\n    outcome: A\n", "r.yaml")
    texts = [document.text]
    for version in range(1, 6):
        document.set_rubric_field("name", f"v{version}")
        document.break_coalescing()
        texts.append(document.text)
    undone = 0
    while document.undo():
        undone += 1
    assert undone == 3
    assert document.text == texts[2]  # the two oldest steps were dropped
    while document.redo():
        pass
    assert document.text == texts[-1]


def test_style_detection_reproduces_a_four_space_file_and_edits_keep_it():
    yaml, rendered = detect_style(FOUR_SPACES)
    assert rendered == FOUR_SPACES
    assert (yaml.map_indent, yaml.sequence_indent, yaml.sequence_dash_offset) == (4, 6, 4)
    document = RubricDocument.from_text(FOUR_SPACES, "r.yaml")
    document.set_judge_field("temperature", 0.5)
    document.set_criterion_field(0, "weight", 2)
    assert "\n    temperature: 0.5\n" in document.text
    assert "\n      weight: 2\n" in document.text


def test_style_detection_keeps_the_default_for_text_that_is_not_yaml():
    _, rendered = detect_style("criteria: [\n")
    assert rendered is None


def _layout_of(text: str):
    data = YAML().load(text)
    return find_layout(data, data["criteria"], text)


def test_layout_stops_a_criterion_chunk_at_a_section_ruler():
    text = ("criteria:\n  # about a\n  - id: a\n    outcome: A\n\n  # --- checks ---\n"
            "  # about b\n  - id: b\n    check: {type: length, max_words: 3}\n")
    layout = _layout_of(text)
    assert layout is not None
    assert layout.chunk(0) == ["  # about a\n", "  - id: a\n", "    outcome: A\n"]
    assert layout.chunk(1) == ["  # about b\n", "  - id: b\n", "    check: {type: length, max_words: 3}\n"]
    assert layout.separator(1) == ["\n", "  # --- checks ---\n"]


def test_no_layout_for_flow_or_empty_lists():
    assert _layout_of("criteria: [a, b]\n") is None
    assert _layout_of("criteria: []\n") is None
    assert _layout_of("criteria:\n  - a\n  - b\n") is not None
