"""The editor's field controls: they show the document's value and report the user's edits.

Every control carries a :class:`~rubric_studio.tui.editor._fields.FieldSpec`. The form
hands it the current data (:meth:`FieldControl.show_data`); it shows its value there
without posting anything. When the user then changes it, it reads the new text with the
spec and posts one :class:`FieldControl.Edited`: the parsed value, or the reason it does not
parse, or that it shows the document's value again. Events a control posts while it is
mounted or filled in never become edits, so showing a rubric never writes to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea

from rubric_studio.tui.editor._fields import FieldSpec, parse_field
from rubric_studio.tui.editor._specs import field_display, stored_value
from rubric_studio.tui.editor._text_fields import TextEditor, TextInput
from rubric_studio.tui.restyle import set_class_restyling

__all__ = [
    "BuiltWhenShown",
    "FieldArea",
    "FieldCheck",
    "FieldControl",
    "FieldEdited",
    "FieldInput",
    "FieldSelect",
    "STACKED_WIDTH",
    "field_row",
    "show_fields",
    "stack_labels_when_narrow",
]

STACKED_WIDTH = 44  # a form narrower than this puts each field's label above it

_CHANGE_MESSAGES = (Input.Changed, TextArea.Changed, Select.Changed, Checkbox.Changed)
_NOT_SHOWN = object()  # a control not filled in from the document yet

if TYPE_CHECKING:
    _ControlBase = Widget
else:
    _ControlBase = object  # Textual takes a widget's CSS type and parts from its first base


class BuiltWhenShown(_ControlBase):
    """A group of rows composed the first time it is shown, not at every studio start (each
    widget costs composing, styling and layout whether it is displayed or not).

    Derive from a Textual container first, then this; the container's ``compose`` yields
    nothing until ``built``. :meth:`build` composes the rows once, then :meth:`fill_in`
    shows what they are to show as it is then.
    """

    built = False

    async def build(self) -> None:
        """Compose the rows, once, and fill them in (nothing when not in the app: closing)."""
        if self.built or not self.is_attached:
            return
        self.built = True
        await self.recompose()
        if self.is_attached:
            self.fill_in()

    def fill_in(self) -> None:
        """Show the current values in the rows just built (by default the caller fills them in)."""


class FieldControl(_ControlBase):
    """What the editor's controls share (each derives from a Textual control first, then this).

    ``stored`` is the document's value the control last saw (the parse of a command keeps
    a list a list); the *baseline* is what the control showed for it, so a change back
    to it is no edit.
    """

    @dataclass
    class Edited(Message):
        """The user changed a field.

        ``value`` is what to write (None removes the key) unless ``error`` says why the text
        does not parse; ``reverted`` means the field shows the document's value again (nothing
        to write, an edit still waiting is void). ``apply_now`` asks for the edit to be written
        at once (enter, a pick from a list, a checkbox) instead of after the typing pause.
        """

        field: FieldControl
        value: Any = None
        _: KW_ONLY
        error: str | None = None
        reverted: bool = False
        apply_now: bool = False

        @property
        def spec(self) -> FieldSpec:
            """The edited field's spec."""
            return self.field.spec

    spec: FieldSpec
    stored: Any = None
    _baseline: Any = _NOT_SHOWN
    _blank: Any = None  # what the control holds for "nothing picked"

    def control_value(self) -> Any:
        """What the control holds now (its ``value``, for Input, Select and Checkbox)."""
        return self.value  # type: ignore[attr-defined]

    def put_value(self, value: Any) -> None:
        """Show ``value`` (the control's own kind of value)."""
        if self.value != value:  # type: ignore[attr-defined]
            self.value = value  # type: ignore[attr-defined]

    def showable(self, value: Any) -> Any:
        """What the control can show for the document's ``value`` (None: it cannot show it)."""
        return value

    @property
    def filled_in(self) -> bool:
        """Whether the control has shown the document's value yet (before that, nothing is an edit)."""
        return self._baseline is not _NOT_SHOWN

    def show_data(self, data: dict[str, Any], *, keep: bool = False, clear_error: bool = False) -> None:
        """Take the document's value from ``data`` and show it (unless ``keep``: the user is typing)."""
        self.stored = stored_value(self.spec, data)
        shown = self.showable(field_display(self.spec, data, blank=self._blank))
        if not keep and shown is not None:
            with self.prevent(*_CHANGE_MESSAGES):
                self.put_value(shown)
            if clear_error:
                self.show_error("")
        self._baseline = shown if shown is not None else self.control_value()

    def shows_document(self) -> bool:
        """Whether the control still shows the value it was last given (the user typed nothing since)."""
        return self.filled_in and self.control_value() == self._baseline

    def report_edit(self, *, apply_now: bool = False) -> None:
        """Post what the user's change means (see :class:`FieldControl.Edited`)."""
        edit = self.current_edit(apply_now=apply_now)
        if edit is not None:
            self.post_message(edit)

    def current_edit(self, *, apply_now: bool = False) -> FieldControl.Edited | None:
        """What the control holds now means, as the edit :meth:`report_edit` posts (None before
        the control has shown the document's value: a mounting control's own event)."""
        if not self.filled_in:
            return None
        raw = self.control_value()
        if raw == self._baseline:
            return self.Edited(self, reverted=True)
        try:
            value = parse_field(self.spec, raw, current=self.stored, blank=self._blank)
        except ValueError as exc:
            return self.Edited(self, error=str(exc))
        return self.Edited(self, value, apply_now=apply_now)

    def show_error(self, message: str) -> None:
        """Show ``message`` under the field and mark it invalid ("" clears both)."""
        if not message and not self.has_class("-field-invalid"):
            return
        self.set_class(bool(message), "-field-invalid")
        for node in self.ancestors:
            found = node.query(f"#{self.id}-err")
            if found:
                note = found.first(Static)
                note.update(f"✗ {message}" if message else "")
                note.display = bool(message)
                return


