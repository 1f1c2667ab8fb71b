"""What the studio's Pilot tests share: a private copy of the bundled rubrics and waiting helpers."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 35)
RUBRIC = Path("sample_rubrics/support_reply/support_reply.yaml")


def copy_bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copy sample_rubrics/ into ``tmp_path`` and make it the working directory."""
    shutil.copytree(ROOT / "sample_rubrics", tmp_path / "sample_rubrics")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _holds(condition: Callable[[], object]) -> bool:
    """``condition()``, where a widget not mounted yet (or being rebuilt) counts as not yet."""
    from textual.css.query import NoMatches

    try:
        return bool(condition())
    except NoMatches:
        return False


async def until(condition: Callable[[], object], timeout: float = 30.0,
                what: str | Callable[[], str] | None = None) -> None:
    """Wait for ``condition`` while the app runs; fail the test after ``timeout`` seconds, scaled.

    The deadline only catches a hang: it is multiplied by :func:`tests._timing.scaled` so a
    loaded machine never turns a slow but correct run into a failure. Waiting on the
    condition (not on a number of ``pilot.pause()``) is what makes a step safe under load.
    """
    limit = scaled(timeout)
    started = time.monotonic()
    while not _holds(condition):
        if time.monotonic() - started > limit:
            code = getattr(condition, "__code__", None)
            where = f" ({Path(code.co_filename).name}:{code.co_firstlineno})" if code is not None else ""
            said = what() if callable(what) else what
            raise AssertionError(f"timed out after {limit:g} s waiting for the studio: {said or 'condition'}{where}")
        await asyncio.sleep(0.01)


def drawn_text(widget: Any) -> str:
    """The text ``widget`` draws now, line by line: nothing until it is laid out (a pane in a tab
    just shown, a dialog just pushed), and its old text until the layout after a change."""
    from textual.geometry import Region

    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(region))


async def drawn(widget: Any, *texts: str, timeout: float = 30.0, what: str | None = None) -> str:
    """Wait until ``widget`` draws every one of ``texts``; the text it draws then."""
    await until(lambda: all(text in drawn_text(widget) for text in texts), timeout,
                lambda: f"{what or f'{widget!r} drawing {list(texts)!r}'}; it draws {drawn_text(widget)!r}")
    return drawn_text(widget)


async def handled(app: Any, timeout: float = 30.0) -> None:
    """Wait until ``app`` has handled every message posted to it before this call: a callback queued
    behind them has run (what a handler does at once is done; work it started elsewhere may not be)."""
    done = asyncio.Event()
    app.call_later(done.set)
    await until(done.is_set, timeout, "the studio to handle the messages posted to it before")


async def focused_on(app, widget, timeout: float = 30.0) -> None:
    """Wait until ``widget`` has the focus (focus moves after a refresh, not with the message)."""
    await until(lambda: app.focused is widget, timeout, lambda: f"focus on {widget!r} (it is on {app.focused!r})")


async def on_screen(app, screen_type: type, timeout: float = 30.0) -> None:
    """Wait until a screen of ``screen_type`` is the active one and mounted (its widgets composed):
    a push lands after its message, the screen's widgets after that."""
    await until(lambda: isinstance(app.screen, screen_type) and app.screen.is_mounted, timeout,
                lambda: f"a mounted {screen_type.__name__} on top (the screen is {app.screen!r})")


def _inotify_watches() -> set[int] | None:
    """The inodes this process watches with inotify (None: no /proc to tell, not Linux)."""
    fdinfo = Path("/proc/self/fdinfo")
    if not fdinfo.is_dir():
        return None
    inodes: set[int] = set()
    for entry in fdinfo.iterdir():
        try:
            text = entry.read_text()
        except OSError:  # closed meanwhile
            continue
        for line in text.splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
                if "ino" in fields:
                    inodes.add(int(fields["ino"], 16))
    return inodes


async def watching(*folders: Path, timeout: float = 30.0) -> None:
    """Wait until the studio's file watcher watches ``folders``: a file written before that is
    never seen (the watcher starts in the background, later the busier the machine is)."""
    wanted = {Path(folder).stat().st_ino for folder in folders}
    if _inotify_watches() is None:  # no way to tell here: give the watcher a moment
        await asyncio.sleep(scaled(0.2))
        return
    await until(lambda: wanted <= (_inotify_watches() or set()), timeout,
                lambda: f"the file watcher on {', '.join(map(str, folders))}")


def graded(app) -> bool:
    """The first run finished and the editor is mounted and shows the document."""
    editor = app.editor
    return app.session.report is not None and not app.session.running and getattr(editor, "ready", False)


async def unsaved_edit(app, pilot, description: str = "unsaved") -> None:
    """Change the rubric in the editor without saving it."""
    app.session.document.set_rubric_field("description", description)
    app.editor.refresh_from_document()
    await pilot.pause()


class Recorder:
    """A Pilot ``message_hook`` keeping the names of the messages posted, in order."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, message: Any) -> None:
        self.names.append(type(message).__name__)


async def open_in_inspector(app: Any, pilot: Any, sample_id: str, criterion_id: str) -> Any:
    """Select the cell (sample × criterion) in the results table, press enter and wait until the
    Inspector shows that cell; the Inspector."""
    from rubric_studio.tui.results import Inspector, ResultsMatrix

    matrix = app.query_one(ResultsMatrix)
    matrix.focus()
    matrix.select_sample(sample_id)
    matrix.select_criterion(criterion_id)
    await pilot.press("enter")
    inspector = app.query_one(Inspector)
    await until(lambda: f"{sample_id} × {criterion_id}" in str(inspector.query_one("#insp-head").render()),
                what="the inspector on the selected cell")  # fmt: skip
    return inspector
