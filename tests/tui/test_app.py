"""Pilot tests of the studio's message flow: grade, save, external edits, invalid files, conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.message import Message

from rubric_studio.core.document import UndoStop
from rubric_studio.core.results import Status, Verdict
from rubric_studio.session.results_model import FILTERS
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.conflict import ConflictScreen
from rubric_studio.tui.help import HelpScreen
from rubric_studio.tui.messages import FilesChanged
from rubric_studio.tui.results import Inspector, ResultsMatrix
from tests.fakellm import FakeLLM, Reply
from tests.tui.studio_helpers import (
    SIZE,
    copy_bundled,
    drawn,
    drawn_text,
    focused_on,
    graded,
    handled,
    on_screen,
    open_in_inspector,
    unsaved_edit,
    until,
    watching,
)


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the bundled rubrics, with the working directory beside it."""
    copy_bundled(tmp_path, monkeypatch)
    return Path("sample_rubrics")


@pytest.fixture
def fake_llm():
    """A fake OpenAI-compatible judge server (tests/fakellm.py)."""
    with FakeLLM() as server:
        yield server


class Recorder:
    """Names of the studio's messages, in the order the app processed them."""

    NAMES = {"GradeStarted", "SamplesGraded", "GradeProgress", "GradeFinished", "FilesChanged", "FileInvalid",
             "GraderReady", "SamplesLoaded", "LabelsLoaded", "Saved", "Changed", "GradeFailed"}

    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, message: Message) -> None:
        name = type(message).__name__
        if name in self.NAMES:
            self.names.append(name)

    def after(self, name: str) -> list[str]:
        index = len(self.names) - 1 - self.names[::-1].index(name)
        return self.names[index:]


