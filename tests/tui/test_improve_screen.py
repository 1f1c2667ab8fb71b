"""Pilot tests of "Improve criterion…" (``I``) and few-shot examples from labelling (``e``).

The judge and the assistant are the local fake server: the judge marks a criterion met when a
keyword of its outcome occurs in the sample, the assistant proposes scripted rewordings (one
real fix, one that over-fits the fitting part). The scenario is the engine test's: twelve
billing replies labelled on ``timeline`` so that every result is known (tests/engine/test_improve.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList

from rubric_studio.core.document import RubricDocument
from rubric_studio.core.loading import parse_rubric
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import LabelNoteScreen
from rubric_studio.tui.improve import ImproveScreen
from rubric_studio.tui.results import ResultsMatrix
from tests.engine.test_improve import GOOD, assistant_brain, build
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import SIZE, Recorder, graded, until

pytestmark = pytest.mark.timeout(60)
POLITE = "Thanks the customer"  # the outcome of `polite`: requests about it carry it
WARMTH = "  - id: warmth\n    outcome: Thanks warmly\n    score_ranges: {0: Cold, 10: Warm}\n"


@pytest.fixture
def project(tmp_path: Path):
    rubric, samples, _, (overfit,) = build(tmp_path)
    return rubric, samples, overfit


@pytest.fixture
def large_project(tmp_path: Path):
    """Enough held-out cells (18) for the real fix's gain to be shown, not just seen."""
    rubric, samples, _, (overfit,) = build(tmp_path, per_class=30, held_false_passes=3, held_false_fails=3)
    return rubric, samples, overfit


def studio(rubric: Path, samples: Path, server: FakeLLM | None, tmp_path: Path) -> StudioApp:
    return StudioApp(rubric, samples, judge="openai:gpt-4o-mini" if server else None,
                     base_url=server.base_url_openai if server else None, watch=False,
                     env={"OPENAI_API_KEY": "k"} if server else {}, cache_path=tmp_path / "cache.sqlite")


async def ready(app: StudioApp, pilot) -> ResultsMatrix:
    await until(lambda: graded(app), timeout=15)
    await pilot.pause()
    matrix = app.query_one(ResultsMatrix)
    matrix.focus()
    await pilot.pause()
    return matrix


async def regraded(app: StudioApp, pilot, run: int) -> None:
    await until(lambda: app.session.run_number > run and graded(app), timeout=15)
    await pilot.pause()


