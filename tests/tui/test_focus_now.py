"""``focus_now`` moves the focus before the next key is handled, and does nothing to a widget no
longer on a screen (a key that lands as the studio closes)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input

from rubric_studio.tui.key_order import focus_now


class _Two(App):
    def compose(self) -> ComposeResult:
        yield Input(id="a")
        yield Input(id="b")


async def test_the_focus_moves_at_once_and_an_unmounted_widget_is_left_alone():
    app = _Two()
    async with app.run_test() as pilot:
        first, second = app.query_one("#a", Input), app.query_one("#b", Input)
        focus_now(first)
        assert app.focused is first
        second.focus()  # Textual's own: queued behind what the app has to do first
        assert app.focused is first
        focus_now(second)
        assert app.focused is second  # no pause in between: the next key goes here
        await pilot.press("x")
        assert second.value == "x" and first.value == ""
        gone = Input()  # never mounted
        focus_now(gone)
        assert app.focused is second
