"""The "New rubric" dialog: ask for a file name, write the starter rubric, answer with its path.

The name is taken relative to a folder the caller gives (the current rubric's folder);
``.yaml`` is added to a name without an extension. What would stop the rubric from being
created — a file that exists already, a name that is not a ``.yaml`` file, control
characters, a parent that is not a folder — shows inline under the field as the user
types, and again when they press enter; nothing is written until the name is fine. The
file is written by :func:`rubric_studio.engine.starter.create_starter_rubric` (create
only: it never replaces a file). The screen dismisses with the new path, or None on escape;
opening the new rubric is the caller's business.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rubric_studio.core.problems import RubricError
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.engine.starter import create_starter_rubric, new_rubric_problem
from rubric_studio.tui.editor import TextInput

DEFAULT_STEM = "new-rubric"


def free_name(folder: Path, stem: str = DEFAULT_STEM) -> str:
    """``new-rubric.yaml``, or ``new-rubric-2.yaml`` ... when that exists in ``folder``."""
    for index in range(1, 1000):
        name = f"{stem}.yaml" if index == 1 else f"{stem}-{index}.yaml"
        if not (folder / name).exists():
            return name
    return f"{stem}.yaml"


class NewRubricScreen(ModalScreen[Path | None]):
    """Ask for the new rubric's file name (see the module docstring)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]
    AUTO_FOCUS = "#new-rubric-name"
    DEFAULT_CSS = """
    NewRubricScreen { align: center middle; }
    #new-rubric-box { width: 80; max-width: 95%; height: auto; border: thick $primary; background: $surface; padding: 1 2; }
    #new-rubric-title, #new-rubric-intro, #new-rubric-error, #new-rubric-hint { height: auto; }
    #new-rubric-error { color: $text-error; min-height: 1; }
    #new-rubric-hint { color: $text-muted; }
    """

    def __init__(self, folder: Path, name: str | None = None) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.initial = name if name is not None else free_name(self.folder)

    def compose(self) -> ComposeResult:
        with Vertical(id="new-rubric-box"):
            yield Static(Text("New rubric", style="bold"), id="new-rubric-title")
            intro = f"File name, in {self.folder} unless you give a path. It starts with one placeholder criterion."
            yield Static(Text(terminal_safe(intro, multiline=True)), id="new-rubric-intro")
            yield TextInput(self.initial, placeholder="my-rubric.yaml", id="new-rubric-name")
            yield Static("", id="new-rubric-error")
            yield Static("enter: create · escape: cancel", id="new-rubric-hint")

    def target(self, text: str) -> Path:
        """The file ``text`` names: relative to :attr:`folder`, ``.yaml`` added without an extension."""
        path = Path(text.strip()).expanduser()
        if not path.is_absolute():
            path = self.folder / path
        return path.with_name(path.name + ".yaml") if path.name and not path.suffix else path

    def problem(self, text: str) -> str | None:
        """Why ``text`` cannot be the new rubric (None when it can)."""
        if not text.strip():
            return "type a file name, e.g. my-rubric.yaml"
        return new_rubric_problem(self.target(text))

    @on(Input.Changed, "#new-rubric-name")
    def _check(self, event: Input.Changed) -> None:
        self._show(self.problem(event.value) if event.value.strip() else None)

    @on(Input.Submitted, "#new-rubric-name")
    def _create(self, event: Input.Submitted) -> None:
        event.stop()
        problem = self.problem(event.value)
        if problem is not None:
            self._show(problem)
            return
        path = self.target(event.value)
        try:
            create_starter_rubric(path)
        except RubricError as exc:
            self._show("; ".join(p.message for p in exc.problems))
            return
        self.dismiss(path)

    def _show(self, problem: str | None) -> None:
        self.query_one("#new-rubric-error", Static).update(Text(terminal_safe(problem or "", multiline=True)))

    def action_cancel(self) -> None:
        self.dismiss(None)