def shown(widget) -> str:
    """The text a widget draws, line by line."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(region))


def short_index(app: StudioApp) -> int:
    return app.session.document.criterion_index("short")


def cell(app: StudioApp, sample_id: str, criterion_id: str):
    return app.session.model.results[sample_id].cell(criterion_id)


# -- opening ----------------------------------------------------------------------------
async def test_opens_without_judge_runs_checks_and_says_how_to_configure(studio: Path):
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await pilot.pause()
        matrix = app.query_one(ResultsMatrix)
        assert len(matrix.rows) == 15
        assert cell(app, "refund-within-window", "short").status is Status.MET
        assert cell(app, "refund-within-window", "tone").status is Status.UNJUDGED
        assert app.session.model.results["refund-within-window"].verdict is Verdict.UNJUDGED
        note = app.query_one("#judge-note")
        assert note.display
        text = str(note.render())
        assert "OPENAI_API_KEY" in text and "--judge" in text and "--base-url" in text
        assert "·" in matrix._row_strip(0).text.split("│", 1)[1]  # the judge cells: unjudged
        # The status bar names the judge the rubric names (not "judge none" beside the note about it).
        status = str(app.query_one("#status").render())
        assert "judge openai:gpt-6-luna (not set up)" in status and "judge none" not in status
        # Human labels from the sidecar are in the model.
        assert app.session.labels["refund-wrong-timeline"].verdict == "fail"


async def test_missing_rubric_is_created_from_a_starter(studio: Path):
    path = studio / "brand-new.yaml"
    app = StudioApp(path, watch=False)
    async with app.run_test(size=SIZE):
        await until(lambda: app.session.samples_loaded and getattr(app.editor, "ready", False) and path.exists())
        assert app.session.rubric is not None and app.session.rubric.name == "brand-new"
        assert len(app.session.rubric.criteria) == 1
        empty = app.query_one("#empty")
        assert empty.display and "No samples yet" in str(empty.render())


async def test_no_samples_then_samples_appear(studio: Path):
    folder = studio / "solo"
    folder.mkdir()
    rubric = folder / "solo.yaml"
    rubric.write_text("name: solo\ncriteria:\n  - id: short\n    check: {type: length, max_words: 5}\n")
    app = StudioApp(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.session.samples_loaded and app.editor is not None)
        await watching(folder)
        assert app.query_one("#empty").display
        (folder / "solo.samples.jsonl").write_text(
            json.dumps({"id": "a", "output": "one two three"}) + "\n"
            + json.dumps({"id": "b", "output": "one two three four five six seven"}) + "\n"
        )
        await until(lambda: graded(app) and len(app.session.model.results) == 2)
        await pilot.pause()
        assert not app.query_one("#empty").display
        assert app.session.model.results["a"].verdict is Verdict.PASS
        assert app.session.model.results["b"].verdict is Verdict.FAIL


# -- edit -> save -> re-grade -------------------------------------------------------------------
async def test_edit_save_regrades_and_marks_flips(studio: Path):
    recorder = Recorder()
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await until(lambda: graded(app))
        first_run = app.session.run_number
        assert cell(app, "refund-late-request", "short").status is Status.MET
        app.session.document.set_check_field(short_index(app), "max_words", 60)
        app.editor.refresh_from_document()
        await pilot.pause()
        assert app.session.document.dirty
        await pilot.press("ctrl+s")
        await until(lambda: app.session.run_number > first_run and graded(app))
        await pilot.pause()
        # The flow: Saved -> GradeStarted -> SamplesGraded -> GradeFinished.
        flow = recorder.after("Saved")
        assert flow.index("GradeStarted") < flow.index("SamplesGraded") < flow.index("GradeFinished")
        assert not app.session.document.dirty
        assert "max_words: 60" in (studio / "support_reply" / "support_reply.yaml").read_text()
        # Cells updated in place, flips counted and drawn.
        assert cell(app, "refund-late-request", "short").status is Status.UNMET
        up, down = app.session.model.flip_counts()
        assert up == 0 and down >= 1
        assert app.session.model.flips["refund-late-request"]["short"] == -1
        header = str(app.query_one("#run-header").render())
        assert f"cells 0↑ {down}↓ since v1" in header
        matrix = app.query_one(ResultsMatrix)
        matrix.select_criterion("short")
        row = matrix.rows.index("refund-late-request")
        assert "↓" in matrix._row_strip(row).text


async def test_resaving_unchanged_rubric_keeps_results_and_flips_nothing(studio: Path):
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await until(lambda: app.session.run_number > run and graded(app))
        assert app.session.model.flip_counts() == (0, 0)
        assert app.session.report is not None and app.session.report.usage.judge_calls == 0


async def test_a_reopened_studio_compares_with_the_versions_of_an_earlier_session(studio: Path):
    """Versions persist beside the cache: the second session continues the first one's numbering."""
    rubric = studio / "support_reply" / "support_reply.yaml"
    first = StudioApp(rubric, watch=False)
    async with first.run_test(size=SIZE) as pilot:
        await until(lambda: graded(first))
        first.session.document.set_check_field(short_index(first), "max_words", 60)
        run = first.session.run_number
        await pilot.press("ctrl+s")
        await until(lambda: first.session.run_number > run and graded(first))
        assert [v.kind for v in first.session.versions.history.versions] == ["first run", "rubric edit"]
    second = StudioApp(rubric, watch=False)
    async with second.run_test(size=SIZE) as pilot:
        await until(lambda: graded(second))
        history = second.session.versions.history
        assert [v.number for v in history.versions] == [1, 2]  # v2 re-graded in place: the same inputs
        assert history.diff(1, 2).rubric_changes == ["changed short (check)"]


async def test_a_damaged_run_history_is_said_once_and_the_studio_goes_on(studio: Path):
    from rubric_studio.engine.versions import history_path

    rubric = studio / "support_reply" / "support_reply.yaml"
    path = history_path(rubric)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'not json\n{"number": "x"}\n')
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE):
        await until(lambda: graded(app))
        toasts = [n for n in app._notifications if n.title == "Run history"]
        assert len(toasts) == 1 and "skipped" in toasts[0].message and "1 more" in toasts[0].message
        assert [v.kind for v in app.session.versions.history.versions] == ["first run"]


# -- external edits (real watch loop) --------------------------------------------------------
async def test_external_edit_reloads_editor_and_regrades(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric)
    async with app.run_test(size=SIZE):
        await until(lambda: graded(app))
        await watching(rubric.parent)
        run = app.session.run_number
        rubric.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60"))
        await until(lambda: app.session.run_number > run and graded(app))
        # The editor takes the new text right after the new verdicts are drawn.
        await until(lambda: "max_words: 60" in app.session.document.text)
        assert not app.session.document.dirty
        assert cell(app, "refund-late-request", "short").status is Status.UNMET
        assert app.session.model.flip_counts()[1] >= 1


async def test_editor_that_saves_by_rename_is_caught(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric)
    async with app.run_test(size=SIZE):
        await until(lambda: graded(app))
        await watching(rubric.parent)
        run = app.session.run_number
        temp = rubric.with_name(".support_reply.yaml.swp")
        temp.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60"))
        temp.replace(rubric)
        await until(lambda: app.session.run_number > run and graded(app))
        assert cell(app, "refund-late-request", "short").status is Status.UNMET


