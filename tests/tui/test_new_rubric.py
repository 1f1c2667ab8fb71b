"""The "New rubric" dialog: a file name in the current rubric's folder, checked inline, created from the starter."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.widgets import Input, Static

from rubric_studio.core.loading import load_rubric
from rubric_studio.engine.starter import awaits_outcome
from rubric_studio.tui.new_rubric import NewRubricScreen
from tests.tui.studio_helpers import until

UNSET = object()


class Host(App[None]):
    """Pushes the dialog on mount and keeps what it answered."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.answer: object = UNSET

    def on_mount(self) -> None:
        self.push_screen(NewRubricScreen(self.folder), callback=self._answered)

    def _answered(self, path: Path | None) -> None:
        self.answer = path


def _error(app: Host) -> str:
    return str(app.screen.query_one("#new-rubric-error", Static).render())


async def _said(app: Host, text: str) -> None:
    """Wait until the dialog's error line says ``text`` (it answers the field's change message)."""
    await until(lambda: text in _error(app) if text else _error(app) == "",
                what=lambda: f"the dialog saying {text!r} (it says {_error(app)!r})")


async def _answered(app: Host) -> None:
    await until(lambda: app.answer is not UNSET, what="the dialog's answer")


async def _type(pilot, app: Host, text: str) -> None:
    field = app.screen.query_one("#new-rubric-name", Input)
    field.value = text
    await pilot.pause()


async def test_enter_creates_the_suggested_file_in_the_folder(tmp_path: Path):
    (tmp_path / "new-rubric.yaml").write_text("name: taken\ncriteria: []\n")
    app = Host(tmp_path)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.screen.query_one("#new-rubric-name", Input).value == "new-rubric-2.yaml"  # a free name
        await pilot.press("enter")
        await _answered(app)
    assert app.answer == tmp_path / "new-rubric-2.yaml"
    rubric = load_rubric(tmp_path / "new-rubric-2.yaml")
    assert rubric.name == "new-rubric-2" and awaits_outcome(rubric.criteria[0])
    assert (tmp_path / "new-rubric.yaml").read_text() == "name: taken\ncriteria: []\n"


async def test_an_existing_file_or_a_bad_name_is_refused_inline(tmp_path: Path):
    (tmp_path / "mine.yaml").write_text("keep")
    app = Host(tmp_path)
    async with app.run_test() as pilot:
        await pilot.pause()
        await _type(pilot, app, "mine.yaml")
        await _said(app, "exists already")
        assert "exists already" in _error(app)  # shown while typing
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, NewRubricScreen) and app.answer is UNSET
        await _type(pilot, app, "notes.txt")
        await pilot.press("enter")
        await _said(app, "ends with .yaml")
        assert ".yaml" in _error(app) and not (tmp_path / "notes.txt").exists()
        await _type(pilot, app, "bad\x07name.yaml")
        await pilot.press("enter")
        await _said(app, "control characters")
        assert "control characters" in _error(app) and isinstance(app.screen, NewRubricScreen)
        await _type(pilot, app, "sub/fresh")  # a relative path; no extension: .yaml is added
        await _said(app, "")
        assert _error(app) == ""
        await pilot.press("enter")
        await _answered(app)
    assert app.answer == tmp_path / "sub" / "fresh.yaml" and (tmp_path / "sub" / "fresh.yaml").is_file()
    assert (tmp_path / "mine.yaml").read_text() == "keep"


async def test_escape_creates_nothing(tmp_path: Path):
    app = Host(tmp_path)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await _answered(app)
    assert app.answer is None and list(tmp_path.iterdir()) == []
