"""The criteria list of the rubric editor, and the question asked before deleting one.

:class:`CriteriaList` shows one line per criterion (kind icon, id, weight, required flag,
red when the criterion has an error) and turns its keys into :class:`CriteriaList.Command`
messages; the editor pane carries them out on the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

from rubric_studio.core.document import EditError, RubricDocument
from rubric_studio.core.problems import Problem
from rubric_studio.core.safe_text import escape_textual_markup, terminal_safe
from rubric_studio.tui.editor._specs import KIND_ICONS, criterion_kind

__all__ = ["ConfirmDelete", "CriteriaList", "criterion_prompt", "criteria_with_errors"]

_KIND_STYLES = {
    "checklist": "$text-success", "analytic": "$text-warning", "check": "$text-primary", "penalty": "$text-error",
}


class ConfirmDelete(ModalScreen[bool]):
    """Ask before deleting a criterion (y / enter deletes, n / escape keeps it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Delete", show=True),
        Binding("n,escape", "answer(False)", "Keep", show=True),
    ]

    def __init__(self, criterion_id: str) -> None:
        super().__init__(id="ed-confirm")
        self.criterion_id = criterion_id

    def compose(self) -> ComposeResult:
        with Vertical(id="ed-confirm-box"):
            yield Label(f"Delete criterion [b]{escape_textual_markup(self.criterion_id)}[/b]?", id="ed-confirm-question")
            yield Static("Undo (ctrl+z) brings it back.", id="ed-confirm-note")
            with Horizontal(id="ed-confirm-buttons"):
                yield Button("Delete", variant="error", id="ed-confirm-yes", compact=True)
                yield Button("Keep", id="ed-confirm-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#ed-confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "ed-confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class CriteriaList(OptionList):
    """The criteria, one line each: kind icon, id, weight, required flag."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "command('add')", "Add", show=True),
        Binding("c", "command('duplicate')", "Duplicate", show=True),
        Binding("d,delete", "command('delete')", "Delete", show=True),
        Binding("shift+up,left_square_bracket", "command('move', -1)", "Move up", show=True, key_display="⇧↑/["),
        Binding("shift+down,right_square_bracket", "command('move', 1)", "Move down", show=True, key_display="⇧↓/]"),
    ]

    @dataclass
    class Command(Message):
        """A key asked for ``command`` (add, duplicate, delete, move) on the selected criterion (enter,
        which edits it, is the editor's own binding: it moves the focus as it arrives)."""

        command: str
        delta: int = 0  # how far "move" moves it

    def action_command(self, command: str, delta: int = 0) -> None:
        self.post_message(self.Command(command, delta))

    def show_document(self, document: RubricDocument) -> None:
        """One line per criterion of ``document`` (lines replaced in place when the count is the same)."""
        bad = criteria_with_errors(document.problems())
        options = []
        for index, criterion_id in enumerate(document.criterion_ids()):
            try:
                data = document.criterion_data(index)
            except (EditError, IndexError):
                data = {}
            options.append(Option(criterion_prompt(criterion_id, data, index in bad), id=f"c{index}"))
        if self.option_count == len(options):
            for index, option in enumerate(options):
                self.replace_option_prompt_at_index(index, option.prompt)
        else:
            self.clear_options()
            self.add_options(options)


def criterion_prompt(criterion_id: str, data: dict[str, Any], has_problem: bool) -> Content:
    """One list line: the kind's icon, the id (red with an error), ×weight, and "req" when required."""
    kind = criterion_kind(data)
    weight = data.get("weight", 1)
    weight_text = str(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else "?"
    name_style = "$text-error" if has_problem else ""
    required = Content.styled(" req", "bold $warning") if data.get("required") is True else Content("")
    return Content.assemble(
        (KIND_ICONS[kind], _KIND_STYLES[kind]),
        " ",
        (terminal_safe(criterion_id), name_style),
        (f" ×{weight_text}", "dim" if weight == 1 else ("$text-error" if kind == "penalty" else "")),
        required,
    )


def criteria_with_errors(problems: list[Problem]) -> set[int]:
    """The indexes of the criteria an error is about (``criteria[3] ...`` or ``... in criteria[3]``)."""
    bad: set[int] = set()
    for problem in problems:
        if problem.severity != "error":
            continue
        message = problem.message
        if message.startswith("criteria["):
            start = len("criteria[")
        elif "in criteria[" in message:
            start = message.index("in criteria[") + len("in criteria[")
        else:
            continue
        end = message.find("]", start)
        if end > start and message[start:end].isdigit():
            bad.add(int(message[start:end]))
    return bad
