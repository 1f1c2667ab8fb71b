"""Marking the focused pane restyles only what the mark changes, and ends up exactly where a
full restyle would (Textual restyles a node's whole subtree when one of its classes changes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.restyle import set_class_restyling
from tests.tui.studio_helpers import RUBRIC, SIZE, copy_bundled, focused_on, graded, until


def _styles(screen) -> dict[int, dict]:
    return {id(node): dict(node.styles.base.get_rules()) for node in screen.walk_children(with_self=True)}


def _as_a_full_restyle_leaves_them(app) -> tuple[dict, dict]:
    """The styles as they are, and as a restyle of the whole screen makes them."""
    screen = app.screen_stack[0]
    now = _styles(screen)
    app.update_styles(screen)
    return now, _styles(screen)


async def test_every_focus_move_leaves_the_styles_a_full_restyle_would(tmp_path: Path, monkeypatch):
    copy_bundled(tmp_path, monkeypatch)
    app = StudioApp(RUBRIC, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        left, right, main = (app.query_one(f"#{name}") for name in ("left", "right", "main"))
        steps = [("f2", lambda: left.has_class("-focused") and not main.has_class("-results-focused")),
                 ("tab", lambda: left.has_class("-focused")),
                 ("f3", lambda: right.has_class("-focused") and main.has_class("-results-focused")),
                 ("f4", lambda: right.has_class("-focused")),
                 (None, lambda: not left.has_class("-focused") and not right.has_class("-focused")),
                 ("f2", lambda: left.has_class("-focused"))]
        for key, shown in steps:
            if key is None:  # nothing has the focus: no pane is marked
                app.screen.set_focus(None)
            else:
                await pilot.press(key)
            await until(shown, what=f"the marks after {key}")
            await pilot.pause()
            now, full = _as_a_full_restyle_leaves_them(app)
            assert now == full, f"after {key}: a node's styles differ from a full restyle"
        await pilot.press("f3")
        await focused_on(app, app.query_one("#matrix"))
        await until(lambda: left.size.width <= 28, what=lambda: f"the results taking the width (the editor is {left.size.width} wide)")
        assert left.size.width <= 28  # the results took the width
        assert app.query_one("#ed-form").display is False


class _Nested(App):
    CSS = """
    #outer.-wide #inner { width: 30; }
    #outer.-loud #inner { color: red; }
    #inner { width: 10; color: blue; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="outer"), Vertical(id="middle"):
            yield Static("x", id="inner")


@pytest.mark.parametrize("class_name", ["-wide", "-loud"])
async def test_a_class_reaches_the_descendants_its_rules_name(class_name):
    """A box property: only the named node is restyled; a colour (which descendants read from
    their ancestors) restyles the subtree, as Textual would. Either way the rule takes effect,
    and taking the class away undoes it."""
    app = _Nested()
    async with app.run_test() as pilot:
        outer, inner = app.query_one("#outer"), app.query_one("#inner", Static)
        before = dict(inner.styles.base.get_rules())
        set_class_restyling(outer, True, class_name)
        await pilot.pause()
        after = dict(inner.styles.base.get_rules())
        assert after != before
        if class_name == "-wide":
            assert inner.size.width == 30
        else:
            assert inner.styles.color.rgb == (255, 0, 0)
        set_class_restyling(outer, False, class_name)
        await pilot.pause()
        assert dict(inner.styles.base.get_rules()) == before