#: The message a field control posts for an edit (handled as ``on_field_control_edited``).
FieldEdited = FieldControl.Edited


class FieldInput(TextInput, FieldControl):
    """One line of text; applied after the typing pause, or on enter."""

    def __init__(self, spec: FieldSpec, value: str = "", **kwargs: Any) -> None:
        Input.__init__(self, value, compact=True, **kwargs)
        self.spec = spec

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.report_edit()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.report_edit(apply_now=True)


class FieldArea(TextEditor, FieldControl):
    """Several lines of text (an outcome, keywords, a JSON Schema); applied after the typing pause."""

    def __init__(self, spec: FieldSpec, text: str = "", **kwargs: Any) -> None:
        TextArea.__init__(self, text, soft_wrap=True, compact=True, tab_behavior="focus", **kwargs)
        self.spec = spec

    def control_value(self) -> Any:
        return self.text

    def put_value(self, value: Any) -> None:
        if self.text != value:
            self.load_text(value)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.report_edit()


class FieldSelect(Select[str], FieldControl):
    """A choice; applied when picked.

    A value that is not one of its choices (a typo in the file) shows as blank, or not at
    all when it cannot be blank; the form reports the problem.
    """

    _blank = Select.NULL

    def __init__(self, spec: FieldSpec, options: list[tuple[str, str]], value: Any, **kwargs: Any) -> None:
        Select.__init__(self, options, value=value, compact=True, **kwargs)
        self.spec = spec
        self.choices = frozenset(choice for _, choice in options)
        self.blank_allowed = bool(kwargs.get("allow_blank", True))

    def showable(self, value: Any) -> Any:
        if value is None or value is Select.NULL or value in self.choices:
            return value
        return Select.NULL if self.blank_allowed else None

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.report_edit(apply_now=True)

    def _on_mount(self, event: events.Mount) -> None:
        # Select sets itself up on mount by querying its parts; when the app closes
        # while the editor is still mounting, those parts may be gone already.
        event.prevent_default()  # Select's own handler runs here, guarded
        Widget._on_mount(self, event)
        if not self.is_attached:
            return
        try:
            Select._on_mount(self, event)
        except NoMatches:
            if self.is_attached:
                raise


class FieldCheck(Checkbox, FieldControl):
    """A yes / no; applied when toggled. Its box shows ✓ when on and stays empty when off
    (Textual's X both ways tells the states apart by colour alone)."""

    ON, OFF = "✓", " "

    def __init__(self, spec: FieldSpec, label: str, value: bool, **kwargs: Any) -> None:
        Checkbox.__init__(self, label, value, compact=True, **kwargs)
        self.spec = spec
        self.BUTTON_INNER = self.ON if value else self.OFF

    def watch_value(self) -> None:
        self.BUTTON_INNER = self.ON if self.value else self.OFF
        super().watch_value()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.report_edit(apply_now=True)


def field_row(label: str, control: FieldControl, hint: str = "", *, tall: bool = False,
              hint_id: str | None = None) -> ComposeResult:
    """One labelled field, its hint, and the line under it where its error shows."""
    classes = "ed-row -tall" if tall else "ed-row"
    with Horizontal(classes=classes):
        yield Label(label, classes="ed-label")
        yield control
        if hint:
            yield Static(hint, classes="ed-hint", markup=False, id=hint_id)
    yield Static("", id=f"{control.id}-err", classes="ed-error", markup=False)


def stack_labels_when_narrow(form: Widget, event: events.Resize) -> None:
    """A form's resize: each label goes above its field when the form is narrow. Each form does
    this for itself: a form hidden (the results focused, another tab) gets no resize, so a
    switch between the panes does not restyle its rows."""
    set_class_restyling(form, event.size.width < STACKED_WIDTH, "-stacked")


def show_fields(controls: Iterable[FieldControl], data: dict[str, Any], *, keep: set[str],
                clear_errors: bool = False) -> None:
    """Show ``data`` in every control; the ones whose id is in ``keep`` keep what the user typed."""
    for control in controls:
        control.show_data(data, keep=(control.id or "") in keep, clear_error=clear_errors)
