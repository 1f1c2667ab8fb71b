"""The studio keeps what the user owns: verdicts across an id edit, typed text across results and
outside edits, and an undo history that never silently crosses an outside edit."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from rubric_studio.core.results import Status
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.results import ResultsMatrix
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


# -- outside edits meet the user's typing and undo ----------------------------------------------
async def _focus_tone_outcome(app):
    """Select the tone criterion and put the cursor at the end of its outcome field."""
    assert app.editor.select_criterion("tone")
    await until(lambda: app.query_one("#ed-f-id", Input).value == "tone")
    outcome = app.query_one("#ed-f-outcome")
    outcome.focus()
    await until(lambda: app.focused is outcome)
    outcome.move_cursor(outcome.document.end)
    return outcome


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    temp = path.with_name(".outside.tmp")
    temp.write_text(text.replace(old, new, 1))
    temp.replace(path)  # editors save by rename


async def _outside_edit_while_typing(app, pilot, studio: Path, old: str, new: str, landed):
    """Type into the tone outcome, let ``old`` → ``new`` land on disk meanwhile (``landed`` says when the
    studio has seen it), type on; the outcome field, which must hold every key in order."""
    await until(lambda: graded(app))
    document = app.session.document
    outcome = await _focus_tone_outcome(app)
    await pilot.press(*" and thanks")
    await until(lambda: "and thanks" in document.text)
    _rewrite(studio, old, new)
    await until(landed)
    await pilot.press(*" them")
    await until(lambda: "and thanks them" in document.text)
    assert outcome.text.endswith("situation and thanks them")
    return outcome


async def test_undo_stops_at_an_outside_edit_and_saving_past_it_asks(studio: Path):
    from rubric_studio.tui.conflict import ConflictScreen

    app = StudioApp(studio)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        document = app.session.document
        _rewrite(studio, "    weight: 2\n    required: true\n    tags: [axis:accuracy, policy]",
                 "    weight: 5\n    required: true\n    tags: [axis:accuracy, policy]")
        await until(lambda: "weight: 5" in document.text and "weight: 5" in document.disk_text)
        await _focus_tone_outcome(app)
        await pilot.press(*" and names it")
        await until(lambda: "and names it" in document.text)
        for _ in range(len(" and names it")):  # undo the typing (one step, or more on a slow machine)
            if not document.dirty:
                break
            before = document.text
            await pilot.press("ctrl+z")
            await until(lambda before=before: document.text != before)
        assert "weight: 5" in document.text and not document.dirty
        earlier = {id(n) for n in app._notifications}
        await pilot.press("ctrl+z")  # stops at the outside edit: nothing changes, and it says so
        await until(lambda: any("Reached the outside edit of" in n.message
                                for n in app._notifications if id(n) not in earlier),
                    what=lambda: f"a notice that undo reached the outside edit (notices: {[n.message for n in app._notifications]})")
        assert "Reached the outside edit of" in list(app._notifications)[-1].message
        assert "weight: 5" in document.text and not document.dirty
        await pilot.press("ctrl+z")  # now it undoes the outside edit
        await until(lambda: "weight: 5" not in document.text)
        assert document.reverted_outside is not None and document.dirty
        await pilot.press("ctrl+s")  # asks, writes nothing yet
        await until(lambda: isinstance(app.screen, ConflictScreen))
        assert "weight: 5" in studio.read_text()
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, ConflictScreen))
        assert "weight: 5" in studio.read_text()
        await pilot.press("ctrl+y")  # redo brings the outside edit back: nothing to ask about
        await until(lambda: "weight: 5" in document.text)
        assert document.reverted_outside is None and not document.dirty


async def test_an_outside_edit_of_another_field_merges_around_the_typing(studio: Path):
    app = StudioApp(studio)
    async with app.run_test(size=SIZE) as pilot:
        await _outside_edit_while_typing(app, pilot, studio, "pass_threshold: 0.8", "pass_threshold: 0.7",
                                                   lambda: "pass_threshold: 0.7" in app.session.document.text)
        document = app.session.document
        assert "pass_threshold: 0.7" in document.text and document.dirty
        assert app.session.rubric is not None and app.session.rubric.pass_threshold == 0.7  # graded from disk


async def test_an_outside_edit_of_the_field_being_typed_in_is_a_conflict_not_a_merge(studio: Path):
    app = StudioApp(studio)
    async with app.run_test(size=SIZE) as pilot:
        outcome = await _outside_edit_while_typing(app, pilot, studio, "outcome: Warm, professional tone",
                                                   "outcome: Courteous tone",
                                                   lambda: app.save_flow.declined is not None)
        document = app.session.document
        assert "Courteous" not in document.text and "Courteous" not in outcome.text
        assert len(app.screen_stack) == 1  # a notice, not a dialog taking the keys


async def test_f2_while_the_editor_is_still_mounting_focuses_it_once_it_is_there(studio: Path):
    app = StudioApp(studio)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")  # at once: the editor is mounted only after the first results
        await until(lambda: app.editor is not None and app.editor.ready)
        await until(lambda: app.focused is not None and app.editor in app.focused.ancestors)
        assert app.is_running


async def test_ctrl_q_while_the_editor_is_still_mounting_quits_without_a_traceback(studio: Path):
    """A user quitting in the first moments: ctrl+q lands while the editor mounts (just after the first
    results). Quitting waits for the editor to finish: torn down under its tabs, Textual's tabs failed
    their own mount ("No Tab with id …") and the studio printed a traceback on the way out."""
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.editor is not None, what="the editor starting to mount")
        mounting = not app.editor.ready
        await pilot.press("ctrl+q")
    assert mounting  # the key came while the editor was still mounting
    assert app.return_code == 0


async def test_a_studio_test_may_end_while_the_editor_is_still_mounting(studio: Path):
    """A Pilot test that has seen what it asserts may end at any moment, the editor still mounting:
    the tests' teardown lets the mount finish first (tests/conftest.py), as ctrl+q does, so the
    finished test does not turn into Textual's "No Tab with id …" error."""
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE):
        await until(lambda: app.editor is not None, what="the editor starting to mount")
        mounting = not app.editor.ready
    assert mounting
    assert app.return_code in (0, None)