def notes(app: StudioApp) -> str:
    return "\n".join(n.message for n in app._notifications)


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("STUDIO_SHOTS", tmp_path / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_improve_lists_the_engines_candidates_and_accept_is_one_undoable_edit(large_project, tmp_path: Path):
    rubric_path, samples_path, overfit = large_project
    original = rubric_path.read_text()
    recorder = Recorder()
    with FakeLLM(brain=assistant_brain([overfit, GOOD], [])) as server:
        app = studio(rubric_path, samples_path, server, tmp_path)
        async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
            matrix = await ready(app, pilot)
            matrix.select_criterion("polite")
            # I from the Agreement panel improves the criterion of its highlighted row.
            app.action_show("agreement")
            table = app.query_one("#agreement-table", DataTable)
            table.move_cursor(row=table.get_row_index("criterion:timeline"))
            await pilot.pause()
            await pilot.press("I")
            await until(lambda: isinstance(app.screen, ImproveScreen) and app.screen.report is not None, timeout=20)
            await pilot.pause()
            screen = app.screen
            report = screen.report
            assert "Improved" in recorder.names and "ImproveFailed" not in recorder.names
            assert report.criterion == "timeline" and screen.criterion_id == "timeline"
            # Every candidate is listed, in the engine's order, with its status; the over-fit is shown as such.
            listing = screen.query_one("#improve-list", OptionList)
            shown = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
            assert len(shown) == len(report.candidates) >= 3
            for number, (text, candidate) in enumerate(zip(shown, report.candidates, strict=True), 1):
                assert text.startswith(f"{number}. {candidate.kind}") and candidate.status in text
                assert candidate.description in text and f"{candidate.calls} judge calls" in text
            statuses = {c.change.get("outcome"): c.status for c in report.candidates if c.kind == "reword"}
            assert statuses == {GOOD: "improves holdout", overfit: "over-fits"}
            assert any("✓ improves holdout" in t for t in shown) and any("✗ over-fits" in t for t in shown)
            assert any("holdout cells: fixes" in t and "κ" in t for t in shown)
            app.save_screenshot("improve-screen.svg", path=str(shots(tmp_path)))
            # Accept the top one: exactly timeline changes, as one edit, saved and re-graded.
            top = report.candidates[0]
            run = app.session.run_number
            await pilot.press("enter")
            await until(lambda: not isinstance(app.screen, ImproveScreen))
            await regraded(app, pilot, run)
            document = app.session.document
            assert not document.dirty and rubric_path.read_text() == document.text != original
            after, before = document.parse(), parse_rubric(original, str(rubric_path))
            assert after.criterion("timeline").fingerprint() == top.rubric.criterion("timeline").fingerprint()
            assert after.criterion("polite").fingerprint() == before.criterion("polite").fingerprint()
            assert (after.name, after.pass_threshold) == (before.name, before.pass_threshold)
            assert document.text.startswith("# Billing replies.\n") and "# the wording under test" in document.text
            assert "Suggestion applied" in "\n".join(n.title for n in app._notifications)
            # One ctrl+z in the editor restores the rubric as it was.
            app.action_show("editor")
            await pilot.pause()
            await pilot.press("ctrl+z")
            await until(lambda: document.text == original)
            assert document.dirty


async def test_accepting_an_unconfirmed_suggestion_asks_first(project, tmp_path: Path):
    from rubric_studio.tui.dialogs import ConfirmScreen

    rubric_path, samples_path, _ = project
    original = rubric_path.read_text()
    with FakeLLM(brain=assistant_brain([GOOD], [])) as server:
        app = studio(rubric_path, samples_path, server, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            matrix = await ready(app, pilot)
            matrix.select_criterion("timeline")
            await pilot.press("I")
            await until(lambda: isinstance(app.screen, ImproveScreen) and app.screen.report is not None, timeout=20)
            await pilot.pause()
            screen = app.screen
            top = screen.report.candidates[0]
            assert not top.confirmed  # a gain on 4 held-out cells is not shown
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, ConfirmScreen), what="the confirm dialog")
            assert top.status in str(app.screen.body) and "at least 10" in str(app.screen.body)
            await pilot.press("n")  # the safe default: nothing written
            await until(lambda: app.screen is screen)
            assert rubric_path.read_text() == original and not app.session.document.dirty
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await until(lambda: not isinstance(app.screen, (ImproveScreen, ConfirmScreen)))
            await until(lambda: rubric_path.read_text() != original, what="the suggestion saved")
            assert app.session.document.parse().criterion("timeline").fingerprint() == \
                top.rubric.criterion("timeline").fingerprint()