async def test_invalid_external_edit_shows_error_and_keeps_stale_results(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    good = rubric.read_text()
    app = StudioApp(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await watching(rubric.parent)
        rubric.write_text(good.replace("max_words: 150", "max_wrds: 150"))
        await until(lambda: "rubric" in app.session.file_problems)
        await pilot.pause()
        banner = app.query_one("#banner")
        assert banner.display and banner.has_class("-error")
        text = str(banner.render())
        assert "support_reply.yaml:" in text and "max_wrds" in text and "did you mean" in text
        problem = app.session.file_problems["rubric"][0]
        assert problem.line is not None and problem.column is not None
        assert f"{problem.line}:{problem.column}" in text
        # The last good results stay, marked stale.
        assert len(app.session.model.results) == 15 and app.session.model.stale
        assert "stale" in str(app.query_one("#run-header").render())
        # Fixing the file clears the banner and re-grades.
        run = app.session.run_number
        rubric.write_text(good.replace("max_words: 150", "max_words: 60"))
        await until(lambda: "rubric" not in app.session.file_problems and app.session.run_number > run and graded(app))
        await pilot.pause()
        assert not app.query_one("#banner").display
        assert not app.session.model.stale
        assert cell(app, "refund-late-request", "short").status is Status.UNMET


async def test_invalid_yaml_syntax_points_at_line_and_column(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        rubric.write_text("name: x\ncriteria:\n  - id: [unclosed\n")
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: "rubric" in app.session.file_problems)
        await pilot.pause()
        problem = app.session.file_problems["rubric"][0]
        assert problem.line is not None
        assert problem.location() in str(app.query_one("#banner").render())


async def test_external_change_with_unsaved_edits_asks_first_keep(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await watching(rubric.parent)
        await unsaved_edit(app, pilot, "my unsaved description")
        assert app.session.document.dirty
        run = app.session.run_number
        # The same lines as the unsaved edit: no clean merge, so the studio asks.
        disk = rubric.read_text().replace("Replies drafted by", "Replies written by")
        rubric.write_text(disk)
        await on_screen(app, ConflictScreen)  # mounted: its d shows the diff its mount hides
        # Nothing replaced while the question is open.
        assert "my unsaved description" in app.session.document.text
        await pilot.press("d")
        await until(lambda: app.screen.query_one("#conflict-diff").display, what="the diff shown by d")
        assert app.screen.query_one("#conflict-diff").display
        assert "written by" in str(app.screen.query_one("#conflict-diff-text").render())
        await pilot.press("k")
        await until(lambda: not isinstance(app.screen, ConflictScreen))
        assert "my unsaved description" in app.session.document.text
        assert rubric.read_text() == disk  # the disk version is left alone too
        assert app.session.run_number == run
        # The same disk version does not ask again.
        app.post_message(FilesChanged({"rubric"}))
        await handled(app)  # the change event's handler would ask at once
        assert not isinstance(app.screen, ConflictScreen)


async def test_external_change_with_unsaved_edits_load_disk_version(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await unsaved_edit(app, pilot, "my unsaved description")
        run = app.session.run_number
        rubric.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60")
                          .replace("Replies drafted by", "Replies written by"))  # also the unsaved edit's lines
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("l")
        await until(lambda: app.session.run_number > run and graded(app))
        assert "max_words: 60" in app.session.document.text and not app.session.document.dirty
        assert cell(app, "refund-late-request", "short").status is Status.UNMET
        # Loading is undoable: the edits are not lost (undo stops at the outside edit first).
        assert isinstance(app.session.document.undo(), UndoStop)
        app.session.document.undo()
        assert "my unsaved description" in app.session.document.text


async def test_a_second_outside_edit_during_the_first_regrade_is_graded_too(studio: Path):
    """Two outside writes in quick succession: the second lands while the first is being graded.

    The editor must not quietly take the newer file when the first grade is drawn; that
    newer text would then look like the studio's own and never be graded.
    """
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE):
        await until(lambda: graded(app))
        run = app.session.run_number
        rubric.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60"))
        await app._rubric_changed_on_disk()  # the first change event: grading starts
        rubric.write_text(rubric.read_text().replace("max_words: 60", "max_wrds: 60"))  # before it is drawn
        await until(lambda: app.session.run_number > run and graded(app), what="the first change's grade drawn")
        app.post_message(FilesChanged({"rubric"}))  # the second change event
        await until(lambda: "rubric" in app.session.file_problems)
        assert "max_wrds" in app.session.file_problems["rubric"][0].message
        assert "max_wrds" in app.session.document.text


async def test_an_outside_edit_that_is_not_utf8_is_reported_not_ignored(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await pilot.pause()
        rubric.write_bytes(rubric.read_text().replace("name: support-reply", "name: caf\xe9").encode("latin-1"))
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: "rubric" in app.session.file_problems)
        problem = app.session.file_problems["rubric"][0]
        assert "not UTF-8" in problem.message and problem.line is not None and problem.column == 10
        assert app.session.model.stale and graded(app)  # the last good results stay, marked stale
        await pilot.pause()


# -- samples and labels ---------------------------------------------------------------------
async def test_samples_change_regrades_new_rows(studio: Path):
    samples = studio / "support_reply" / "support_reply.samples.jsonl"
    app = StudioApp(studio / "support_reply" / "support_reply.yaml")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await watching(samples.parent)
        with samples.open("a") as handle:
            handle.write(json.dumps({"id": "zz-new", "output": "As an AI, I apologize for any inconvenience."}) + "\n")
        await until(lambda: "zz-new" in app.session.model.results and graded(app))
        await pilot.pause()
        assert "zz-new" in app.query_one(ResultsMatrix).rows
        assert cell(app, "zz-new", "no-boilerplate").status is Status.UNMET


async def test_half_written_samples_file_keeps_last_good_samples(studio: Path):
    samples = studio / "support_reply" / "support_reply.samples.jsonl"
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        with samples.open("a") as handle:
            handle.write('{"id": "broken", "output": \n')
        app.post_message(FilesChanged({"samples"}))
        await until(lambda: "samples" in app.session.file_problems)
        await pilot.pause()
        assert "support_reply.samples.jsonl:16" in str(app.query_one("#banner").render())
        assert len(app.session.model.results) == 15 and app.session.model.stale


async def test_labels_change_updates_human_column_without_regrading(studio: Path):
    labels = studio / "support_reply" / "support_reply.labels.yaml"
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        run = app.session.run_number
        labels.write_text(labels.read_text() + "\ncard-update-boilerplate:\n  verdict: fail\n")
        app.post_message(FilesChanged({"labels"}))
        await until(lambda: "card-update-boilerplate" in app.session.labels)
        await pilot.pause()
        assert app.session.run_number == run
        matrix = app.query_one(ResultsMatrix)
        assert "fail" in matrix._row_strip(matrix.rows.index("card-update-boilerplate")).text


# -- navigation --------------------------------------------------------------------------------
async def test_filter_and_sort(studio: Path):
    rubric = studio / "support_reply" / "support_reply.yaml"
    rubric.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60"))
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("f")  # failing: no verdict is final without a judge
        await until(lambda: matrix.filter_kind == "failing", what="the failing filter")
        assert matrix.rows == []
        assert "no samples match" in matrix._empty_strip().text
        await pilot.press("f")  # disagreeing with the human label
        await until(lambda: matrix.filter_kind == "disagree", what="the disagree filter")
        assert "refund-late-request" in matrix.rows and 0 < len(matrix.rows) < 15
        await pilot.press(*["f"] * (len(FILTERS) - 2))
        await until(lambda: matrix.filter_kind == "all", what="every filter in turn, back to all")
        assert len(matrix.rows) == 15
        await pilot.press("s", "s")  # file -> id -> score
        await until(lambda: matrix.sort_by == "score", what="sorted by score")
        # No verdict is final without a judge: no row has a score, each has a partial figure.
        assert all(app.session.model.results[i].score is None for i in matrix.rows)
        scores = [app.session.model.results[i].partial_score for i in matrix.rows]
        assert None not in scores and scores == sorted(scores)
        await pilot.press("r")
        await until(lambda: matrix.reverse, what="the sort reversed")
        assert [app.session.model.results[i].partial_score for i in matrix.rows] == sorted(scores, reverse=True)
        # the run header hears of the sort from the table's message
        await until(lambda: "sort: score ↓" in str(app.query_one("#run-header").render()), what="the run header naming the sort")
        assert "sort: score" in str(app.query_one("#run-header").render())


async def test_keyboard_and_mouse_select_cells_and_inspect(studio: Path):
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        await focused_on(app, matrix)
        await pilot.press("down", "right")
        await pilot.pause()
        # the selection follows the table's cursor through its message
        await until(lambda: app.selection == ("refund-late-request", "resolves-issue"),
                    what=lambda: f"the selection on the cell under the cursor (it is {app.selection})")
        assert app.selection == ("refund-late-request", "resolves-issue")
        assert "resolves-issue" in str(app.query_one("#cell-hint").render())
        # Click the first criterion column of the fourth row: it is selected, the table stays;
        # a double click opens the inspector.
        x, y = matrix._fixed_width() + 1, matrix.header_lines + 3
        await pilot.click(ResultsMatrix, offset=(x, y))
        await pilot.pause()
        await until(lambda: app.selection[0] == matrix.rows[3], what=lambda: f"the clicked row selected (it is {app.selection})")
        assert app.selection[0] == matrix.rows[3]
        assert app.query_one("#tabs").active == "results" and app.focused is matrix
        await pilot.click(ResultsMatrix, offset=(x, y), times=2)
        await pilot.pause()
        await until(lambda: app.query_one("#tabs").active == "inspector", what="the inspector opened by the double click")
        assert app.query_one("#tabs").active == "inspector"
        # Clicking the Results tab back gives the table the focus: its keys work at once.
        await pilot.click("#tabs Tab#--content-tab-results")
        await until(lambda: app.query_one("#tabs").active == "results" and app.focused is matrix,
                    what="the table focused after a click on its tab")
        before = matrix.filter_kind
        await pilot.press("f")
        await pilot.pause()
        assert matrix.filter_kind != before


async def test_inspector_shows_check_evidence_and_sample(studio: Path):
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        inspector = await open_in_inspector(app, pilot, "internal-link-leak", "no-internal-links")
        head = str(inspector.query_one("#insp-head").render())
        assert "internal-link-leak" in head and "no-internal-links" in head and "check" in head
        body = await drawn(inspector.query_one("#insp-body"), "regex", what="the check's evidence in the inspector")
        assert "regex" in body
        # The whole sample at a glance.
        matrix = app.query_one(ResultsMatrix)
        matrix.select_criterion(None)
        matrix.action_cursor(0, -10)
        await pilot.pause()
        app.query_one("#tabs").active = "inspector"
        await pilot.pause()
        body = await drawn(app.query_one(Inspector).query_one("#insp-body"), "resolves-issue", "short",
                           "no-internal-links", what="the whole sample in the inspector, every criterion")
        for criterion in ("resolves-issue", "short", "no-internal-links"):
            assert criterion in body


async def test_help_palette_and_keys_in_text_fields(studio: Path):
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        app.query_one(ResultsMatrix).focus()
        await focused_on(app, app.query_one(ResultsMatrix))
        await pilot.press("question_mark")
        await on_screen(app, HelpScreen)
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, HelpScreen), what="the help closed by escape")
        await pilot.press("f1")
        await on_screen(app, HelpScreen)
        await pilot.press("f1")
        await until(lambda: not isinstance(app.screen, HelpScreen), what="the help closed by f1")
        # Printable keys typed into a text field stay there.
        field = app.editor.query("Input").first()
        field.focus()
        await pilot.pause()
        before = app.query_one(ResultsMatrix).filter_kind
        await pilot.press("question_mark", "f", "s")
        await until(lambda: field.value.endswith("?fs"), what="the three keys typed into the field")
        assert not isinstance(app.screen, HelpScreen)
        assert app.query_one(ResultsMatrix).filter_kind == before
        # Every action is in the command palette.
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for title in ("Save rubric", "Re-grade now", "Filter: failing", "Filter: disagreeing with the label",
                      "Filter: errors", "Filter: pending", "Sort by score", "Sort by verdict", "Show inspector",
                      "Help", "Quit"):
            assert title in titles
        # ctrl+q quits from anywhere, even a text field.
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0 or app.return_code is None