async def test_an_outside_edit_that_breaks_the_rubric_keeps_the_typing_and_the_last_results(studio: Path):
    app = StudioApp(studio)
    async with app.run_test(size=SIZE) as pilot:
        outcome = await _outside_edit_while_typing(app, pilot, studio, "pass_threshold: 0.8", "pass_threshold: [0.8",
                                                   lambda: "rubric" in app.session.file_problems)  # not YAML
        document = app.session.document
        assert app.focused is outcome
        assert "[0.8" not in document.text  # nothing merged into the editor
        assert app.session.model.stale and app.session.model.results  # the last good results, marked stale
        assert len(app.screen_stack) == 1


async def test_a_save_that_finishes_while_the_studio_closes_is_written_and_ends_quietly(studio: Path):
    """A save posts its message after writing; if the user quit meanwhile, the table it would reset
    is already gone: the file holds the save, the studio closes without a traceback."""
    app = StudioApp(studio, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.editor is not None and app.editor.ready)
        assert app.editor.select_criterion("tone")
        field = app.query_one("#ed-f-id", Input)
        await until(lambda: field.value == "tone")
        field.focus()
        await pilot.press("end", "ctrl+u", *"warmth", "enter")  # a new column: the save resets the table
        await until(lambda: "id: warmth" in app.session.document.text)
        close_all = app._close_all

        async def close_with_a_save_in_flight() -> None:
            """Closing has begun (the table is gone) when the save lands and its message arrives."""
            await app.query_one(ResultsMatrix).remove()
            app.editor.save()
            # the message is handled: the session takes the saved rubric (then the table is reset)
            await until(lambda: app.session.rubric is not None
                        and "warmth" in {c.id for c in app.session.rubric.criteria})
            await close_all()

        app._close_all = close_with_a_save_in_flight
    assert "id: warmth" in studio.read_text()
