"""The studio's text controls: Textual's Input and TextArea with the keys people expect of them.

* ``ctrl+a`` selects all the text (Textual moves to the start of the line; ``home`` still does).
* ``ctrl+k`` in a text area deletes to the end of the *logical* line — the line as written,
  not the row a long line wraps onto — and at the end of a line joins the next one (an empty
  line is deleted).

Every text field of the studio (the editor's fields and YAML view, the dialogs, the search
box) is one of these, so the keys are the same wherever the user types.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, TextArea

__all__ = ["TextEditor", "TextInput"]


class TextInput(Input):
    """One line of text; ``ctrl+a`` selects it all."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", show=False)]


class TextEditor(TextArea):
    """Several lines of text; ``ctrl+a`` selects it all, ``ctrl+k`` kills to the end of the line as written."""

    BINDINGS = [
        Binding("ctrl+a", "select_all", "Select all", show=False),
        Binding("ctrl+k", "kill_line", "Delete to the end of the line", show=False),
    ]

    def action_kill_line(self) -> None:
        """Delete from the cursor (or the selection's start) to the end of its logical line."""
        if self.read_only:
            return
        start, end = sorted(self.selection)
        if start != end:
            self.delete(start, end)
            return
        row, column = start
        line_end = len(self.document.get_line(row))
        if column < line_end:
            self.delete(start, (row, line_end))
        elif row + 1 < self.document.line_count:
            self.delete(start, (row + 1, 0))  # at the end of a line: join the next one
