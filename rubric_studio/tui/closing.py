"""While the studio closes: messages that still arrive find no widgets to draw on.

Results from the engine, workers and the editor can land as the app shuts down (a save finishing
as the user quits); their handlers then look up widgets that are gone. :func:`tolerate_shutdown`
lets such a handler end quietly then, and only then.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.app import App
from textual.css.query import NoMatches

Handler = TypeVar("Handler", bound=Callable[..., Any])


def widgets_gone(app: App[Any]) -> bool:
    """True while the app is closing: its message loop stopped or its screen unmounted."""
    try:
        return not app.is_running or not app.screen.is_mounted
    except Exception:  # no screen left at all
        return True


def tolerate_shutdown(handler: Handler) -> Handler:
    """A method of the app, or of a flow holding it as ``self.app``, that finds a widget missing
    while the app closes returns None; a widget missing at any other time is still an error."""

    @functools.wraps(handler)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return handler(self, *args, **kwargs)
        except NoMatches:
            if not widgets_gone(self if isinstance(self, App) else self.app):
                raise
            return None

    return wrapper  # type: ignore[return-value]
