"""Pilot tests of "Draft criteria…": a new rubric opens on it, the model's proposals come back as a
message from a worker, and the ticked ones land in the rubric document (comments and all)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Static

from rubric_studio.core.loading import load_rubric
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.draft_screen import DraftScreen
from tests.fakellm import Call, FakeLLM, keyword_brain
from tests.tui.studio_helpers import SIZE, Recorder, until

pytestmark = pytest.mark.timeout(60)

TASK = "Replies to billing support tickets"
DRAFTED = {"criteria": [
    {"id": "refund-window", "outcome": "States the 30-day refund window", "weight": 2, "required": True,
     "score_ranges": None, "check": None, "why": "the task is about refunds"},
    {"id": "tone", "outcome": "Uses a warm tone", "weight": 1, "required": False,
     "score_ranges": [{"min": 0, "text": "Cold"}, {"min": 6, "text": "Warm"}], "check": None, "why": "samples vary"},
    {"id": "short", "outcome": None, "weight": 1, "required": False, "score_ranges": None,
     "check": {"type": "length", "min_words": None, "max_words": 120, "min_chars": None, "max_chars": None},
     "why": "long replies were labelled fail"},
    {"id": "dates", "outcome": None, "weight": 1, "required": False, "score_ranges": None,
     "check": {"type": "regex", "pattern": "[0-9", "expect_match": False, "flags": ""}, "why": "broken"},
]}  # fmt: skip


def brain(call: Call) -> dict:
    """Drafting requests get DRAFTED; judge requests the keyword brain."""
    schema = call.body.get("response_format", {}).get("json_schema", {}).get("name")
    return DRAFTED if schema == "draft_criteria" else keyword_brain(call)


@pytest.fixture
def server():
    with FakeLLM(brain=brain) as fake:
        yield fake


@pytest.fixture
def new_rubric(tmp_path: Path) -> Path:
    records = [{"id": f"s{i}", "output": f"Hello! Your refund window is 30 days ({i})."} for i in range(5)]
    (tmp_path / "billing.samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path / "billing.yaml"


def studio(path: Path, server: FakeLLM | None, tmp_path: Path) -> StudioApp:
    url = server.base_url_openai if server is not None else None
    return StudioApp(path, judge="openai:gpt-4o-mini" if server else None, base_url=url, watch=False,
                     env={"OPENAI_API_KEY": "k"} if server else {}, cache_path=tmp_path / "cache.sqlite")


async def test_a_new_rubric_opens_on_the_draft_screen_and_kept_criteria_land_in_the_document(
        new_rubric: Path, server: FakeLLM, tmp_path: Path):
    recorder = Recorder()
    app = studio(new_rubric, server, tmp_path)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await until(lambda: isinstance(app.screen, DraftScreen) and app.session.samples_loaded)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DraftScreen) and screen.first
        screen.query_one("#draft-task", Input).value = TASK
        await pilot.click("#draft-run")
        await until(lambda: screen.draft is not None)
        await pilot.pause()
        assert "Drafted" in recorder.names and "DraftFailed" not in recorder.names
        assert [p.id for p in screen.draft.proposals] == ["refund-window", "tone", "short"]
        assert "dropped #4 (dates)" in str(screen.query(".draft-dropped").first().render())
        assert "3 proposed by openai:gpt-4o-mini from the task and 5 samples" in str(
            screen.query_one("#draft-status", Static).render())
        screen.query_one("#draft-pick-2", Checkbox).value = False  # untick "tone"
        await pilot.pause()
        shots = Path(os.environ.get("DRAFT_SHOTS", tmp_path / "screenshots"))
        shots.mkdir(exist_ok=True)
        app.save_screenshot("draft-screen.svg", path=str(shots))
        assert (shots / "draft-screen.svg").stat().st_size > 0
        await pilot.click("#draft-keep")
        await until(lambda: not isinstance(app.screen, DraftScreen))
        document = app.session.document
        # The starter criterion made way; the kept ones are in, each with its origin above it.
        assert document.criterion_ids() == ["refund-window", "short"]
        assert "  # drafted from the task description and 5 samples: the task is about refunds\n" in document.text
        assert document.rubric_data()["description"] == TASK and document.dirty
        document.save()
        rubric = load_rubric(new_rubric)
        assert [c.id for c in rubric.criteria] == ["refund-window", "short"]
        assert rubric.criterion("short").check.max_words == 120


async def test_a_rubric_with_criteria_does_not_open_on_it_and_a_missing_judge_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\n# keep this comment\ncriteria:\n  - id: hello\n    outcome: Says hello\n")
    app = studio(path, None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.session.samples_loaded)
        await pilot.pause()
        assert not isinstance(app.screen, DraftScreen)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Draft criteria…" in titles
        next(c for c in app.get_system_commands(app.screen) if c.title == "Draft criteria…").callback()
        await until(lambda: isinstance(app.screen, DraftScreen))
        await pilot.pause()
        screen = app.screen
        screen.query_one("#draft-task", Input).value = TASK
        await pilot.click("#draft-run")
        status = screen.query_one("#draft-status", Static)
        await until(lambda: "Drafting failed" in str(status.render()))
        assert "no judge configured" in str(status.render())
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, DraftScreen))
        assert "# keep this comment" in app.session.document.text and not app.session.document.dirty
