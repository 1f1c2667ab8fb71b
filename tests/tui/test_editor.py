"""The rubric editor pane, driven with Pilot in a minimal host app.

The host sets the typing pauses out of reach: typed text is applied when a test says so
(``settle``, enter, leaving the field), never by a timer racing a loaded machine. The
one test about the pause itself shortens it and waits for the edit to land.
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, Footer, Input, OptionList, Select, TextArea

from rubric_studio.core.atomic import STATE_FOLDER
from rubric_studio.core.document import RubricDocument
from rubric_studio.tui.editor import (
    CRITERION_SPECS,
    ConfirmDelete,
    EditBursts,
    EditorPane,
    FieldEdited,
    FieldInput,
    apply_field,
)
from tests.tui.studio_helpers import focused_on, on_screen, until

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "sample_rubrics" / "support_reply" / "support_reply.yaml"
STUDIO_CSS = ROOT / "rubric_studio" / "tui" / "studio.tcss"  # the studio's one stylesheet
NO_PAUSE = 3600.0  # a typing pause no test waits for


class Host(App):
    """Mounts one EditorPane and records the messages it posts."""

    CSS_PATH = str(STUDIO_CSS)

    def __init__(self, document: RubricDocument) -> None:
        super().__init__()
        self.document = document
        self.events: list[tuple[str, Any]] = []

    def compose(self) -> ComposeResult:
        pane = EditorPane(self.document, id="editor")
        pane.field_debounce = pane.yaml_debounce = NO_PAUSE
        yield pane
        yield Footer()

    def on_editor_pane_changed(self, message: EditorPane.Changed) -> None:
        assert message.document is self.document
        self.events.append(("changed", message.document.text))

    def on_editor_pane_saved(self, message: EditorPane.Saved) -> None:
        self.events.append(("saved", message.document.disk_text))

    def on_editor_pane_selection_changed(self, message: EditorPane.SelectionChanged) -> None:
        self.events.append(("selected", message.criterion_id))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    target = tmp_path / "support_reply.yaml"
    target.write_bytes(SUPPORT.read_bytes())
    return target


@pytest.fixture
def app(rubric: Path) -> Host:
    return Host(RubricDocument.load(rubric))


async def settle(pilot: Any) -> None:
    """Apply what is waiting for its debounce now, then let the app catch up."""
    await pilot.pause()
    await pilot.app.query_one(EditorPane).flush()
    await pilot.pause()


def list_prompts(app: Host) -> list[str]:
    listing = app.query_one("#ed-list", OptionList)
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


def comment_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith("#")]


async def test_editing_the_weight_posts_changed_updates_yaml_and_saves(app: Host, rubric: Path):
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot.pause()  # the first frame drawn (the studio's whole stylesheet applies)
        pane = app.query_one(EditorPane)
        weight = app.query_one("#ed-f-weight", Input)
        assert weight.value == "3"
        weight.focus()
        weight.value = "5"
        await pilot.pause()
        assert app.kinds() == [] and pane.waiting_for_pause  # not while typing ...
        pane.field_debounce = 0.05
        weight.value = "50"
        await until(lambda: app.kinds() != [], timeout=30)
        assert app.kinds() == ["changed"] and not pane.waiting_for_pause  # ... but after the typing pause
        yaml_text = app.query_one("#ed-yaml", TextArea).text
        assert yaml_text == app.document.text
        assert "    weight: 50\n    required: true" in yaml_text
        assert app.document.dirty and rubric.read_text(encoding="utf-8") == SUPPORT.read_text(encoding="utf-8")
        assert "×50" in list_prompts(app)[0]

        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.kinds() == ["changed", "saved"]
        saved = rubric.read_text(encoding="utf-8")
        assert saved == app.document.text and not app.document.dirty
        assert '    weight: -3        # penalty: "met" means the reply does the bad thing' in saved
        assert comment_lines(saved) == comment_lines(SUPPORT.read_text(encoding="utf-8"))
        assert [p.name for p in rubric.parent.iterdir() if p.name != STATE_FOLDER] == [rubric.name]  # no temp file left


async def test_invalid_values_show_inline_and_undo_redo_restore(app: Host):
    async with app.run_test(size=(120, 35)) as pilot:
        original = app.document.text
        weight = app.query_one("#ed-f-weight", Input)
        error = app.query_one("#ed-f-weight-err")
        weight.focus()
        weight.value = "abc"
        await settle(pilot)
        assert error.display and "expected a number" in str(error.render())
        assert weight.has_class("-field-invalid")
        assert app.document.text == original and app.kinds() == []
        weight.value = "0"
        await settle(pilot)
        assert "weight 0 has no effect" in str(error.render())

        weight.value = "3"
        weight.cursor_position = 1
        await pilot.press("backspace", "4", "2")
        await pilot.press("tab")  # leaving the field applies it at once
        await pilot.pause()
        assert not error.display and not weight.has_class("-field-invalid")
        assert app.document.criterion_data(0)["weight"] == 42
        weight.focus()
        await focused_on(app, weight)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.document.text == original
        assert weight.value == "3" and "×3" in list_prompts(app)[0]
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.document.criterion_data(0)["weight"] == 42 and weight.value == "42"
        assert app.kinds() == ["changed", "changed", "changed"]


async def test_criteria_list_add_duplicate_move_delete(app: Host, rubric: Path):
    async with app.run_test(size=(120, 35)) as pilot:
        document = app.document
        listing = app.query_one("#ed-list", OptionList)
        listing.focus()
        await focused_on(app, listing)
        await pilot.press("down")
        await pilot.pause()
        assert app.events[-1] == ("selected", "policy-accurate")

        await pilot.press("a")  # added after the selected one, its outcome ready to type over
        await pilot.pause()
        assert document.criterion_ids()[2] == "new-criterion"
        assert listing.option_count == 8 and listing.highlighted == 2
        outcome = app.query_one("#ed-f-outcome", TextArea)
        await focused_on(app, outcome)  # the new criterion's form is composed, then focused
        assert outcome.selected_text == "Describe what a good answer does"
        await pilot.press(*"Calls")
        await pilot.press("tab")
        await pilot.pause()
        assert document.criterion_data(2)["outcome"] == "Calls"

        listing.focus()
        await focused_on(app, listing)
        await pilot.press("c")
        await pilot.pause()
        assert document.criterion_ids()[2:4] == ["new-criterion", "new-criterion-copy"]
        assert listing.highlighted == 3
        await pilot.press("left_square_bracket", "shift+up")
        await pilot.pause()
        assert document.criterion_ids()[1:4] == ["new-criterion-copy", "policy-accurate", "new-criterion"]
        assert listing.highlighted == 1
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert document.criterion_ids()[1:4] == ["policy-accurate", "new-criterion-copy", "new-criterion"]

        await pilot.press("d")
        await on_screen(app, ConfirmDelete)
        await pilot.press("n")
        await pilot.pause()
        assert document.criteria_count == 9
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert "new-criterion-copy" not in document.criterion_ids() and document.criteria_count == 8
        assert listing.option_count == 8 and "new-criterion" in list_prompts(app)[2]

        await pilot.press("ctrl+s")
        await pilot.pause()
        saved = rubric.read_text(encoding="utf-8")
        assert "    tags: [axis:accuracy, policy]\n\n  - id: new-criterion\n    outcome: Calls\n\n  - id: tone" in saved
        assert comment_lines(saved) == comment_lines(SUPPORT.read_text(encoding="utf-8"))
        document.parse()


async def test_yaml_view_edits_update_the_form_and_syntax_errors_show_inline(app: Host, rubric: Path):
    async with app.run_test(size=(120, 35)) as pilot:
        app.query_one("#ed-tabs").active = "ed-tab-yaml"
        await pilot.pause()
        view = app.query_one("#ed-yaml", TextArea)
        view.focus()
        line = view.text.splitlines().index("    weight: 3")
        view.move_cursor((line, len("    weight: 3")))
        await pilot.press("backspace", "9")
        await settle(pilot)
        assert app.document.criterion_data(0)["weight"] == 9
        assert app.query_one("#ed-f-weight", Input).value == "9"
        assert "×9" in list_prompts(app)[0]
        assert app.kinds() == ["changed"]

        view.move_cursor((13, 0))
        await pilot.press(*"x: [", "enter")
        await settle(pilot)
        problem = str(app.query_one("#ed-yaml-problem").render())
        assert problem.startswith(f"✗ {rubric}:") and "YAML syntax error" in problem
        location = problem[2:].split(": YAML", 1)[0]
        assert location.count(":") == 2  # file:line:col
        assert app.document.text == view.text and "x: [" in app.document.text  # the text is kept
        assert "does not parse" in str(app.query_one(".ed-empty").render())

        # The document's undo, also from the YAML view: moving the cursor ended the first
        # burst of typing, so each burst is its own step however quickly they followed.
        weight_nine = SUPPORT.read_text(encoding="utf-8").replace("    weight: 3\n", "    weight: 9\n", 1)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.document.yaml_problem is None and view.text == weight_nine
        assert app.query_one("#ed-f-weight", Input).value == "9"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert view.text == SUPPORT.read_text(encoding="utf-8")
        assert app.query_one("#ed-f-weight", Input).value == "3"
        await pilot.press("ctrl+y", "ctrl+y")
        await pilot.pause()
        assert "x: [" in view.text and app.document.yaml_problem is not None


async def test_selection_rubric_tab_refresh_and_narrow_layout(app: Host, rubric: Path):
    async with app.run_test(size=(120, 35)) as pilot:
        pane = app.query_one(EditorPane)
        assert pane.select_criterion("no-internal-links")
        await until(lambda: app.query_one("#ed-c-pattern", Input).value
                    == r"admin\.ledgerly\.io|ledgerly\.atlassian\.net")
        assert app.events == []  # programmatic selection is not echoed back
        assert not pane.select_criterion("missing")
        app.query_one("#ed-list", OptionList).focus()
        await focused_on(app, app.query_one("#ed-list", OptionList))
        await pilot.press("up")
        await pilot.pause()
        assert app.events == [("selected", "no-boilerplate")]
        assert app.query_one("#ed-c-words", TextArea).text.splitlines() == [
            "As an AI", "apologize for any inconvenience", "Dear valued customer",
        ]

        app.query_one("#ed-tabs").active = "ed-tab-rubric"
        await pilot.pause()
        threshold = app.query_one("#ed-r-pass_threshold", Input)
        assert threshold.value == "0.8"
        threshold.value = "0.7"
        app.query_one("#ed-j-mode", Select).value = "batch"
        app.query_one("#ed-j-model", Input).value = "gpt-4o"  # not provider:model
        await settle(pilot)
        parsed = app.document.parse()
        assert parsed.pass_threshold == 0.7 and parsed.judge.mode == "batch"
        assert parsed.judge.model == "openai:gpt-6-luna"
        assert "provider:model" in str(app.query_one("#ed-j-model-err").render())

        app.document.save()
        rubric.write_text(app.document.text.replace("weight: 3", "weight: 6"), encoding="utf-8")
        assert app.document.disk_changed()
        app.document.reload_from_disk()
        pane.refresh_from_document()
        await pilot.pause()
        assert app.query_one("#ed-yaml", TextArea).text == app.document.text
        pane.select_criterion("resolves-issue")
        await until(lambda: app.query_one("#ed-f-weight", Input).value == "6")

        app.query_one("#ed-tabs").active = "ed-tab-criteria"
        await pilot.resize_terminal(64, 35)
        await pilot.pause()
        assert pane.has_class("-narrow")
        side, form = app.query_one("#ed-side"), app.query_one("#ed-form")
        assert form.region.y > side.region.y and form.region.width > 50


async def test_a_check_types_rows_and_the_rubric_tab_are_built_when_first_shown_and_show_the_file(app: Host):
    """The editor opens without the rows its first criterion does not show (every check type's
    parameters, the Rubric tab's settings): each is built the first time it is shown and fills in
    from the document as it is then, and keys typed right after opening the tab reach its field."""
    async with app.run_test(size=(120, 35)) as pilot:
        pane = app.query_one(EditorPane)
        await until(lambda: pane.ready)
        assert pane.selected_id() == "resolves-issue"  # judged: no check's rows shown
        for hidden in ("#ed-check-regex", "#ed-check-keywords", "#ed-check-json_path", "#ed-rubric"):
            assert not app.query_one(hidden).children, hidden
        assert pane.select_criterion("no-internal-links")
        await until(lambda: app.query_one("#ed-c-pattern", Input).value
                    == r"admin\.ledgerly\.io|ledgerly\.atlassian\.net")
        assert not app.query_one("#ed-check-keywords").children  # only the type shown is built
        assert pane.select_criterion("no-boilerplate")
        await until(lambda: app.query("#ed-c-words") and app.query_one("#ed-c-words", TextArea).text.splitlines()
                    == ["As an AI", "apologize for any inconvenience", "Dear valued customer"])

        app.document.set_rubric_field("name", "support-reply-v2")  # changed before the tab was ever shown
        pane.refresh_from_document()
        await pilot.pause()
        app.query_one("#ed-tabs").active = "ed-tab-rubric"
        pane.focus()  # what F2 does: the active tab's first field
        await pilot.press("end", "!", "x")
        await until(lambda: app.query("#ed-r-name") and app.query_one("#ed-r-name", Input).value
                    == "support-reply-v2!x")
        assert app.focused is app.query_one("#ed-r-name", Input)
        assert app.query_one("#ed-r-pass_threshold", Input).value == "0.8"


async def test_type_select_and_score_range_rows(app: Host):
    async with app.run_test(size=(120, 35)) as pilot:
        pane = app.query_one(EditorPane)
        pane.select_criterion("tone")
        # the rows are counted once mounted, filled in after: wait for the values read
        await until(lambda: app.query_one("#ed-range-lower-3", Input).value == "10"
                    and app.query_one("#ed-range-add", Button).is_mounted, what="tone's four bands filled in")
        app.query_one("#ed-range-add", Button).press()
        await until(lambda: len(app.query(".ed-range-row")) == 5 and app.query_one("#ed-range-lower-2", Input).value == "5"
                    and app.query_one("#ed-range-lower-4", Input).value == "10", what="the new band's row filled in")
        assert list(app.document.criterion_data(2)["score_ranges"]) == [0, 4, 5, 7, 10]
        band = app.query_one("#ed-range-text-2", Input)
        await focused_on(app, band)  # the new band's text, once it is mounted
        # The new band's text is a placeholder, not a value typing would land in the middle of.
        assert band.value == "" and band.placeholder == "Describe this band"
        await pilot.press(*"No actions taken")
        await settle(pilot)
        assert app.document.criterion_data(2)["score_ranges"][5] == "No actions taken"
        assert "      5: No actions taken\n" in app.document.text  # not quoted like the empty band was
        app.query_one("#ed-range-del-0", Button).press()
        await pilot.pause()
        assert 0 not in app.document.criterion_data(2)["score_ranges"]
        # the band rows are rebuilt and filled in: type into the new ones
        await until(lambda: len(app.query(".ed-range-row")) == 4
                    and app.query_one("#ed-range-lower-0", Input).value == "4", timeout=30)
        lower = app.query_one("#ed-range-lower-0", Input)
        lower.value = "1"  # a lower bound applies on enter / leaving the field, not after the typing pause
        await pilot.pause()
        assert pane.pending_fields == ["ed-range-lower-0"] and not pane.waiting_for_pause
        assert 4 in app.document.criterion_data(2)["score_ranges"]
        lower.focus()
        await focused_on(app, lower)
        await pilot.press("enter")
        await pilot.pause()
        assert sorted(app.document.criterion_data(2)["score_ranges"]) == [1, 5, 7, 10]
        assert app.query_one("#ed-range-text-0", Input).value == "Neutral and formulaic; reads like a template"
        assert app.query_one("#ed-range-text-1", Input).value == "No actions taken"

        app.query_one("#ed-f-type", Select).value = "regex"
        await pilot.pause()
        data = app.document.criterion_data(2)
        assert data["check"] == {"type": "regex"} and "outcome" not in data
        assert not app.query_one("#ed-f-outcome").parent.parent.display  # judge-only rows hidden
        pattern = app.query_one("#ed-c-pattern", Input)
        pattern.value = "(unclosed"
        await settle(pilot)
        assert "does not compile" in str(app.query_one("#ed-c-pattern-err").render())
        pattern.value = r"\bsorry\b"
        await settle(pilot)
        assert app.document.parse().criterion("tone").check.pattern == r"\bsorry\b"


async def test_text_keys_a_user_expects_and_a_checkbox_that_shows_its_state(app: Host):
    from textual.widgets import Checkbox

    async with app.run_test(size=(120, 35)) as pilot:
        # ctrl+a selects all (in a one-line field and in the outcome); typing replaces it.
        weight = app.query_one("#ed-f-weight", Input)
        weight.focus()
        await pilot.press("end", "ctrl+a")
        assert weight.selection == (0, len(weight.value))
        await pilot.press("5")
        assert weight.value == "5"
        outcome = app.query_one("#ed-f-outcome", TextArea)
        outcome.focus()
        await pilot.press("ctrl+a")
        assert outcome.selected_text == outcome.text
        # ctrl+k deletes to the end of the line as written, not to where the field wraps it.
        outcome.text = "Blames a customer for the outage (narwhal) rather than the system that failed them\nsecond line"
        await pilot.pause()
        assert outcome.wrapped_document.height > 2  # the first line wraps
        outcome.move_cursor((0, len("Blames a ")))
        await pilot.press("ctrl+k")
        assert outcome.text == "Blames a \nsecond line"
        await pilot.press("ctrl+k")  # at the end of a line: joins the next one
        assert outcome.text == "Blames a second line"
        await settle(pilot)
        assert app.document.criterion_data(0)["outcome"] == "Blames a second line"
        # required: ✓ when on, an empty box when off (not the same X in two colours).
        required = app.query_one("#ed-f-required", Checkbox)
        assert required.value and "✓" in str(required.render())
        required.focus()
        await pilot.press("space")
        await pilot.pause()
        assert not required.value and "✓" not in str(required.render()) and "X" not in str(required.render())
        assert app.document.criterion_data(0)["required"] is False
        await pilot.press("space")
        await pilot.pause()
        assert required.value and "✓" in str(required.render())


async def test_plus_band_works_on_the_first_click_from_a_field_being_typed_in(app: Host):
    async with app.run_test(size=(120, 35)) as pilot:
        outcome = app.query_one("#ed-f-outcome", TextArea)
        outcome.focus()
        outcome.move_cursor(outcome.document.end)
        await pilot.press(*" now")  # an edit waiting for its pause
        await pilot.click("#ed-range-add")
        await until(lambda: "score_ranges" in app.document.criterion_data(0))
        assert list(app.document.criterion_data(0)["score_ranges"]) == [0]
        assert app.document.criterion_data(0)["outcome"].endswith(" now")
        assert app.focused is app.query_one("#ed-range-text-0", Input)


# -- displaying never writes ----------------------------------------------------------
TYPOS = {
    # the first criterion, shown as soon as the editor opens: an unknown key instead of outcome
    "    outcome: >-\n      Directly answers": "    outcom: >-\n      Directly answers",
    # values the form's selects do not offer
    "    operator: contradiction": "    operator: contradicton",
    "pass_threshold: 0.8\n": "pass_threshold: 0.8\non_error: ignor\n",
    "  concurrency: 8\n": "  concurrency: 8\n  mode: btch\n",
    # a check of an unknown type
    "      type: regex": "      type: regexp",
}


def with_typos(path: Path) -> str:
    text = SUPPORT.read_text(encoding="utf-8")
    for old, new in TYPOS.items():
        assert old in text
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return text


async def test_displaying_a_rubric_with_typos_never_writes_to_it(tmp_path: Path):
    path = tmp_path / "typos.yaml"
    text = with_typos(path)
    app = Host(RubricDocument.load(path))
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        listing = app.query_one("#ed-list", OptionList)
        listing.focus()
        for _ in range(app.document.criteria_count - 1):  # show every criterion
            await pilot.press("down")
            await pilot.pause()
        await pilot.press("home")
        pane = app.query_one(EditorPane)
        await until(lambda: pane.selected == 0 and app.query_one("#ed-form").index == 0, timeout=30)
        for tab in ("ed-tab-rubric", "ed-tab-yaml", "ed-tab-criteria"):
            app.query_one("#ed-tabs").active = tab
            await pilot.pause()
        await settle(pilot)  # whatever any field took for an edit is applied now
        assert app.document.text == text and not app.document.dirty
        assert "changed" not in app.kinds()
        assert app.query_one("#ed-f-outcome", TextArea).text == ""
        assert app.query_one("#ed-f-type", Select).value == "judge"

        # A field typed back to what the file says is not an edit either ...
        weight = app.query_one("#ed-f-weight", Input)
        weight.focus()
        weight.value = "33"
        await pilot.pause()
        weight.value = "3"
        await pilot.pause()
        assert pane.pending_fields == []
        await settle(pilot)
        assert app.document.text == text and "changed" not in app.kinds()
        # ... while a real edit still applies.
        outcome = app.query_one("#ed-f-outcome", TextArea)
        outcome.focus()
        await focused_on(app, outcome)
        await pilot.press(*"Answers")
        await settle(pilot)
        assert app.document.criterion_data(0)["outcome"] == "Answers" and app.kinds()[-1] == "changed"


async def test_studio_reloads_an_outside_fix_quietly_after_showing_a_typo(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp
    from rubric_studio.tui.conflict import ConflictScreen
    from rubric_studio.tui.messages import FilesChanged

    folder = tmp_path / "support_reply"
    shutil.copytree(SUPPORT.parent, folder)
    path = folder / SUPPORT.name
    typo = SUPPORT.read_text(encoding="utf-8").replace("    outcome: >-\n      Directly", "    outcom: >-\n      Directly")
    assert "outcom: >-" in typo  # the first criterion, shown as soon as the editor opens
    path.write_text(typo, encoding="utf-8")
    app = StudioApp(path, watch=False)
    changed: list[EditorPane.Changed] = []
    async with app.run_test(size=(120, 35), message_hook=lambda m: changed.append(m)
                            if isinstance(m, EditorPane.Changed) else None) as pilot:
        await until(lambda: app.editor is not None and app.editor.ready, timeout=30,
                    what="the editor showing the document (its fields filled in)")
        await pilot.pause()
        await app.editor.flush()  # whatever a field took for an edit is applied now
        await pilot.pause()
        assert not app.session.document.dirty and app.session.document.text == typo and changed == []

        fixed = SUPPORT.read_text(encoding="utf-8")
        path.write_text(fixed, encoding="utf-8")
        app.post_message(FilesChanged({"rubric"}))
        await until(lambda: app.session.document.text == fixed, timeout=30)
        assert app.session.document.text == fixed and not app.session.document.dirty
        assert not isinstance(app.screen, ConflictScreen)
        await until(lambda: app.query_one("#ed-yaml", TextArea).text == fixed, timeout=30)
        # let the re-grade finish before the app closes
        await until(lambda: app.session.report is not None and not app.session.running, timeout=60)


# -- closing while the editor mounts ----------------------------------------------------
async def test_layout_code_survives_the_app_closing_under_it(app: Host):
    async with app.run_test(size=(120, 35)) as pilot:
        pane = app.query_one(EditorPane)
        form = app.query_one("#ed-form")
        await pilot.pause()
        app.exit()  # the app is closing: the editor's rows may be gone at any moment
        await form.query_one("#ed-fields").remove()
        await form.apply_layout()
        await pane._sync(force=True)
        pane.refresh_from_document()
        pane.focus()
    assert app.return_code in (0, None)


async def test_a_removed_editor_neither_lays_out_nor_writes(app: Host):
    async with app.run_test(size=(120, 35)) as pilot:
        pane = app.query_one(EditorPane)
        form = app.query_one("#ed-form")
        await pilot.pause()
        text = app.document.text
        await pane.remove()
        await form.apply_layout()
        await pane._sync(force=True)
        await pilot.pause()
        assert app.document.text == text and app.kinds() == []


# -- labels --------------------------------------------------------------------------------
def cut_labels(app: Any, container: str) -> list[tuple[str, int]]:
    """The field labels shown in ``container`` whose text does not fit their width."""
    cut = []
    for label in app.query_one(container).query(".ed-label"):
        text = str(label.render())
        if label.region.width and label.content_region.width < len(text):
            cut.append((text, label.content_region.width))
    return cut


async def test_field_labels_show_in_full_in_the_studio_side_pane(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    folder = tmp_path / "support_reply"
    shutil.copytree(SUPPORT.parent, folder)
    app = StudioApp(folder / SUPPORT.name, watch=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(lambda: app.editor is not None and app.editor.is_mounted, timeout=30)
        pane = app.editor
        app.action_show("editor")  # the editor in use has its width (the results, focused, take it)
        await until(lambda: pane.size.width > 40, timeout=30)
        app.query_one("#ed-tabs").active = "ed-tab-rubric"
        await pilot.pause()

        def shown_labels() -> set[str]:
            return {str(label.render()) for label in app.query("#ed-rubric .ed-label") if label.region.width}

        # the tab's fields are built when it is first shown, and laid out after
        wanted = {"description", "temperature", "max retries", "concurrency"}
        await until(lambda: wanted <= shown_labels(), what=lambda: f"the rubric tab's labels laid out: {shown_labels()}")
        labels = shown_labels()
        assert {"description", "temperature", "max retries", "concurrency"} <= labels
        assert pane.has_class("-narrow") and cut_labels(app, "#ed-rubric") == []
        description = app.query_one("#ed-r-description")
        assert description.region.width >= 20  # the field keeps room to type in

        app.query_one("#ed-tabs").active = "ed-tab-criteria"
        assert pane.select_criterion("no-internal-links")  # a regex check: "expect match"
        await pilot.pause()
        await until(lambda: app.query_one("#ed-c-expect_match").region.width > 0, timeout=30)
        assert cut_labels(app, "#ed-form") == []

        await pilot.resize_terminal(80, 24)  # a small terminal: labels go above their fields
        await until(lambda: app.query_one("#ed-form").has_class("-stacked"), timeout=30)
        await pilot.pause()
        assert cut_labels(app, "#ed-form") == []
        app.query_one("#ed-tabs").active = "ed-tab-rubric"
        await pilot.pause()
        await until(lambda: app.query_one("#ed-r-name").region.width and app.query_one("#ed-rubric .ed-label").region.width,
                    what="the rubric tab laid out again at 80×24")
        assert cut_labels(app, "#ed-rubric") == []
        name_label = app.query_one("#ed-rubric .ed-label")
        assert app.query_one("#ed-r-name").region.y > name_label.region.y
        await until(lambda: app.session.report is not None and not app.session.running, timeout=60)


# -- a field reports edits; the pane groups them into undo steps ------------------------
class OneField(App):
    """A lone weight field, filled in from criterion data, recording what it posts."""

    def __init__(self) -> None:
        super().__init__()
        self.posted: list[FieldEdited] = []

    def compose(self) -> ComposeResult:
        yield FieldInput(CRITERION_SPECS["weight"], id="weight")

    def on_field_control_edited(self, message: FieldEdited) -> None:
        self.posted.append(message)


async def test_a_field_posts_the_parsed_value_the_error_or_that_it_is_back_to_the_document():
    app = OneField()
    async with app.run_test() as pilot:
        field = app.query_one(FieldInput)
        field.value = "7"  # not filled in from the document yet: not an edit
        await pilot.pause()
        assert app.posted == []
        field.show_data({"weight": 3})
        await pilot.pause()
        assert field.value == "3" and app.posted == []  # showing the document posts nothing
        for typed in ("2.5", "zero", "3"):
            field.value = typed
            await pilot.pause()
        edits = [(m.value, m.error, m.reverted, m.apply_now) for m in app.posted]
        assert edits == [(2.5, None, False, False), (None, "expected a number, got 'zero'", False, False),
                         (None, None, True, False)]
        field.value = "4"
        await pilot.press("enter")
        assert (app.posted[-1].value, app.posted[-1].apply_now) == (4, True)
        assert app.posted[-1].spec is CRITERION_SPECS["weight"]


def test_a_new_burst_is_a_new_undo_step_however_close_in_time(rubric: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(RubricDocument, "coalesce_seconds", float("inf"))  # the clock never splits a step here
    document = RubricDocument.load(rubric)
    bursts = EditBursts(document)
    weight = CRITERION_SPECS["weight"]
    original = document.text
    for value in (4, 5):  # one burst of typing in one field: one step
        bursts.apply("ed-f-weight", partial(apply_field, document, 0, weight, value))
    after_typing = document.text
    bursts.end()  # the user left the field and came back: the same field, a new step
    bursts.apply("ed-f-weight", partial(apply_field, document, 0, weight, 6))
    after_return = document.text
    # the YAML view: typing, moving the cursor (burst 2), typing again
    bursts.apply(("yaml", 1), partial(document.replace_text, after_return.replace("weight: 6", "weight: 60")))
    bursts.apply(("yaml", 2), partial(document.replace_text, document.text.replace("weight: 2", "weight: 20")))
    assert document.undo() and document.text == after_return.replace("weight: 6", "weight: 60")
    assert document.undo() and document.text == after_return
    assert document.undo() and document.text == after_typing
    assert document.undo() and document.text == original and not document.can_undo
