"""Keys typed into a text control take effect in the order they were typed, however busy the app is.

Textual forwards a key to the focused widget's queue, and resolves a key's *binding* (``end``,
``home``, ``backspace``, ``ctrl+k`` … in an Input or a TextArea) only once the key has bubbled
back up to the app, behind every key that arrived meanwhile. When keys arrive faster than the
app handles them (a busy machine, a fast typist, keys sent by a script), ``End`` then
``XYZ`` becomes ``X``, ``End``, ``YZ``; ``Home``, ``ctrl+k``, ``3`` empties the field after the
``3`` was typed. :func:`route_in_order` resolves such a key when it arrives and queues its
action on the focused control itself, in line with the characters typed before and after it.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.widgets import Input, TextArea

__all__ = ["route_in_order"]


def route_in_order(app: App, event: events.Key) -> bool:
    """Queue ``event``'s binding on the focused text control when that control binds the key
    itself (True: the key is handled); False leaves the key to Textual's usual route."""
    focused = app.focused
    if not isinstance(focused, Input | TextArea) or event.is_printable:
        return False  # characters already reach the control in order
    active = app.active_bindings.get(event.key)
    if active is None or active.node is not focused or not active.enabled or active.binding.priority:
        return False
    focused.call_later(app.run_action, active.binding.action, focused)
    return True
