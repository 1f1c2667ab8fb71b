"""The Rubric tab of the editor: the rubric's name, description, threshold, error policy and judge.

The fields report edits themselves (``FieldEdited``); :meth:`RubricForm.show_document`
fills them in from the document, or disables them with the reason when the rubric is
not a mapping the form can edit. The rows are built the first time the tab is shown
(:meth:`RubricForm.build`): a studio start does not compose what a user may never open.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Select, Static

from rubric_studio.core.document import EditError, RubricDocument
from rubric_studio.tui.editor._specs import JUDGE_SPECS, RUBRIC_SPECS
from rubric_studio.tui.editor._widgets import (
    BuiltWhenShown,
    FieldArea,
    FieldControl,
    FieldInput,
    FieldSelect,
    field_row,
    show_fields,
    stack_labels_when_narrow,
)

__all__ = ["RubricForm"]


class RubricForm(VerticalScroll, BuiltWhenShown):
    """Rubric-level settings: name, description, threshold, error policy, judge.

    Empty until :meth:`build` is awaited; :meth:`show_document` before that only keeps the
    document to show once built.
    """

    can_focus = False

    def on_resize(self, event: events.Resize) -> None:
        stack_labels_when_narrow(self, event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data: dict[str, Any] = {}
        self._document: RubricDocument | None = None

    def fields(self) -> list[FieldControl]:
        return [widget for widget in self.query("*") if isinstance(widget, FieldControl)]

    def show_document(self, document: RubricDocument, *, keep: set[str], force: bool = False) -> None:
        """Fill the fields in from ``document`` (those in ``keep`` keep what the user typed)."""
        self._document = document
        if not self.built:
            return
        message = self.query_one("#ed-rubric-message", Static)
        try:
            self.data = document.rubric_data()
        except EditError as exc:
            self.data = {}
            message.update(f"{exc}\nFix it in the YAML tab.")
            message.display = True
            for field in self.fields():
                field.disabled = True
            return
        message.display = False
        for field in self.fields():
            field.disabled = False
        show_fields(self.fields(), self.data, keep=set() if force else keep, clear_errors=force)

    def fill_in(self) -> None:
        """Show the document kept before the rows were built."""
        if self._document is not None:
            self.show_document(self._document, keep=set(), force=True)

    def compose(self) -> ComposeResult:
        if not self.built:
            return
        yield Static("", id="ed-rubric-message", classes="ed-problems", markup=False)
        yield Static("[b]rubric[/b]", classes="ed-section-title")
        yield from field_row("name", FieldInput(RUBRIC_SPECS["name"], id="ed-r-name",
                                                placeholder="required, e.g. support-reply"))
        yield from field_row("description", FieldArea(RUBRIC_SPECS["description"], id="ed-r-description"), tall=True)
        yield from field_row(
            "threshold",
            FieldInput(RUBRIC_SPECS["pass_threshold"], id="ed-r-pass_threshold", placeholder="0.8"),
            "pass: score ≥ this and every required met",
        )
        yield from field_row(
            "on error",
            FieldSelect(RUBRIC_SPECS["on_error"], [("error", "error"), ("ignore", "ignore")], Select.NULL,
                        id="ed-r-on_error", prompt="error (default)"),
            "ignore: leave errored criteria out",
        )
        yield Static("[b]judge[/b] [dim]the CLI's --judge / --base-url override these[/dim]", classes="ed-section-title")
        yield from self._judge_rows()

    def _judge_rows(self) -> ComposeResult:
        yield from field_row("model", FieldInput(JUDGE_SPECS["model"], id="ed-j-model",
                                                 placeholder="provider:model, e.g. openai:gpt-4o-mini"))
        yield from field_row("base url", FieldInput(JUDGE_SPECS["base_url"], id="ed-j-base_url",
                                                    placeholder="any OpenAI-compatible server"))
        yield from field_row("temperature", FieldInput(JUDGE_SPECS["temperature"], id="ed-j-temperature",
                                                       placeholder="0"), "0-2")
        yield from field_row("timeout", FieldInput(JUDGE_SPECS["timeout"], id="ed-j-timeout", placeholder="60"),
                             "seconds per call")
        yield from field_row("max retries", FieldInput(JUDGE_SPECS["max_retries"], id="ed-j-max_retries",
                                                       placeholder="3"))
        yield from field_row("concurrency", FieldInput(JUDGE_SPECS["concurrency"], id="ed-j-concurrency",
                                                       placeholder="8"), "calls at once")
        yield from field_row(
            "mode",
            FieldSelect(JUDGE_SPECS["mode"], [("per_criterion", "per_criterion"), ("batch", "batch")], Select.NULL,
                        id="ed-j-mode", prompt="per_criterion (default)"),
            "batch: one call per sample",
        )
