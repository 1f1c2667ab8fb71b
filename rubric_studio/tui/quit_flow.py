"""Closing the studio (ctrl+q) and opening a new rubric after it ("New rubric…").

Nothing is lost silently: with unsaved edits — typing still waiting for its pause counts — the
studio asks (:class:`~rubric_studio.tui.conflict.UnsavedScreen`: save and quit, discard, or stay),
and *save* goes through :class:`~rubric_studio.tui.save_flow.SaveFlow` (a change on disk asks
first; the studio quits once the rubric is written). A new rubric is created by its dialog and
opened by the command line once this studio has closed (:attr:`next_rubric`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from rubric_studio.tui.conflict import DISCARD, SAVE, UnsavedScreen

if TYPE_CHECKING:
    from pathlib import Path

    from rubric_studio.tui.host import StudioHost

EDITOR_MOUNT_WAIT_STEPS = 500  # quitting waits up to 500 × 20 ms for an editor still mounting


async def _editor_mounted_fully(app: StudioHost) -> None:
    """Wait (a bounded while) for an editor still mounting: quitting in the middle of its mount
    (it mounts just after the first screen) tore its tabs down under them, and Textual's tabs
    then failed their own mount with a traceback on the way out."""
    for _ in range(EDITOR_MOUNT_WAIT_STEPS):
        editor = app.editor
        if editor is None or getattr(editor, "ready", True):
            return
        await asyncio.sleep(0.02)


async def quit_studio(app: StudioHost) -> None:
    """Quit; with unsaved edits, ask first."""
    await _editor_mounted_fully(app)
    if app.editor is not None and not isinstance(app.screen, UnsavedScreen):
        with contextlib.suppress(Exception):
            await app.editor.flush()  # typing still waiting for its pause counts as an edit
    if not app.session.document.dirty or isinstance(app.screen, UnsavedScreen):
        app.exit()
        return

    def chosen(choice: str | None) -> None:
        if choice == SAVE:
            app.save_flow.save(then=app.exit)  # a change on disk asks first; quits once written
        elif choice == DISCARD:
            app.exit()
        else:
            app.next_rubric = None

    app.push_screen(UnsavedScreen(app.session.rubric_path.name), chosen)


def open_new_rubric(app: StudioHost) -> None:
    """Ask for a file name, create a starter rubric there and open it (after this rubric is closed)."""
    from rubric_studio.tui.new_rubric import NewRubricScreen

    async def chosen(path: Path | None) -> None:
        if path is not None:
            app.next_rubric = path
            await quit_studio(app)  # unsaved edits of this rubric are asked about first

    app.push_screen(NewRubricScreen(app.session.rubric_path.parent), chosen)
