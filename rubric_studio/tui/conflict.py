"""The prompt shown when a file changes on disk while the studio holds unsaved edits.

Nothing is replaced until the person chooses: keep my edits (the disk version stays
on disk until they save) or load the disk version (their edits are dropped, and the
choice says so). "Show diff" shows what differs first. Escape keeps the edits.
"""

from __future__ import annotations

import difflib

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

KEEP, LOAD = "keep", "load"


def unified_diff(mine: str, disk: str, name: str) -> Text:
    """A coloured unified diff from the editor's text to the disk's."""
    out = Text()
    lines = difflib.unified_diff(
        mine.splitlines(), disk.splitlines(), fromfile=f"{name} (your edits)", tofile=f"{name} (on disk)", lineterm=""
    )
    any_line = False
    for line in lines:
        any_line = True
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        out.append(line + "\n", style=style)
    if not any_line:
        out.append("(no difference)", style="dim")
    return out


class ConflictScreen(ModalScreen[str]):
    """Keep my edits / load disk version / show diff."""

    BINDINGS = [
        Binding("k,escape", "choose('keep')", "Keep my edits"),
        Binding("l", "choose('load')", "Load disk version"),
        Binding("d", "toggle_diff", "Show diff"),
    ]

    def __init__(self, name: str, mine: str, disk: str) -> None:
        super().__init__()
        self.file_name = name
        self.mine = mine
        self.disk = disk

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-box"):
            yield Static(Text(f"{self.file_name} changed on disk", style="bold"), id="conflict-title")
            yield Static(
                "You have unsaved edits in the studio. Nothing is replaced until you choose:\n"
                "• Keep my edits — the disk version stays on disk until you save over it.\n"
                "• Load disk version — your unsaved edits are discarded.",
                id="conflict-text",
            )
            with VerticalScroll(id="conflict-diff"):
                yield Static(unified_diff(self.mine, self.disk, self.file_name), id="conflict-diff-text")
            with Horizontal(id="conflict-buttons"):
                yield Button("Keep my edits (k)", id="keep", variant="primary")
                yield Button("Load disk version (l)", id="load", variant="warning")
                yield Button("Show diff (d)", id="diff")

    def on_mount(self) -> None:
        self.query_one("#conflict-diff").display = False
        self.query_one("#keep", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "diff":
            self.action_toggle_diff()
        elif event.button.id in (KEEP, LOAD):
            self.dismiss(event.button.id)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)

    def action_toggle_diff(self) -> None:
        diff = self.query_one("#conflict-diff")
        diff.display = not diff.display
        self.query_one("#diff", Button).label = "Hide diff (d)" if diff.display else "Show diff (d)"


SAVE, DISCARD, CANCEL = "save", "discard", "cancel"


class UnsavedScreen(ModalScreen[str]):
    """Quitting with unsaved edits: save and quit / quit without saving / stay."""

    BINDINGS = [
        Binding("s", "choose('save')", "Save and quit"),
        Binding("d,ctrl+q", "choose('discard')", "Quit without saving"),
        Binding("escape,c", "choose('cancel')", "Stay"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.file_name = name

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-box"):
            yield Static(Text(f"{self.file_name} has unsaved edits", style="bold"), id="conflict-title")
            yield Static("Save them before quitting? (ctrl+q again quits without saving.)", id="conflict-text")
            with Horizontal(id="conflict-buttons"):
                yield Button("Save and quit (s)", id=SAVE, variant="primary")
                yield Button("Quit without saving (d)", id=DISCARD, variant="error")
                yield Button("Stay (esc)", id=CANCEL)

    def on_mount(self) -> None:
        self.query_one(f"#{SAVE}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or CANCEL)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
