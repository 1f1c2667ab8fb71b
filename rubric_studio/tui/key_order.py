"""Keys typed into a text control take effect in the order they were typed, however busy the app is.

Textual forwards a key to the focused widget's queue, and resolves a key's *binding* (``end``,
``home``, ``backspace``, ``ctrl+k`` … in an Input or a TextArea) only once the key has bubbled
back up to the app, behind every key that arrived meanwhile. When keys arrive faster than the
app handles them (a busy machine, a fast typist, keys sent by a script), ``End`` then
``XYZ`` becomes ``X``, ``End``, ``YZ``; ``Home``, ``ctrl+k``, ``3`` empties the field after the
``3`` was typed. :func:`route_in_order` resolves such a key when it arrives and queues its
action on the focused control itself, in line with the characters typed before and after it.

The same holds for a key that moves the focus (enter on a criterion, F2, F3): Textual's
``Widget.focus`` waits its turn in the app's queue, behind the keys typed after it, which then
go to the widget that had the focus — enter on the criteria list then ``Plainly`` added a
criterion (``a``) instead of typing into its outcome. Those keys are priority bindings (resolved
the moment they arrive) whose action moves the focus with :func:`focus_now`.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.dom import NoScreen
from textual.widget import Widget
from textual.widgets import Input, TextArea

__all__ = ["focus_now", "route_in_order"]


def focus_now(widget: Widget, scroll_visible: bool = True) -> None:
    """Give ``widget`` the focus before the next key is handled (``Widget.focus`` queues it)."""
    try:
        screen = widget.screen
    except NoScreen:  # not mounted (any more)
        return
    screen.set_focus(widget, scroll_visible=scroll_visible)


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