# -- with a judge (fake OpenAI-compatible server) ---------------------------------------------
async def test_judge_cells_go_pending_then_final_and_resave_makes_no_calls(studio: Path, fake_llm, tmp_path: Path):
    recorder = Recorder()
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", judge="openai-compatible:fake-judge",
                    base_url=fake_llm.base_url_openai, cache_path=tmp_path / "cache.sqlite", watch=False)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await until(lambda: graded(app), timeout=30)
        await pilot.pause()
        assert "GradeProgress" in recorder.names
        assert app.session.judge_label == "openai-compatible:fake-judge"
        calls = fake_llm.calls()
        assert calls == 15 * 4
        tone = cell(app, "refund-within-window", "tone")
        assert tone.status in (Status.MET, Status.UNMET) and tone.source == "judge"
        assert not app.query_one("#judge-note").display
        status = str(app.query_one("#status").render())
        assert "openai-compatible:fake-judge" in status and f"{calls} calls" in status
        # A re-save of the same text, or a comment-only edit, makes no call.
        rubric = studio / "support_reply" / "support_reply.yaml"
        app.session.document.replace_text("# a comment\n" + app.session.document.text)
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await until(lambda: app.session.run_number > run and graded(app))
        assert fake_llm.calls() == calls
        assert rubric.read_text().startswith("# a comment")
        # The inspector shows the judge's rationale, evidence and the exact exchange.
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        matrix.select_sample("refund-within-window")
        matrix.select_criterion("resolves-issue")
        await pilot.press("enter")
        await pilot.pause()
        inspector = app.query_one(Inspector)
        body = await drawn(inspector.query_one("#insp-body"), "rationale", what="the judge's rationale in the inspector")
        assert "rationale" in body
        inspector.query_one("#insp-exchange").collapsed = False
        await pilot.pause()
        exchange_text = inspector.query_one("#insp-exchange-text")
        await until(lambda: "chat/completions" in drawn_text(exchange_text) or "── user ──" in drawn_text(exchange_text),
                    what=lambda: f"the exchange with the judge, opened; it draws {drawn_text(exchange_text)!r}")
        exchange = shown(exchange_text)
        assert "chat/completions" in exchange or "── user ──" in exchange


