"""The prompts shown when the rubric on disk is not the version the studio's edits started from.

:class:`ConflictScreen` comes up in two moments, and nothing is written or replaced until
the person chooses:

* the watcher saw the file change while the editor holds unsaved edits: *merge* (the
  disk's change and the edits, into the editor, not saved yet), *keep my edits* (the disk
  version stays on disk; saving later asks again), *load the disk version* (the edits stay
  one undo away);
* a save found the file changed since it was read (``saving=True``): *merge and save* (the
  preview shows what it writes), *overwrite* (replaces exactly the disk version shown),
  *load the disk version*, *cancel*.

Merging is offered when the two changes touch different lines (a clean three-way merge);
otherwise the lines both changed are named. "Show diff" shows the edits against the disk.
"""

from __future__ import annotations

import difflib

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rubric_studio.core.document import Merge
from rubric_studio.core.safe_text import terminal_safe

KEEP, LOAD, MERGE, OVERWRITE = "keep", "load", "merge", "overwrite"


def unified_diff(mine: str, disk: str, name: str, mine_label: str = "your edits", disk_label: str = "on disk") -> Text:
    """A coloured unified diff from ``mine`` to ``disk`` (by default: the editor's text to the disk's)."""
    out = Text()
    lines = difflib.unified_diff(
        mine.splitlines(), disk.splitlines(), fromfile=f"{name} ({mine_label})", tofile=f"{name} ({disk_label})",
        lineterm="",
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
        out.append(terminal_safe(line) + "\n", style=style)  # the file may hold control characters
    if not any_line:
        out.append("(no difference)", style="dim")
    return out


def _choices_text(saving: bool) -> str:
    if saving:
        return (
            "Saving now would replace that change. Nothing is written until you choose:\n"
            "• Merge and save — writes the disk version with your edits applied (shown below).\n"
            "• Overwrite — writes your version; the change on disk is lost.\n"
            "• Load disk version — your edits stay one undo (ctrl+z) away.\n"
            "• Cancel — nothing is written."
        )
    return (
        "You have unsaved edits in the studio. Nothing is replaced until you choose:\n"
        "• Merge — the change on disk joins your edits in the editor (not saved yet).\n"
        "• Keep my edits — the disk version stays on disk; saving asks again.\n"
        "• Load disk version — your edits stay one undo (ctrl+z) away."
    )


def _merge_note(disk: str | None, merged: Merge | None) -> Text:
    if disk is None:
        return Text("The file was removed, or is no longer UTF-8 text: only overwriting (or cancelling) is possible.",
                    style="bold")
    if merged is None:
        return Text("")
    if merged.clean:
        return Text("Your edits and the change on disk touch different lines: they merge cleanly.")
    lines = ", ".join(str(n) for n in merged.conflicts[:5]) + (" …" if len(merged.conflicts) > 5 else "")
    return Text(f"Both changed the same lines (line {lines} on disk): they cannot be merged automatically. "
                "Load the disk version and redo your edits (ctrl+z brings them back to copy from), or overwrite.")


class ConflictScreen(ModalScreen[str]):
    """Merge / keep (cancel) / load disk version / overwrite (when saving) / show diff."""

    BINDINGS = [
        Binding("k,c,escape", "choose('keep')", "Keep my edits / cancel"),
        Binding("m", "choose('merge')", "Merge"),
        Binding("o", "choose('overwrite')", "Overwrite"),
        Binding("l", "choose('load')", "Load disk version"),
        Binding("d", "toggle_diff", "Show diff"),
    ]

    def __init__(self, name: str, mine: str, disk: str | None, *, merged: Merge | None = None,
                 saving: bool = False, reverts: str | None = None) -> None:
        super().__init__()
        self.reverts = reverts  # the outside edit the save would undo, when that is the question
        self.file_name = terminal_safe(name)
        self.mine = mine
        self.disk = disk
        self.merged = merged
        self.saving = saving

    @property
    def can_merge(self) -> bool:
        return self.disk is not None and self.merged is not None and self.merged.clean

    def compose(self) -> ComposeResult:
        title = "changed on disk since the studio read it" if self.saving else "changed on disk"
        if self.reverts is not None:
            title = f"holds {self.reverts}: saving your text would undo it"
        with Vertical(id="conflict-box"):
            yield Static(Text(f"{self.file_name} {title}", style="bold"), id="conflict-title")
            yield Static(_choices_text(self.saving), id="conflict-text")
            yield Static(_merge_note(self.disk, self.merged), id="conflict-merge-note")
            if self.saving and self.can_merge:
                assert self.merged is not None and self.disk is not None
                with VerticalScroll(id="conflict-merge"):
                    yield Static(unified_diff(self.disk, self.merged.text, self.file_name, "on disk", "merged"),
                                 id="conflict-merge-text")
            with VerticalScroll(id="conflict-diff"):
                yield Static(unified_diff(self.mine, self.disk or "", self.file_name), id="conflict-diff-text")
            with Horizontal(id="conflict-buttons"):
                yield Button("Merge & save (m)" if self.saving else "Merge (m)", id=MERGE, variant="success",
                             disabled=not self.can_merge)
                if self.saving:
                    yield Button("Overwrite (o)", id=OVERWRITE, variant="error")
                yield Button("Load disk (l)", id=LOAD, variant="warning", disabled=self.disk is None)
                yield Button("Cancel (esc)" if self.saving else "Keep mine (k)", id=KEEP, variant="primary")
                yield Button("Diff (d)", id="diff")

    def on_mount(self) -> None:
        self.query_one("#conflict-diff").display = False
        self.query_one(f"#{MERGE if self.can_merge else KEEP}", Button).focus(scroll_visible=False)
        # The buttons are docked, always in view: on a short terminal, show the explanation from its top.
        self.call_after_refresh(self.query_one("#conflict-box").scroll_home, animate=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "diff":
            self.action_toggle_diff()
        elif event.button.id is not None:
            self.action_choose(event.button.id)

    def action_choose(self, choice: str) -> None:
        if choice == MERGE and not self.can_merge:
            self.notify("These changes cannot be merged automatically (see above).", severity="warning")
            return
        if (choice == OVERWRITE and not self.saving) or (choice == LOAD and self.disk is None):
            return
        self.dismiss(choice)

    def action_toggle_diff(self) -> None:
        diff = self.query_one("#conflict-diff")
        diff.display = not diff.display
        self.query_one("#diff", Button).label = "Hide diff (d)" if diff.display else "Diff (d)"


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
        self.file_name = terminal_safe(name)

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
