"""Small modal dialogs the studio's actions share: confirm, ask for a value, list notes.

Each dismisses with its answer (attributes down, answers up through the dismiss
callback); none touches files or the engine. Styles: the "dialogs" section at the
end of ``studio.tcss``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.tui.editor import TextInput


def _text(value: str | Text) -> Text:
    """Plain strings shown as they are (a path with ``[`` is not markup; control characters
    are shown, not sent to the terminal)."""
    return value if isinstance(value, Text) else Text(terminal_safe(value, multiline=True))


class ConfirmScreen(ModalScreen[bool]):
    """A yes / no question. ``y`` answers yes; ``n`` and escape answer no (the safe default)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]
    AUTO_FOCUS = "#dialog-no"

    def __init__(self, title: str, body: str | Text, *, yes: str = "Yes", no: str = "Cancel") -> None:
        super().__init__()
        self.title_text, self.body, self.yes, self.no = title, body, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(Text(terminal_safe(self.title_text), style="bold"), classes="dialog-title")
            yield Static(_text(self.body), classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", id="dialog-yes", variant="primary")
                yield Button(f"{self.no} (n)", id="dialog-no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "dialog-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class AskScreen(ModalScreen[str | None]):
    """Ask for one value: enter submits (after ``validate`` accepts it), escape cancels (None).

    ``validate`` returns an error message to show, or None when the text is fine.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]
    AUTO_FOCUS = "#dialog-input"

    def __init__(
        self,
        title: str,
        prompt: str | Text,
        value: str = "",
        *,
        placeholder: str = "",
        validate: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.title_text, self.prompt, self.value = title, prompt, value
        self.placeholder, self.validate = placeholder, validate

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(Text(terminal_safe(self.title_text), style="bold"), classes="dialog-title")
            yield Static(_text(self.prompt), classes="dialog-text")
            yield TextInput(self.value, placeholder=self.placeholder, id="dialog-input")
            yield Static("", id="dialog-error", classes="dialog-error")
            yield Static(Text("enter: OK · escape: cancel", style="dim"), classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        problem = self.validate(text) if self.validate is not None else None
        if problem:
            self.query_one("#dialog-error", Static).update(problem)
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NoticeScreen(ModalScreen[str | None]):
    """A titled list of lines (e.g. what an export could not express), scrollable.

    ``actions`` are extra buttons as (id, label); the screen dismisses with the id
    of the button pressed, or None when closed (escape, enter, q).
    """

    BINDINGS = [Binding("escape,q,enter", "close", "Close", show=False)]
    AUTO_FOCUS = "#dialog-close"

    def __init__(
        self,
        title: str,
        intro: str | Text,
        lines: Sequence[str] = (),
        *,
        actions: Sequence[tuple[str, str]] = (),
        warning: bool = True,
    ) -> None:
        super().__init__()
        self.title_text, self.intro, self.lines = title, intro, list(lines)
        self.actions, self.warning = list(actions), warning

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(Text(terminal_safe(self.title_text), style="bold"), classes="dialog-title")
            yield Static(_text(self.intro), classes="dialog-text")
            if self.lines:
                body = Text()
                for index, line in enumerate(self.lines):
                    if index:
                        body.append("\n")
                    body.append("⚠ " if self.warning else "• ", style="yellow" if self.warning else "")
                    body.append(terminal_safe(line, multiline=True))
                with VerticalScroll(classes="dialog-list"):
                    yield Static(body, id="dialog-lines")
            with Horizontal(classes="dialog-buttons"):
                for action_id, label in self.actions:
                    yield Button(label, id=action_id)
                yield Button("Close", id="dialog-close", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.id == "dialog-close" else event.button.id)

    def action_close(self) -> None:
        self.dismiss(None)
