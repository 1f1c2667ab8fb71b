"""Markdown review table."""

from __future__ import annotations

from rubric_studio.core.rubric import Rubric
from rubric_studio.interop import export_rubric


def test_one_row_per_criterion(sample_rubric):
    result = export_rubric(sample_rubric, "markdown")
    rows = [line for line in result.text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(sample_rubric.criteria)
    assert result.warnings == [] and result.suggested_suffix == ".md"
    assert "| id | criterion | weight | required | scoring |" in result.text
    for row, criterion in zip(rows, sample_rubric.criteria, strict=True):
        cells = row.split(" | ")
        assert cells[0] == f"| `{criterion.key}`"
        assert cells[2] == f"{criterion.weight:g}"
        assert cells[3] == ("yes" if criterion.required else "")


def test_ranges_checks_operators_and_escaping(support_reply):
    text = export_rubric(support_reply, "markdown").text
    assert "**Pass** when score >= 0.8 and every required criterion is met (`resolves-issue`, `policy-accurate`)" in text
    assert "0-10, met at >= 7<br>0-3: Rude, dismissive, or blames the customer<br>4-6:" in text
    assert "met unless contradicted" in text and "penalty: met = the bad thing is present" in text
    assert "check `length(max_words=150)`" in text
    assert "admin\\\\.ledgerly\\\\.io\\|ledgerly" in text  # the regex's pipe is escaped for the table
    rubric = Rubric.model_validate({"name": "m", "criteria": ["Uses a | b\nacross lines"]})
    row = export_rubric(rubric, "markdown").text.splitlines()[-1]
    assert "Uses a \\| b<br>across lines" in row and row.count(" | ") == 4
