"""The calibration widgets in a tiny host app, driven with Textual's Pilot."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import DataTable, OptionList, Static

from rubric_studio.core.agreement import agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.fit import fit
from rubric_studio.engine.versions import VersionHistory
from rubric_studio.tui.calibration import (
    CALIBRATION_BINDINGS,
    AgreementPanel,
    FitScreen,
    LabelNoteScreen,
    LabelScoreScreen,
    VersionsScreen,
    fit_table,
    step_through,
)
from tests.calibration.calib_helpers import result
from tests.tui.studio_helpers import until

CSS = Path(__file__).resolve().parents[2] / "rubric_studio" / "tui" / "studio.tcss"
RUBRIC = Rubric.model_validate({"name": "t", "criteria": [{"id": "tone", "outcome": "Warm"}]})


def _report():
    samples = [result("a", "pass", {"tone": "met"}), result("b", "fail", {"tone": "unmet"}), result("c", "pass", {"tone": "met"})]
    labels = {"a": Label(verdict="pass"), "b": Label(verdict="pass"), "c": Label(verdict="pass", criteria={"tone": "unmet"})}
    return agreement(samples, labels, RUBRIC)


class Host(App):
    CSS_PATH = str(CSS)

    def __init__(self) -> None:
        super().__init__()
        self.jumps: list[str] = []
        self.results: list[object] = []

    def compose(self) -> ComposeResult:
        yield AgreementPanel(id="panel")

    def on_agreement_panel_jump_to_sample(self, message: AgreementPanel.JumpToSample) -> None:
        self.jumps.append(message.sample_id)


async def test_agreement_panel_shows_figures_and_posts_jump_to_sample():
    app = Host()
    async with app.run_test() as pilot:
        panel = app.query_one(AgreementPanel)
        report = _report()
        panel.show(report, flip_rates={"tone": {"cells": 3, "flipped": 1, "samples": ["c"], "flip_rate": 1 / 3}})
        await pilot.pause()
        table = panel.query_one("#agreement-table", DataTable)
        assert table.row_count == 2  # overall + tone
        assert table.get_row_at(0)[:3] == ["overall", "3", "67%"]
        options = panel.query_one("#agreement-disagreements", OptionList)
        assert options.option_count == 2 and [options.get_option_at_index(i).id for i in range(2)] == ["b", "c"]
        assert "ambiguous wording" in str(panel.query_one("#agreement-consistency", Static).render())
        options.focus()
        options.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert app.jumps == ["c"]
        assert panel.next_disagreement("b") == "c" and panel.next_disagreement("b", -1) == "c"
        assert panel.next_disagreement(None) == "b"


async def test_fit_screen_accept_returns_true_and_cancel_false():
    samples = [result(f"s{i}", "pass" if i % 2 else "fail") for i in range(4)]
    labels = {s.id: Label(verdict="pass") for s in samples}
    rubric = Rubric.model_validate({"name": "t", "pass_threshold": 0.8, "criteria": [{"id": "x", "outcome": "X"}]})
    fitted = fit(rubric, samples, labels)
    fitted.threshold = 0.5  # make sure there is something to accept
    app = Host()
    async with app.run_test() as pilot:
        for answer, (how, what) in enumerate((("click", "#fit-accept"), ("click", "#fit-cancel"), ("press", "escape"))):
            screen = FitScreen(fitted)
            app.push_screen(screen, app.results.append)
            # This screen, laid out: the one before it may still be on its way out on a busy machine.
            await until(lambda s=screen, w=what: app.screen is s and (w == "escape" or s.query_one(w).region.width > 0),
                        what=f"the fit screen {answer + 1} shown")
            await (pilot.click(what) if how == "click" else pilot.press(what))
            await until(lambda n=answer: len(app.results) > n, what=f"the fit screen answered {what}")
    assert app.results == [True, False, False]
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(fit_table(fitted))
    text = console.export_text()
    assert "pass_threshold  0.8 → 0.5" in text and "all labels" in text


async def test_fit_screen_with_nothing_to_change_cannot_accept():
    samples = [result("a", "pass"), result("b", "fail")]
    labels = {"a": Label(verdict="pass"), "b": Label(verdict="fail")}
    rubric = Rubric.model_validate({"name": "t", "criteria": [{"id": "x", "outcome": "X"}]})
    unchanged = fit(rubric, samples, labels)
    assert not unchanged.changed
    app = Host()
    async with app.run_test() as pilot:
        app.push_screen(FitScreen(unchanged), app.results.append)
        await pilot.pause()
        assert app.screen.query_one("#fit-accept").disabled
        await pilot.click("#fit-accept")
        app.screen.action_accept()  # the enter binding
        await pilot.pause()
        assert isinstance(app.screen, FitScreen)
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [False]


async def test_score_and_note_dialogs():
    app = Host()
    async with app.run_test() as pilot:
        app.push_screen(LabelScoreScreen("a", 5), app.results.append)
        await pilot.pause()
        await pilot.press("backspace", "1", "2", "enter")  # 12 is out of range: refused, the dialog stays
        await until(lambda: "0 to 10" in str(app.screen.query_one("#label-score-error", Static).render()),
                    what="the score dialog's error about the range")
        assert isinstance(app.screen, LabelScoreScreen)
        assert "0 to 10" in str(app.screen.query_one("#label-score-error", Static).render())
        await pilot.press("backspace", "backspace", "7", ".", "5", "enter")
        await pilot.pause()
        app.push_screen(LabelScoreScreen("a", 5), app.results.append)
        await pilot.pause()
        await pilot.press("backspace", "enter")
        await pilot.pause()
        app.push_screen(LabelNoteScreen("a", "old"), app.results.append)
        await pilot.pause()
        await pilot.press("end", "!", "enter")
        await pilot.pause()
        app.push_screen(LabelNoteScreen("a", "old"), app.results.append)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [7.5, "clear", "old!", None]


async def test_versions_screen_compares_any_two_versions():
    history = VersionHistory()
    labels = {"a": Label(verdict="pass"), "b": Label(verdict="fail")}
    for number, verdicts in enumerate([("fail", "pass"), ("pass", "fail"), ("pass", "pass")]):
        samples = [result("a", verdicts[0]), result("b", verdicts[1])]
        history.record(RUBRIC, samples, agreement(samples, labels, RUBRIC), text=f"v{number}")
    app = Host()
    async with app.run_test() as pilot:
        screen = VersionsScreen(history, labels)
        app.push_screen(screen)
        await pilot.pause()
        shown = str(screen.query_one("#versions-diff", Static).render())
        assert shown.startswith("v2 → v3 (rubric edit): fixed 0 disagreements, broke 1")
        diff = screen.compare(1, 2)
        assert diff.overall.fixed == ["a", "b"]
        assert "v1 → v2 (rubric edit): fixed 2 disagreements, broke 0" in str(screen.query_one("#versions-diff", Static).render())
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, VersionsScreen), what="the versions screen closed")


def test_bindings_are_single_keys_that_avoid_the_matrix_keys():
    keys = [b.key for b in CALIBRATION_BINDINGS]
    assert len(keys) == len(set(keys))
    assert not {"f", "s", "r", "n", "N", "h", "j", "k", "l", "enter"} & set(keys)
    assert step_through(["a", "b"], "b") == "a" and step_through([], None) is None