async def test_improve_says_why_not_without_a_judge_or_without_labels(project, tmp_path: Path):
    rubric_path, samples_path, _ = project
    app = studio(rubric_path, samples_path, None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("I")
        await until(lambda: "Improve needs a judge. no judge configured" in notes(app), what="the no-judge note")
        assert not isinstance(app.screen, ImproveScreen)
    rubric_path.with_name("billing.labels.yaml").unlink()
    with FakeLLM() as server:
        app = studio(rubric_path, samples_path, server, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await ready(app, pilot)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "Improve criterion…" in titles
            next(c for c in app.get_system_commands(app.screen) if c.title == "Improve criterion…").callback()
            await until(lambda: "No labels yet" in notes(app), what="the no-labels note")
            assert not isinstance(app.screen, ImproveScreen)


async def write_note(app: StudioApp, pilot, text: str) -> None:
    await pilot.press("a")
    await until(lambda: isinstance(app.screen, LabelNoteScreen) and app.screen.query(Input))
    app.screen.query_one(Input).value = text
    await pilot.press("enter")


async def test_a_noted_cell_labelled_against_the_judge_becomes_an_example_with_e(project, tmp_path: Path):
    rubric_path, samples_path, _ = project
    rubric_path.write_text(rubric_path.read_text() + WARMTH)
    with FakeLLM() as server:
        app = studio(rubric_path, samples_path, server, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            matrix = await ready(app, pilot)
            # s00 gets a note while its cells agree with the judge: nothing to offer.
            assert matrix.select_sample("s00")
            matrix.select_criterion("polite")
            await write_note(app, pilot, "no")  # a note YAML 1.1 would read as false
            await until(lambda: (app.session.labels["s00"].note or "") == "no")
            assert "press e" not in notes(app)
            # u on polite (the judge says met): the noted cell now disagrees, so e is offered.
            await pilot.press("u")
            await until(lambda: app.session.labels["s00"].criteria.get("polite") == "unmet")
            assert "press e to add this as an example of polite" in notes(app)
            sent, run = len(server.requests), app.session.run_number
            await pilot.press("e")
            await regraded(app, pilot, run)
            example = app.session.document.parse().criterion("polite").examples[-1]
            assert (example.id, example.verdict, example.note) == ("s00", "unmet", "no")
            assert example.sample == app.session.samples_by_id["s00"].output
            assert not app.session.document.dirty and "examples:" in rubric_path.read_text()
            # The grade after it judged polite's cells again, and only those.
            new = server.requests[sent:]
            assert len(new) == len(app.session.samples) and all(POLITE in json.dumps(r.body) for r in new)
            # Not twice.
            await pilot.press("e")
            await until(lambda: "s00 is already an example of polite" in notes(app), what="the note that it is one already")
            assert "s00 is already an example of polite" in notes(app)
            assert len(app.session.document.parse().criterion("polite").examples) == 1
            # u first, then a note: offered too.
            assert matrix.select_sample("s02")
            matrix.select_criterion("polite")
            await pilot.press("u")
            await until(lambda: app.session.labels.get("s02") and app.session.labels["s02"].criteria.get("polite") == "unmet")
            offers = notes(app).count("press e")
            await write_note(app, pilot, "Thanks is not politeness")
            await until(lambda: notes(app).count("press e") == offers + 1)
            # An analytic criterion's example needs a score, which a met/unmet cell label lacks.
            matrix.select_criterion("warmth")
            await pilot.press("m")
            await until(lambda: app.session.labels["s02"].criteria.get("warmth") == "met")
            assert notes(app).count("press e") == offers + 1  # not offered: e could not add it
            await pilot.press("e")
            await until(lambda: "can't be added without a score" in notes(app), what="the note that it needs a score")
            assert "can't be added without a score" in notes(app)
            assert not app.session.document.parse().criterion("warmth").examples


def test_appending_examples_keeps_the_ones_written_and_the_comments_after_them():
    text = ("name: t\ncriteria:\n  - id: a\n    outcome: Says hello\n    examples:\n      # why this one\n"
            "      - sample: \"yes\"\n        verdict: met   # kept\n\n  # the next criterion\n"
            "  - id: b\n    outcome: Says bye\n")
    document = RubricDocument.from_text(text, "t.yaml")
    assert document.append_criterion_items(0, "examples", [{"sample": "two\nlines", "verdict": "unmet", "id": "s1"}])
    assert document.text == text.replace("# kept\n", "# kept\n      - sample: |-\n          two\n          lines\n"
                                         "        verdict: unmet\n        id: s1\n")
    assert [e.id for e in document.parse().criterion("a").examples] == [None, "s1"]
    assert document.undo() and document.text == text
