"""Renaming, reordering, moving or re-casing a judged criterion keeps its verdicts at no judge cost,
in the studio's session (one grader across edits) and in ``grade`` (the persistent cache)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rubric_studio.session.studio import StudioSession
from tests.fakellm import FakeLLM

RUBRIC = """\
name: support
pass_threshold: 0.5
criteria:
  - id: mentions-refund
    outcome: Mentions the refund
  - id: polite
    outcome: Says thanks to the customer
  - id: short
    check: {type: length, max_words: 50}
"""
SAMPLES = [("a", "thanks, your refund is on its way"), ("b", "no refund for you"), ("c", "thanks for writing")]

EDITS = {
    "rename": RUBRIC.replace("id: mentions-refund", "id: refund-mentioned"),
    "case change": RUBRIC.replace("id: polite", "id: Polite"),
    "reorder": RUBRIC.replace(
        "  - id: mentions-refund\n    outcome: Mentions the refund\n  - id: polite\n    outcome: Says thanks to the customer\n",
        "  - id: polite\n    outcome: Says thanks to the customer\n  - id: mentions-refund\n    outcome: Mentions the refund\n",
    ),
    "move to the end": RUBRIC.replace("  - id: mentions-refund\n    outcome: Mentions the refund\n", "")
    + "  - id: mentions-refund\n    outcome: Mentions the refund\n",
    "rename and reorder": RUBRIC.replace(
        "  - id: mentions-refund\n    outcome: Mentions the refund\n  - id: polite\n    outcome: Says thanks to the customer\n",
        "  - id: courteous\n    outcome: Says thanks to the customer\n  - id: refund\n    outcome: Mentions the refund\n",
    ),
}
RENAMED = {"rename": {"mentions-refund": "refund-mentioned"}, "case change": {"polite": "Polite"},
           "rename and reorder": {"mentions-refund": "refund", "polite": "courteous"}}


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": sid, "output": text}) + "\n" for sid, text in SAMPLES))
    return tmp_path


def _verdicts(results, renamed: dict[str, str]) -> dict[tuple[str, str], tuple[str, float | None]]:
    back = {new: old for old, new in renamed.items()}
    out = {}
    for sample in results:
        for cell in sample.criteria:
            out[(sample.id, back.get(cell.id, cell.id))] = (cell.status.value, cell.score)
    return out


@pytest.mark.parametrize("edit", list(EDITS))
def test_the_session_keeps_verdicts_across_an_id_edit_at_no_cost(project: Path, server: FakeLLM, edit: str):
    session = StudioSession(project / "r.yaml", env={}, grader_options={
        "judge": "openai:gpt-4o-mini", "base_url": server.base_url_openai, "use_cache": False})

    async def scenario():
        await session.open()
        before = session.report
        sent = server.calls()
        session.document.replace_text(EDITS[edit])
        session.document.save()
        assert session.apply_rubric_text().valid
        await session.grade_to_end()
        return before, session.report, server.calls() - sent

    before, after, calls = asyncio.run(scenario())
    assert calls == 0
    statuses = {cell.status.value for sample in after.samples for cell in sample.criteria}
    assert "error" not in statuses and "pending" not in statuses
    renamed = RENAMED.get(edit, {})
    assert _verdicts(after.samples, renamed) == _verdicts(before.samples, {})
    assert [s.verdict for s in after.samples] == [s.verdict for s in before.samples]


@pytest.mark.parametrize("edit", ["rename", "case change", "reorder", "rename and reorder"])
def test_grade_serves_an_id_edit_from_the_cache(project: Path, server: FakeLLM, edit: str, capsys):
    from rubric_studio.cli import main

    args = ["--judge", "openai:gpt-4o-mini", "--base-url", server.base_url_openai,
            "--cache-path", str(project / "cache.sqlite"), "--format", "json"]
    rubric, samples = str(project / "r.yaml"), str(project / "r.samples.jsonl")
    main(["grade", rubric, samples, *args])
    before = json.loads(capsys.readouterr().out)
    sent = server.calls()
    (project / "r.yaml").write_text(EDITS[edit])
    main(["grade", rubric, samples, *args])
    after = json.loads(capsys.readouterr().out)
    assert server.calls() == sent and after["usage"]["judge_calls"] == 0
    back = {new: old for old, new in RENAMED.get(edit, {}).items()}

    def cells(report):
        return {(s["id"], back.get(c["id"], c["id"])): (c["status"], c["score"]) for s in report["samples"] for c in s["criteria"]}

    assert cells(after) == cells(before)
    assert "error" not in {status for status, _ in cells(after).values()}


def test_a_judge_setting_its_provider_is_not_sent_is_said_once_in_the_studio(project: Path, server: FakeLLM):
    """A rubric that sets ``temperature`` for an Anthropic judge hears once that it is not sent,
    on the run that meets it, not again on every re-grade."""
    rubric = project / "r.yaml"
    rubric.write_text("judge: {temperature: 0.3}\n" + RUBRIC)
    session = StudioSession(rubric, env={"ANTHROPIC_API_KEY": "k"}, grader_options={
        "judge": "anthropic:claude-haiku-4-5", "base_url": server.base_url_anthropic, "use_cache": False})

    async def scenario():
        first = await session.open()
        session.document.replace_text(rubric.read_text().replace("max_words: 50", "max_words: 40"))
        session.document.save()
        assert session.apply_rubric_text().valid
        second = await session.grade_to_end()
        await session.aclose()
        return first, second

    first, second = asyncio.run(scenario())
    assert first is not None and second is not None
    assert len(first.warnings) == 1 and "judge.temperature" in first.warnings[0], first.warnings
    assert "anthropic:claude-haiku-4-5" in first.warnings[0]
    assert second.warnings == []
