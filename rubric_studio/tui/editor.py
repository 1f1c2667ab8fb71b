"""The rubric editor: criteria list + form, rubric settings, and the raw YAML, kept in sync.

``EditorPane(document)`` edits a :class:`~rubric_studio.core.document.RubricDocument`
in place (attributes down) and tells its parents what happened (messages up):
:class:`EditorPane.Changed` after every applied edit, :class:`EditorPane.Saved`
after a save, :class:`EditorPane.SaveRefused` when the file changed on disk since it was
read (nothing was written; the app asks what to do), :class:`EditorPane.SelectionChanged`
when the user picks a criterion.

Typing in a field is applied after a short pause (or on enter / leaving the field);
a value that does not validate is shown next to the field and not applied. The YAML
tab applies its text after a pause too; a syntax error is shown under it and the
text is kept. Undo/redo work on the document, so they cover every tab.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    OptionList,
    Select,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.widgets.option_list import Option

from rubric_studio.core.document import ChangedOnDisk, EditError, RubricDocument
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.safe_text import escape_textual_markup, terminal_safe
from rubric_studio.tui.editor_form import (
    EDIT_CONTROLS,
    KIND_ICONS,
    NEW_BAND_TEXT,
    CriterionForm,
    FieldArea,
    FieldInput,
    FieldSpec,
    RubricForm,
    control_value,
    criterion_kind,
    keywords_mode,
    next_band,
    parse_field,
    range_lower,
    set_control_value,
    shown_value,
)

__all__ = ["ConfirmDelete", "CriteriaList", "EditorPane"]

FIELD_DEBOUNCE = 0.3
YAML_DEBOUNCE = 0.5


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
        Binding("a", "editor_add", "Add", show=True),
        Binding("c", "editor_duplicate", "Duplicate", show=True),
        Binding("d,delete", "editor_delete", "Delete", show=True),
        Binding("shift+up,left_square_bracket", "editor_move(-1)", "Move up", show=True, key_display="⇧↑/["),
        Binding("shift+down,right_square_bracket", "editor_move(1)", "Move down", show=True, key_display="⇧↓/]"),
        Binding("enter", "editor_edit", "Edit", show=False),
    ]

    def _pane(self) -> EditorPane | None:
        for node in self.ancestors:
            if isinstance(node, EditorPane):
                return node
        return None

    async def action_editor_add(self) -> None:
        pane = self._pane()
        if pane is not None:
            await pane.add_criterion()

    async def action_editor_duplicate(self) -> None:
        pane = self._pane()
        if pane is not None:
            await pane.duplicate_criterion()

    def action_editor_delete(self) -> None:
        pane = self._pane()
        if pane is not None:
            pane.confirm_delete()

    async def action_editor_move(self, delta: int) -> None:
        pane = self._pane()
        if pane is not None:
            await pane.move_criterion(delta)

    def action_editor_edit(self) -> None:
        pane = self._pane()
        if pane is not None:
            pane.focus_form()


def _criterion_prompt(criterion_id: str, data: dict[str, Any], has_problem: bool) -> Content:
    kind = criterion_kind(data)
    weight = data.get("weight", 1)
    weight_text = str(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else "?"
    icon_style = {
        "checklist": "$text-success", "analytic": "$text-warning", "check": "$text-primary", "penalty": "$text-error",
    }[kind]
    name_style = "$text-error" if has_problem else ""
    required = Content.styled(" req", "bold $warning") if data.get("required") is True else Content("")
    return Content.assemble(
        (KIND_ICONS[kind], icon_style),
        " ",
        (terminal_safe(criterion_id), name_style),
        (f" ×{weight_text}", "dim" if weight == 1 else ("$text-error" if kind == "penalty" else "")),
        required,
    )


def _summarise(problems: list[Problem], limit: int = 4) -> str:
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if not problems:
        return "✓ valid rubric"
    head = []
    if errors:
        head.append(f"{len(errors)} error{'s' if len(errors) != 1 else ''}")
    if warnings:
        head.append(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}")
    lines = [", ".join(head) + ":"]
    lines += [f"  {terminal_safe(p, multiline=True)}" for p in (errors + warnings)[:limit]]
    if len(problems) > limit:
        lines.append(f"  … and {len(problems) - limit} more")
    return "\n".join(lines)


class EditorPane(Widget):
    """The rubric editor. ``EditorPane(document, id="editor")``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", show=True, priority=True),
        Binding("ctrl+z", "undo", "Undo", show=True, priority=True),
        Binding("ctrl+y,ctrl+shift+z", "redo", "Redo", show=True, priority=True),
    ]

    can_focus = False

    class Changed(Message):
        """The document's text changed (an edit, undo or redo); it is not saved yet."""

        def __init__(self, document: RubricDocument) -> None:
            super().__init__()
            self.document = document

    class Saved(Message):
        """The document was written to disk."""

        def __init__(self, document: RubricDocument) -> None:
            super().__init__()
            self.document = document

    class SaveRefused(Message):
        """A save found the file changed on disk since it was read: nothing was written.

        ``error`` carries what the disk holds now (its text and state).
        """

        def __init__(self, document: RubricDocument, error: ChangedOnDisk) -> None:
            super().__init__()
            self.document = document
            self.error = error

    class SelectionChanged(Message):
        """The user selected a criterion in the list."""

        def __init__(self, criterion_id: str | None, index: int | None = None) -> None:
            super().__init__()
            self.criterion_id = criterion_id
            self.index = index

    def __init__(
        self,
        document: RubricDocument,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.document = document
        self.selected: int | None = 0 if document.criteria_count else None
        self._pending: dict[str, tuple[Widget, FieldSpec, Any]] = {}
        self._field_timer: Timer | None = None
        self._yaml_timer: Timer | None = None
        self._quiet_highlight: int | None = None
        self._yaml_line_for: int | None = None
        # What each field was last set to from the document (by widget id). A change
        # event is a user edit only when the field then shows something else than the
        # document: the events fields post while they are mounted or populated are not.
        self._shown: dict[str, Any] = {}

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with TabbedContent(id="ed-tabs", initial="ed-tab-criteria"):
            with TabPane("Criteria", id="ed-tab-criteria"), Horizontal(id="ed-split"):
                with Vertical(id="ed-side"):
                    yield CriteriaList(id="ed-list", compact=True)
                    yield Static(
                        "[b]a[/b] add  [b]c[/b] copy  [b]d[/b] delete\n"
                        "[b]\\[ ][/b] or [b]⇧↑↓[/b] move  [b]⏎[/b] edit\n"
                        "[$text-success]✓[/] checklist  [$text-warning]◑[/] scored 0-10\n"
                        "[$text-primary]▣[/] check      [$text-error]✗[/] penalty",
                        id="ed-list-hint",
                    )
                yield CriterionForm(id="ed-form")
            with TabPane("Rubric", id="ed-tab-rubric"):
                yield RubricForm(id="ed-rubric")
            with TabPane("YAML", id="ed-tab-yaml"):
                yield TextArea(
                    self.document.text,
                    language="yaml",
                    show_line_numbers=True,
                    soft_wrap=False,
                    tab_behavior="indent",
                    id="ed-yaml",
                )
                yield Static("", id="ed-yaml-problem", markup=False)
        yield Static("", id="ed-status")

    async def on_mount(self) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#ed-yaml", TextArea).indent_width = 2
        await self._sync(force=True)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < 90, "-narrow")

    # -- public API for the app shell -------------------------------------------
    def refresh_from_document(self) -> None:
        """Show the document again (after the app reloaded it from disk)."""
        self._pending.clear()
        self._cancel_timers()
        self.call_later(self._sync, True)

    def select_criterion(self, criterion_id: str) -> bool:
        """Select a criterion by id (does not post SelectionChanged). False if unknown."""
        index = self.document.criterion_index(criterion_id)
        if index is None:
            return False
        self._select(index, quiet=True)
        return True

    def save(self) -> None:
        """Apply pending typing, write the file atomically, then post Saved (a failure is notified;
        a file changed on disk since it was read is not written: SaveRefused)."""
        self.call_later(self._save)

    def saved(self) -> None:
        """The document was just written (here or by the app after a conflict): show it, post Saved."""
        self._sync_status()
        self.post_message(self.Saved(self.document))

    def focus(self, scroll_visible: bool = True) -> EditorPane:
        """Focus the active tab's main control (the pane itself takes no focus)."""
        if not self.is_attached:
            return self
        tabs = self.query_one("#ed-tabs", TabbedContent)
        target: Widget
        if tabs.active == "ed-tab-yaml":
            target = self.query_one("#ed-yaml", TextArea)
        elif tabs.active == "ed-tab-rubric":
            target = self.query_one("#ed-r-name", Input)
        else:
            target = self.query_one("#ed-list", CriteriaList)
        target.focus(scroll_visible)
        return self

    def focus_form(self) -> None:
        """Focus the selected criterion's first field (its outcome, or its id for a check)."""
        outcome = self.query_one("#ed-f-outcome", FieldArea)
        if outcome.parent is not None and outcome.parent.parent is not None and outcome.parent.parent.display:
            outcome.focus()
        else:
            self.query_one("#ed-f-id", Input).focus()

    # -- syncing views from the document --------------------------------------------
    async def _sync(self, force: bool = False, reset_yaml: bool = False) -> None:
        """Bring every view in line with the document (values of focused fields kept unless forced).

        Only shows: never writes to the document. Does nothing once the pane has left
        the app (the app may close while the editor is still being mounted).
        """
        if not self.is_attached:
            return
        try:
            await self._sync_views(force, reset_yaml)
        except NoMatches:
            if self.is_attached:
                raise

    async def _sync_views(self, force: bool, reset_yaml: bool) -> None:
        document = self.document
        self._sync_yaml_view(reset=reset_yaml)
        count = document.criteria_count
        if document.structure_problem is not None:
            pass  # keep the selection for when the YAML parses again
        elif count == 0:
            self.selected = None
        elif self.selected is None or self.selected >= count:
            self.selected = min(self.selected or 0, count - 1)
        self._sync_list()
        await self._sync_form(force=force)
        self._sync_rubric_form(force=force)
        self._sync_status()

    def _sync_yaml_view(self, reset: bool = False) -> None:
        view = self.query_one("#ed-yaml", TextArea)
        new = self.document.text
        old = view.text
        if old != new:
            with self.prevent(TextArea.Changed):
                if reset or not old:
                    view.load_text(new)
                else:
                    prefix = 0
                    limit = min(len(old), len(new))
                    while prefix < limit and old[prefix] == new[prefix]:
                        prefix += 1
                    suffix = 0
                    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
                        suffix += 1
                    start = view.document.get_location_from_index(prefix)
                    end = view.document.get_location_from_index(len(old) - suffix)
                    view.replace(new[prefix : len(new) - suffix], start, end)
        self._sync_yaml_problem()

    def _sync_yaml_problem(self) -> None:
        widget = self.query_one("#ed-yaml-problem", Static)
        problem = self.document.yaml_problem
        if problem is not None:
            widget.update(f"✗ {terminal_safe(problem, multiline=True)}\nThe text is kept; fix it here (the other tabs wait for valid YAML).")
            widget.set_class(True, "-error")
            widget.set_class(False, "-ok")
            widget.display = True
            return
        problems = self.document.problems()
        errors = any(p.severity == "error" for p in problems)
        widget.update(_summarise(problems))
        widget.set_class(errors, "-error")
        widget.set_class(not problems, "-ok")
        widget.display = bool(problems)

    def _criterion_problem_ids(self) -> set[int]:
        bad: set[int] = set()
        for problem in self.document.problems():
            if problem.severity != "error":
                continue
            message = problem.message
            if message.startswith("criteria["):
                with contextlib.suppress(ValueError):
                    bad.add(int(message[len("criteria[") : message.index("]")]))
            elif "in criteria[" in message:
                with contextlib.suppress(ValueError):
                    start = message.index("in criteria[") + len("in criteria[")
                    bad.add(int(message[start : message.index("]", start)]))
        return bad

    def _sync_list(self) -> None:
        listing = self.query_one("#ed-list", CriteriaList)
        document = self.document
        ids = document.criterion_ids()
        bad = self._criterion_problem_ids()
        options = []
        for index, criterion_id in enumerate(ids):
            try:
                data = document.criterion_data(index)
            except (EditError, IndexError):
                data = {}
            options.append(Option(_criterion_prompt(criterion_id, data, index in bad), id=f"c{index}"))
        same_count = listing.option_count == len(options)
        if same_count:
            for index, option in enumerate(options):
                listing.replace_option_prompt_at_index(index, option.prompt)
        else:
            listing.clear_options()
            listing.add_options(options)
        if self.selected is not None and listing.highlighted != self.selected:
            self._quiet_highlight = self.selected
            listing.highlighted = self.selected

    async def _sync_form(self, force: bool = False) -> None:
        form = self.query_one("#ed-form", CriterionForm)
        document = self.document
        problem = document.yaml_problem
        message = None
        data = None
        index = self.selected
        structure = document.structure_problem
        if problem is not None:
            message = f"The YAML does not parse:\n{problem}\n\nFix it in the YAML tab; the form comes back when it parses."
            index = None
        elif structure is not None:
            message = f"The form cannot edit this file yet:\n{structure}\n\nFix it in the YAML tab."
            index = None
        elif index is None:
            message = "No criteria yet. Press [b]a[/b] in the list to add one."
        else:
            try:
                data = document.criterion_data(index)
            except (EditError, IndexError) as exc:
                message = str(exc)
                index = None
        ids = document.criterion_ids()
        form.set_state(
            index,
            data,
            count=document.criteria_count,
            criterion_id=ids[index] if index is not None and index < len(ids) else "",
            line=document.criterion_line(index) if index is not None else None,
            message=message,
        )
        focused = self.app.focused
        focus_id = focused.id if focused is not None and form in focused.ancestors else None
        await form.apply_layout()
        if not self.is_attached:
            return
        if focus_id and self.app.focused is None:  # its row was rebuilt (score ranges)
            with contextlib.suppress(Exception):
                self.query_one(f"#{focus_id}").focus()
        self._refresh_values(form, force=force or form.index_changed)
        self._sync_form_problems(index)

    def _sync_form_problems(self, index: int | None) -> None:
        with contextlib.suppress(Exception):
            widget = self.query_one("#ed-form-problems", Static)
            if index is None:
                widget.update("")
                return
            prefix = f"criteria[{index}]"
            mine = [p for p in self.document.problems() if prefix in p.message]
            widget.update("\n".join(f"{'✗' if p.severity == 'error' else '!'} {p}" for p in mine))
            widget.display = bool(mine)

    def _refresh_values(self, form: CriterionForm | RubricForm, *, force: bool) -> None:
        """Show the document's values in ``form``'s fields (posting no change events)."""
        focused = self.app.focused
        for widget in form.query("*"):
            if not isinstance(widget, EDIT_CONTROLS):
                continue
            key = widget.id or ""
            if not force and (widget is focused or key in self._pending):
                continue
            value = shown_value(widget, form.value_for(widget))
            if value is not None:
                with self.prevent(Input.Changed, TextArea.Changed, Select.Changed, Checkbox.Changed):
                    set_control_value(widget, value)
                if force:
                    self._show_error(widget, "")
            self._shown[key] = control_value(widget)

    def _form_of(self, widget: Widget) -> CriterionForm | RubricForm | None:
        for node in widget.ancestors:
            if isinstance(node, CriterionForm | RubricForm):
                return node
        return None

    def _is_user_edit(self, widget: Widget) -> bool:
        """Whether a change event of ``widget`` is an edit to apply.

        Fields post change events of their own (a Select when it mounts, a TextArea
        after loading text): those leave the field showing what the document says, so
        they are not edits. Displaying a rubric never writes to it.
        """
        key = widget.id or ""
        if key not in self._shown:
            return False  # not populated from the document yet: the user has not seen it
        form = self._form_of(widget)
        expected = shown_value(widget, form.value_for(widget)) if form is not None else None
        if expected is None:
            expected = self._shown[key]
        if control_value(widget) != expected:
            return True
        # Typed back to what the document has: nothing to apply, nothing wrong.
        self._pending.pop(key, None)
        self._show_error(widget, "")
        return False

    def _sync_rubric_form(self, force: bool = False) -> None:
        form = self.query_one("#ed-rubric", RubricForm)
        message = self.query_one("#ed-rubric-message", Static)
        try:
            form.data = self.document.rubric_data()
        except EditError as exc:
            form.data = {}
            message.update(f"{exc}\nFix it in the YAML tab.")
            message.display = True
            for widget in form.query("*"):
                if isinstance(widget, EDIT_CONTROLS):
                    widget.disabled = True
            return
        message.display = False
        for widget in form.query("*"):
            if isinstance(widget, EDIT_CONTROLS):
                widget.disabled = False
        self._refresh_values(form, force=force)

    def _sync_status(self) -> None:
        document = self.document
        problem = document.yaml_problem
        parts = [f"[b]{escape_textual_markup(document.path.name)}[/b]"]
        parts.append("[$warning]● modified[/]" if document.dirty else "[dim]saved[/]")
        if problem is not None:
            parts.append(f"[$text-error]✗ YAML line {problem.line}[/]")
        else:
            problems = document.problems()
            errors = sum(1 for p in problems if p.severity == "error")
            warnings = len(problems) - errors
            if errors:
                parts.append(f"[$text-error]✗ {errors} error{'s' if errors != 1 else ''}[/]")
            elif warnings:
                parts.append(f"[$text-warning]! {warnings} warning{'s' if warnings != 1 else ''}[/]")
            else:
                parts.append("[$text-success]✓ valid[/]")
        if document.can_undo:
            parts.append("[dim]ctrl+z undo[/]")
        self.query_one("#ed-status", Static).update(" · ".join(parts))

    # -- selection --------------------------------------------------------------------
    def _select(self, index: int, *, quiet: bool = False) -> None:
        """Select ``index``; a selection the list already has changes nothing (and echoes nothing)."""
        listing = self.query_one("#ed-list", CriteriaList)
        if listing.highlighted == index:
            if index != self.selected or not quiet:
                self.call_later(self._selection_made, index, quiet)
            return
        if quiet:
            self._quiet_highlight = index
        listing.highlighted = index

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "ed-list":
            return
        event.stop()
        if event.option_index != event.option_list.highlighted:
            # Stale: the list moved on before this arrived (keys pressed quickly, or the results
            # cursor crossing several columns). Taking it for a pick would send the results
            # cursor back and start a ping-pong; the event for where the list is now follows.
            return
        quiet = self._quiet_highlight == event.option_index
        self._quiet_highlight = None
        await self._selection_made(event.option_index, quiet)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "ed-list":
            event.stop()

    async def _selection_made(self, index: int, quiet: bool) -> None:
        if index != self.selected:
            await self._flush()
            self.selected = index
            self.document.break_coalescing()
            await self._sync_form()
        if not quiet:
            ids = self.document.criterion_ids()
            self.post_message(self.SelectionChanged(ids[index] if index < len(ids) else None, index))

    # -- applying field edits -------------------------------------------------------------
    def _show_error(self, widget: Widget, message: str) -> None:
        if not message and not widget.has_class("-field-invalid"):
            return
        with contextlib.suppress(Exception):
            error = self.query_one(f"#{widget.id}-err", Static)
            error.update(f"✗ {message}" if message else "")
            error.display = bool(message)
        widget.set_class(bool(message), "-field-invalid")

    def _queue(self, widget: Widget, *, immediate: bool = False) -> None:
        if not self._is_user_edit(widget):
            return
        spec: FieldSpec = widget.spec  # type: ignore[attr-defined]
        try:
            value = parse_field(spec, control_value(widget), current=self._current(spec))
        except ValueError as exc:
            self._pending.pop(widget.id or "", None)
            self._show_error(widget, str(exc))
            return
        problem = self._cross_check(spec, value)
        if problem:
            self._pending.pop(widget.id or "", None)
            self._show_error(widget, problem)
            return
        self._show_error(widget, "")
        self._pending[widget.id or ""] = (widget, spec, value)
        if immediate:
            self.call_later(self._flush)
        elif spec.live:
            if self._field_timer is not None:
                self._field_timer.stop()
            self._field_timer = self.set_timer(FIELD_DEBOUNCE, self._flush)

    def _current(self, spec: FieldSpec) -> Any:
        try:
            if spec.scope in ("criterion", "check", "range-text", "range-lower", "keywords-mode", "check-type"):
                if self.selected is None:
                    return None
                data = self.document.criterion_data(self.selected)
                if spec.scope == "criterion":
                    return data.get(spec.key)
                if spec.scope == "check":
                    check = data.get("check") if isinstance(data.get("check"), dict) else {}
                    return check.get(spec.key)
                return None
            data = self.document.rubric_data()
            if spec.scope == "rubric":
                return data.get(spec.key)
            judge = data.get("judge") if isinstance(data.get("judge"), dict) else {}
            return judge.get(spec.key)
        except (EditError, IndexError):
            return None

    def _cross_check(self, spec: FieldSpec, value: Any) -> str | None:
        """Checks that need the rest of the document (unique ids, free band bounds)."""
        if spec.scope == "criterion" and spec.key == "id" and value is not None:
            ids = self.document.criterion_ids()
            for index, other in enumerate(ids):
                if other == value and index != self.selected:
                    return f"id {value!r} is already used by criterion {index + 1}"
        if spec.scope == "range-lower" and value is not None and self.selected is not None:
            data = self.document.criterion_data(self.selected)
            if value != range_lower(data, spec.row) and value in (data.get("score_ranges") or {}):
                return f"there is already a band at {value}"
        if spec.scope == "check" and spec.kind == "words" and not value:
            return "add at least one keyword (one per line)"
        return None

    async def _flush(self) -> bool:
        """Apply every queued field edit; True if the document changed."""
        if self._field_timer is not None:
            self._field_timer.stop()
            self._field_timer = None
        pending, self._pending = self._pending, {}
        changed = False
        for widget, spec, value in pending.values():
            try:
                changed |= self._apply(spec, value)
            except (EditError, IndexError, RubricError) as exc:
                self._show_error(widget, str(exc))
        if changed:
            await self._after_edit()
        return changed

    def _apply(self, spec: FieldSpec, value: Any) -> bool:
        """Write one field; True if the text changed."""
        document = self.document
        index = self.selected
        if spec.scope in ("rubric", "judge"):
            method = document.set_rubric_field if spec.scope == "rubric" else document.set_judge_field
            return method(spec.key, value)
        if index is None:
            return False
        if spec.scope == "criterion":
            return document.set_criterion_field(index, spec.key, value)
        if spec.scope == "check-type":
            return document.set_check_type(index, None if value in (None, "judge") else value)
        if spec.scope == "keywords-mode":
            data = document.criterion_data(index)
            check = data.get("check") if isinstance(data.get("check"), dict) else {}
            old = keywords_mode(data)
            if value is None or value == old:
                return False
            words = check.get(old)
            with document.transaction():
                document.set_check_field(index, old, None)
                document.set_check_field(index, value, words if words else [])
            return True
        if spec.scope == "check":
            key = keywords_mode(document.criterion_data(index)) if spec.kind == "words" else spec.key
            return document.set_check_field(index, key, value)
        if spec.scope in ("range-text", "range-lower"):
            lower = range_lower(document.criterion_data(index), spec.row)
            if lower is None:
                return False
            if spec.scope == "range-text":
                return document.set_score_range(index, lower, value)
            if value is None or value == lower:
                return False
            return document.move_score_range(index, lower, value)
        return False

    async def _after_edit(self, *, force: bool = False) -> None:
        await self._sync(force=force)
        self.post_message(self.Changed(self.document))

    # field events ------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if isinstance(event.input, FieldInput):
            event.stop()
            self._queue(event.input)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, FieldInput):
            event.stop()
            self._queue(event.input, immediate=True)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        area = event.text_area
        if isinstance(area, FieldArea):
            event.stop()
            self._queue(area)
        elif area.id == "ed-yaml":
            event.stop()
            if self._yaml_timer is not None:
                self._yaml_timer.stop()
            if area.text != self.document.text:
                self._yaml_timer = self.set_timer(YAML_DEBOUNCE, self._apply_yaml)

    def on_select_changed(self, event: Select.Changed) -> None:
        if hasattr(event.select, "spec"):
            event.stop()
            self._queue(event.select, immediate=True)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if hasattr(event.checkbox, "spec"):
            event.stop()
            self._queue(event.checkbox, immediate=True)

    async def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        widget = event.widget
        if isinstance(widget, EDIT_CONTROLS) and (widget.id or "") in self._pending:
            await self._flush()
        if isinstance(widget, EDIT_CONTROLS):
            self.document.break_coalescing()
        if widget.id == "ed-yaml" and self._yaml_timer is not None:
            await self._apply_yaml()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id == "ed-range-add":
            event.stop()
            await self.add_score_range()
        elif button_id.startswith("ed-range-del-"):
            event.stop()
            row = int(button_id.rsplit("-", 1)[1])
            await self.remove_score_range(row)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id != "ed-tabs":
            return
        event.stop()
        if event.pane.id == "ed-tab-yaml" and self.selected is not None and self._yaml_line_for != self.selected:
            line = self.document.criterion_line(self.selected)
            if line is not None:
                view = self.query_one("#ed-yaml", TextArea)
                view.move_cursor((line - 1, 0), center=True)
                self._yaml_line_for = self.selected

    # -- the YAML view ---------------------------------------------------------------------
    async def _apply_yaml(self) -> None:
        if self._yaml_timer is not None:
            self._yaml_timer.stop()
            self._yaml_timer = None
        text = self.query_one("#ed-yaml", TextArea).text
        if self.document.replace_text(text):
            await self._after_edit(force=True)

    def _cancel_timers(self) -> None:
        for timer in (self._field_timer, self._yaml_timer):
            if timer is not None:
                timer.stop()
        self._field_timer = self._yaml_timer = None

    async def flush(self) -> None:
        """Apply whatever the user typed that is still waiting for its pause."""
        await self._flush()
        if self._yaml_timer is not None:
            await self._apply_yaml()

    # -- criteria actions ------------------------------------------------------------------
    async def _structural(self, operation: Any, *args: Any) -> tuple[bool, Any]:
        """Run a list operation after applying pending typing; (ok, result)."""
        await self.flush()
        try:
            result = operation(*args)
        except (EditError, IndexError) as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return False, None
        return True, result

    async def add_criterion(self) -> None:
        index = 0 if self.selected is None else self.selected + 1
        ok, new = await self._structural(self.document.add_criterion, None, index)
        if not ok:
            return
        self.selected = new
        await self._after_edit()
        self._post_selection()
        area = self.query_one("#ed-f-outcome", FieldArea)
        area.focus()
        area.select_all()

    async def duplicate_criterion(self) -> None:
        if self.selected is None:
            return
        ok, new = await self._structural(self.document.duplicate_criterion, self.selected)
        if not ok:
            return
        self.selected = new
        await self._after_edit()
        self._post_selection()

    def confirm_delete(self) -> None:
        if self.selected is None:
            return
        ids = self.document.criterion_ids()
        index = self.selected
        if index >= len(ids):
            return

        async def done(answer: bool | None) -> None:
            if answer:
                await self.delete_criterion(index)

        self.app.push_screen(ConfirmDelete(ids[index]), done)

    async def delete_criterion(self, index: int | None = None) -> None:
        """Delete without asking (the list's ``d`` asks first)."""
        index = self.selected if index is None else index
        if index is None:
            return
        ok, _ = await self._structural(self.document.delete_criterion, index)
        if not ok:
            return
        count = self.document.criteria_count
        self.selected = min(index, count - 1) if count else None
        await self._after_edit()
        self._post_selection()
        with contextlib.suppress(Exception):
            self.query_one("#ed-list", CriteriaList).focus()

    async def move_criterion(self, delta: int) -> None:
        if self.selected is None:
            return
        ok, new = await self._structural(self.document.move_criterion, self.selected, delta)
        if not ok or new == self.selected:
            return
        self.selected = new
        await self._after_edit()

    async def add_score_range(self) -> None:
        if self.selected is None:
            return
        await self.flush()
        lower = next_band(self.document.criterion_data(self.selected))
        if lower is None:
            return
        try:
            self.document.set_score_range(self.selected, lower, NEW_BAND_TEXT)
        except EditError as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return
        await self._after_edit()
        keys = sorted((self.document.criterion_data(self.selected).get("score_ranges") or {}).keys())
        with contextlib.suppress(Exception):
            field = self.query_one(f"#ed-range-text-{keys.index(lower)}", FieldInput)
            field.focus()
            field.select_all()

    async def remove_score_range(self, row: int) -> None:
        if self.selected is None:
            return
        await self.flush()
        keys = sorted((self.document.criterion_data(self.selected).get("score_ranges") or {}).keys())
        if not 0 <= row < len(keys):
            return
        self.document.remove_score_range(self.selected, keys[row])
        await self._after_edit()

    def _post_selection(self) -> None:
        ids = self.document.criterion_ids()
        index = self.selected
        self.post_message(self.SelectionChanged(ids[index] if index is not None and index < len(ids) else None, index))

    # -- undo / redo / save -------------------------------------------------------------------
    async def action_undo(self) -> None:
        await self.flush()
        if self.document.undo():
            await self._after_edit(force=True)
        else:
            self.notify("Nothing to undo.", timeout=2)

    async def action_redo(self) -> None:
        await self.flush()
        if self.document.redo():
            await self._after_edit(force=True)
        else:
            self.notify("Nothing to redo.", timeout=2)

    async def action_save(self) -> None:
        await self._save()

    async def _save(self) -> None:
        await self.flush()
        try:
            self.document.save()
        except ChangedOnDisk as exc:
            self.post_message(self.SaveRefused(self.document, exc))
            return
        except OSError as exc:
            self.notify(f"Could not save {self.document.path}: {exc}", severity="error", title="Save failed")
            return
        self.saved()