async def test_unfound_quotes_are_flagged_in_the_inspector(studio: Path, fake_llm, tmp_path: Path):
    fake_llm.always(Reply({"verdict": "met", "rationale": "it says so", "evidence": ["this sentence is not there", "thanks"]}))
    rubric = studio / "solo.yaml"
    rubric.write_text("name: solo\ncriteria:\n  - id: polite\n    outcome: Polite\n")
    (studio / "solo.samples.jsonl").write_text(json.dumps({"id": "a", "output": "Hello there, thanks!"}) + "\n")
    app = StudioApp(rubric, judge="openai-compatible:fake-judge", base_url=fake_llm.base_url_openai,
                    cache_path=tmp_path / "cache.sqlite", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app), timeout=30)
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        matrix.select_criterion("polite")
        await pilot.press("enter")
        await pilot.pause()
        body = await drawn(app.query_one(Inspector).query_one("#insp-body"), "“this sentence is not there”",
                           "“thanks”", what="the judge's two quotes in the inspector")
        assert "“this sentence is not there”  not in the sample" in body
        assert "✓ “thanks”" in body


async def test_quit_with_unsaved_edits_asks(studio: Path):
    from rubric_studio.tui.conflict import UnsavedScreen

    rubric = studio / "support_reply" / "support_reply.yaml"
    app = StudioApp(rubric, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        await unsaved_edit(app, pilot, "unsaved")
        await pilot.press("ctrl+q")
        await until(lambda: isinstance(app.screen, UnsavedScreen))
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, UnsavedScreen)
        await pilot.press("ctrl+q")
        await until(lambda: isinstance(app.screen, UnsavedScreen))
        await pilot.press("s")  # save and quit
        await until(lambda: "unsaved" in rubric.read_text(), what="the rubric saved before quitting")
    assert "unsaved" in rubric.read_text()


async def test_the_palettes_screenshot_makes_the_downloads_folder_or_falls_back_saying_why(studio: Path, tmp_path,
                                                                                           monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))  # no user-dirs.dirs naming another
    monkeypatch.chdir(tmp_path)
    app = StudioApp(studio / "support_reply" / "support_reply.yaml", watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        app.deliver_screenshot(filename="shot.svg")
        await until(lambda: (home / "Downloads" / "shot.svg").is_file(), what="the screenshot in a new Downloads")
        (home / "Downloads" / "shot.svg").unlink()
        (home / "Downloads").rmdir()
        (home / "Downloads").write_text("a file where the folder should be")
        seen = []
        monkeypatch.setattr(app, "notify", lambda message, **kw: seen.append(message))
        app.deliver_screenshot(filename="shot.svg")
        await until(lambda: (tmp_path / "shot.svg").is_file(), what="the screenshot in the current folder")
        await pilot.pause()
    assert any(f"{home / 'Downloads'} cannot be used" in m and f"saving the screenshot in {tmp_path}" in m
               for m in seen)
