"""The studio keeps what the user owns: verdicts across an id edit, typed text across results and
outside edits, and an undo history that never silently crosses an outside edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from rubric_studio.core.results import Status
from rubric_studio.tui.app import StudioApp
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, copy_bundled, graded, until

RUBRIC = Path("sample_rubrics/support_reply/support_reply.yaml")


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_bundled(tmp_path, monkeypatch)
    return RUBRIC


@pytest.fixture
def fake_llm():
    with FakeLLM() as server:
        yield server


def _judge_statuses(app, criterion_id: str) -> dict[str, Status]:
    return {sample_id: result.cell(criterion_id).status for sample_id, result in app.session.model.results.items()}


def _verdicts(app) -> dict[str, str]:
    return {sample_id: result.verdict.value for sample_id, result in app.session.model.results.items()}


async def test_renaming_a_judged_criterion_in_the_form_keeps_its_verdicts_at_no_cost(studio: Path, fake_llm, tmp_path):
    app = StudioApp(studio, judge="openai-compatible:fake-judge", base_url=fake_llm.base_url_openai,
                    cache_path=tmp_path / "cache.sqlite", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        before_cells = _judge_statuses(app, "tone")
        before_verdicts = _verdicts(app)
        calls = fake_llm.calls()
        assert app.editor.select_criterion("tone")
        await until(lambda: app.query_one("#ed-f-id", Input).value == "tone")
        field = app.query_one("#ed-f-id", Input)
        field.focus()
        await pilot.press("end", "ctrl+u", *"warmth", "enter")
        await until(lambda: "id: warmth" in app.session.document.text)
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await until(lambda: app.session.run_number > run and graded(app))
        assert fake_llm.calls() == calls
        assert _judge_statuses(app, "warmth") == before_cells
        assert Status.ERROR not in before_cells.values()
        assert _verdicts(app) == before_verdicts


async def test_an_outside_rename_keeps_the_verdicts(studio: Path, fake_llm, tmp_path):
    app = StudioApp(studio, judge="openai-compatible:fake-judge", base_url=fake_llm.base_url_openai,
                    cache_path=tmp_path / "cache.sqlite")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        before_cells = _judge_statuses(app, "resolves-issue")
        before_verdicts = _verdicts(app)
        calls = fake_llm.calls()
        run = app.session.run_number
        studio.write_text(studio.read_text().replace("id: resolves-issue", "id: Resolves-Issue"))
        await until(lambda: app.session.run_number > run and graded(app)
                    and "Resolves-Issue" in app.session.document.text)
        await pilot.pause()
        assert fake_llm.calls() == calls
        assert _judge_statuses(app, "Resolves-Issue") == before_cells
        assert _verdicts(app) == before_verdicts
