"""Where the palette's *Screenshot* goes, and what the user is told when it cannot go there.

Textual saves screenshots to the Downloads folder; the studio makes that folder when it is
missing, falls back to the current folder (saying why) when it cannot be used, and says why
when nothing can be written — the same for a write that fails later.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual import events

    from rubric_studio.tui.host import StudioHost

TITLE = "Screenshot"


def screenshot_folder(path: str | None) -> tuple[Path | None, str | None]:
    """(the folder a screenshot goes to, a note on why it is not the one asked for) - or
    (None, why nothing can be written). Without ``path``: the Downloads folder, made when missing."""
    from platformdirs import user_downloads_path  # where Textual itself saves them

    wanted = Path(path) if path is not None else user_downloads_path()
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        if os.access(wanted, os.W_OK):
            return wanted, None
        problem = "it is not writable"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    fallback = Path.cwd()
    if os.access(fallback, os.W_OK):
        return fallback, f"{wanted} cannot be used ({problem}); saving the screenshot in {fallback} instead"
    return None, f"{wanted} cannot be used ({problem}) and {fallback} is not writable"


def folder_for(app: StudioHost, path: str | None) -> Path | None:
    """The folder to save a screenshot in (a fallback said as a warning), or None, said as an error."""
    folder, why = screenshot_folder(path)
    if folder is None:
        app.notify(f"Cannot save a screenshot: {why}", title=TITLE, severity="error", timeout=10)
        return None
    if why:
        app.notify(why, title=TITLE, severity="warning", timeout=10)
    return folder


def delivery_failed(app: StudioHost, event: events.DeliveryFailed) -> None:
    """A screenshot could not be written after all: say why."""
    if event.name == "screenshot":
        reason = getattr(event.exception, "strerror", None) or event.exception
        app.notify(f"The screenshot could not be written: {reason}", title=TITLE, severity="error", timeout=10)
