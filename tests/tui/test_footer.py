"""The studio's footer keeps its keys while the keys it shows stay the same, and shows new ones
(or a key's new state) as soon as they change."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from rubric_studio.tui.footer import KeysFooter
from tests.tui.studio_helpers import focused_on, until


class _Form(Vertical):
    BINDINGS = [Binding("ctrl+s", "save", "Save")]
    can_save = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True if action != "save" or self.can_save else None  # None: shown, disabled

    def action_save(self) -> None:
        pass


class _Table(Vertical):
    BINDINGS = [Binding("ctrl+r", "run", "Run")]

    def action_run(self) -> None:
        pass


class _Host(App):
    def compose(self) -> ComposeResult:
        with _Form(id="form"):
            yield Input(id="a")
            yield Input(id="b")
        with _Table(id="table"):
            yield Input(id="c")
        yield KeysFooter()


def _keys(app: _Host) -> list[tuple[str, bool]]:
    return [(key.description, key.has_class("-disabled")) for key in app.query_one(KeysFooter).query(FooterKey)]


async def test_a_focus_move_that_changes_no_shown_key_keeps_the_footer_and_a_change_shows_at_once():
    app = _Host()
    async with app.run_test() as pilot:
        footer = app.query_one(KeysFooter)
        app.query_one("#a").focus()
        await focused_on(app, app.query_one("#a"))
        await until(lambda: ("Save", False) in _keys(app))
        await pilot.pause()
        shown = list(footer.query(FooterKey))

        app.query_one("#b", Input).focus()  # same form, same keys
        await focused_on(app, app.query_one("#b"))
        await pilot.pause()
        assert list(footer.query(FooterKey)) == shown  # the very same widgets: nothing rebuilt

        form = app.query_one(_Form)
        form.can_save = False
        app.screen.refresh_bindings()  # the key's state changed: it shows disabled
        await until(lambda: ("Save", True) in _keys(app))

        app.query_one("#c", Input).focus()  # another part of the screen, other keys
        await focused_on(app, app.query_one("#c"))
        await until(lambda: ("Run", False) in _keys(app) and all(name != "Save" for name, _ in _keys(app)))
