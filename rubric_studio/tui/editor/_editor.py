"""The rubric editor: criteria list + form, rubric settings, and the raw YAML, kept in sync.

``EditorPane(document)`` edits a :class:`~rubric_studio.core.document._document.RubricDocument`
in place (attributes down) and tells its parents what happened (messages up):
:class:`EditorPane.Changed` after every applied edit, :class:`EditorPane.Saved`
after a save, :class:`EditorPane.SaveRefused` when the file changed on disk since it was
read (nothing was written; the app asks what to do), :class:`EditorPane.SelectionChanged`
when the user picks a criterion.

The form fields report the user's edits themselves (:class:`FieldControl.Edited`); the pane
writes them into the document after a short pause in the typing (or at once on enter,
a pick, or leaving the field). A value that does not validate is shown next to its field
and not applied. The YAML tab applies its text after a pause too; a syntax error is
shown under it and the text is kept. Undo/redo work on the document, so they cover every
tab; each burst of typing (one field until it is left, the YAML view until the cursor
moves) is its own undo step.

Showing only reads the document: the fields are filled in without posting edits, and the
fields the user is typing in (or whose edit still waits) keep their text unless a refresh
is forced (undo, another criterion). The pane follows the list's selection.

Structural edits (add, duplicate, delete and move criteria, add and remove bands) answer
the criteria list's keys (:class:`CriteriaList.Command`) and the score-range buttons. Each
first applies the typing still waiting for its pause, then makes one document edit (its
own undo step), selects what it made, and posts ``Changed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static, TabbedContent, TabPane

from rubric_studio.core.document import ChangedOnDisk, EditError, RubricDocument, UndoStop
from rubric_studio.core.problems import RubricError
from rubric_studio.tui.editor._apply import EditBursts, apply_field, cross_check
from rubric_studio.tui.editor._criterion_form import CriterionForm
from rubric_studio.tui.editor._list import ConfirmDelete, CriteriaList
from rubric_studio.tui.editor._outside import shown_in
from rubric_studio.tui.editor._rubric_form import RubricForm
from rubric_studio.tui.editor._specs import next_band, range_keys
from rubric_studio.tui.editor._widgets import FieldArea, FieldControl, FieldEdited, FieldInput, show_fields
from rubric_studio.tui.editor._yaml import YamlView, status_markup, yaml_note
from rubric_studio.tui.key_order import focus_now
from rubric_studio.tui.restyle import set_class_restyling

TYPED_KEYS_WAIT = 30.0
"""At most this long a save waits for the focused field to take the keys typed before it."""

__all__ = ["FIELD_DEBOUNCE", "YAML_DEBOUNCE", "ConfirmDelete", "CriteriaList", "EditorPane", "FieldEdited"]

FIELD_DEBOUNCE = 0.3
YAML_DEBOUNCE = 0.5
NARROW_WIDTH = 90  # below this the list goes above the form

_LIST_HINT = (
    "[b]a[/b] add  [b]c[/b] copy  [b]d[/b] delete\n"
    "[b]\\[ ][/b] or [b]⇧↑↓[/b] move  [b]⏎[/b] edit\n"
    "[$text-success]✓[/] checklist  [$text-warning]◑[/] scored 0-10\n"
    "[$text-primary]▣[/] check      [$text-error]✗[/] penalty"
)


class EditorPane(Widget):
    """The rubric editor. ``EditorPane(document, id="editor")``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", show=True, priority=True),
        Binding("ctrl+z", "undo", "Undo", show=True, priority=True),
        Binding("ctrl+y,ctrl+shift+z", "redo", "Redo", show=True, priority=True),
        # resolved as it arrives: the keys typed right after it go to the form (key_order)
        Binding("enter", "edit_selected", "Edit", show=False, priority=True),
    ]

    can_focus = False
    ready = False  # True once the first sync after mounting has shown the document

    field_debounce: float = FIELD_DEBOUNCE
    """Seconds of no typing after which a field's text is applied."""
    yaml_debounce: float = YAML_DEBOUNCE
    """Seconds of no typing after which the YAML view's text is applied."""

    @dataclass
    class Changed(Message):
        """The document's text changed (an edit, undo or redo); it is not saved yet."""

        document: RubricDocument

    @dataclass
    class Saved(Message):
        """The document was written to disk."""

        document: RubricDocument

    @dataclass
    class SaveRefused(Message):
        """A save found the file changed on disk since it was read: nothing was written.

        ``error`` carries what the disk holds now (its text and state).
        """

        document: RubricDocument
        error: ChangedOnDisk

    @dataclass
    class SelectionChanged(Message):
        """The user selected a criterion in the list."""

        criterion_id: str | None
        index: int | None = None

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
        self._pending: dict[str, FieldEdited] = {}  # by field id: the last edit not applied yet
        self._field_timer: Timer | None = None
        self._yaml_timer: Timer | None = None
        self._quiet_highlight: int | None = None
        self._yaml_line_for: int | None = None
        self._bursts = EditBursts(document)
        self._released_field: str | None = None  # shows the document's value at the next sync
        self._focus_when_ready = False

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with TabbedContent(id="ed-tabs", initial="ed-tab-criteria"):
            with TabPane("Criteria", id="ed-tab-criteria"), Horizontal(id="ed-split"):
                with Vertical(id="ed-side"):
                    yield CriteriaList(id="ed-list", compact=True)
                    yield Static(_LIST_HINT, id="ed-list-hint")
                yield CriterionForm(id="ed-form")
            with TabPane("Rubric", id="ed-tab-rubric"):
                yield RubricForm(id="ed-rubric")
            with TabPane("YAML", id="ed-tab-yaml"):
                yield YamlView(self.document.text, id="ed-yaml")
                yield Static("", id="ed-yaml-problem", markup=False)
        yield Static("", id="ed-status")

    async def on_mount(self) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#ed-yaml", YamlView).indent_width = 2
        await self._sync(force=True)
        self.ready = True  # every view shows the document
        if self._focus_when_ready:
            self.focus()

    def on_resize(self, event: events.Resize) -> None:
        set_class_restyling(self, event.size.width < NARROW_WIDTH, "-narrow")

    # -- public API for the app shell -------------------------------------------
    def refresh_from_document(self) -> None:
        """Show the document again (after the app reloaded it from disk)."""
        self._pending.clear()
        self._cancel_timers()
        self._bursts.end()
        self.call_later(self._sync, True)

    # -- edits made outside the studio -------------------------------------------------
    def typing_in(self) -> Widget | None:
        """The editor control the user is typing in (a focused field or the YAML view), or None."""
        focused = self.app.focused if self.is_attached else None
        if isinstance(focused, FieldControl | YamlView) and self in focused.ancestors:
            return focused
        return None

    def outside_edit_meets_typing(self, disk_text: str) -> str | None:
        """What the user is typing in, named for a message, when ``disk_text`` (the file after an
        outside edit) changes it too while it holds their typing; None when the outside edit can
        merge around the typing (or the control holds none: it then shows the outside value)."""
        widget, document = self.typing_in(), self.document
        if widget is None or disk_text == document.disk_text:
            return None
        if isinstance(widget, YamlView):
            return "the YAML text" if widget.text != document.disk_text else None
        assert isinstance(widget, FieldControl)
        spec, criterion_id, index = widget.spec, None, None
        if spec.of_criterion:
            ids = document.criterion_ids()
            index = self.selected
            criterion_id = ids[index] if index is not None and index < len(ids) else None
        before = shown_in(document.disk_text, document.file, spec, criterion_id, index)
        if shown_in(disk_text, document.file, spec, criterion_id, index) == before:
            return None  # the outside edit left this field alone: it merges around the typing
        if self._untyped(widget, before):
            return None  # nothing typed in it: it will show the outside value
        return f"the {spec.label or spec.key} field"

    def _untyped(self, widget: FieldControl, shown_before: object) -> bool:
        """Whether ``widget`` holds no typing of the user's: it shows what the document held."""
        return widget.control_value() == shown_before and (widget.id or "") not in self._pending

    def took_outside_edit(self, selected_id: str | None, base_before: str) -> None:
        """The document took in an outside edit (its base was ``base_before``): follow the selected
        criterion to where it is now and show everything else, leaving the field being typed in
        and edits waiting untouched. A focused field without typing shows the new value."""
        if selected_id is not None:
            index = self.document.criterion_index(selected_id)
            if index is not None and index != self.selected:
                self.selected = index
                self.query_one("#ed-form", CriterionForm).index = index  # moved, not newly selected
        widget = self.typing_in()
        if isinstance(widget, FieldControl):
            criterion_id = selected_id if widget.spec.of_criterion else None
            before = shown_in(base_before, self.document.file, widget.spec, criterion_id, self.selected)
            if self._untyped(widget, before):
                self._released_field = widget.id
        self.call_later(self._sync)

    def selected_id(self) -> str | None:
        """The id of the selected criterion, or None."""
        ids = self.document.criterion_ids()
        return ids[self.selected] if self.selected is not None and self.selected < len(ids) else None

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
        if not self.ready:  # still composing (F2 pressed while it mounts): focus once it shows the document
            self._focus_when_ready = True
            return self
        tabs = self.query_one("#ed-tabs", TabbedContent)
        target: Widget
        if tabs.active == "ed-tab-yaml":
            target = self.query_one("#ed-yaml", YamlView)
        elif tabs.active == "ed-tab-rubric":
            if not self.query_one("#ed-rubric", RubricForm).built:  # switched to just now: built first
                self.call_later(self._focus_rubric_form, scroll_visible)
                return self
            target = self.query_one("#ed-r-name", Input)
        else:
            target = self.query_one("#ed-list", CriteriaList)
        focus_now(target, scroll_visible)
        return self

    async def _focus_rubric_form(self, scroll_visible: bool) -> None:
        with contextlib.suppress(NoMatches):  # the studio closing
            await self.query_one("#ed-rubric", RubricForm).build()
            if self.query_one("#ed-tabs", TabbedContent).active == "ed-tab-rubric":
                focus_now(self.query_one("#ed-r-name", Input), scroll_visible)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit_selected":  # enter edits from the criteria list; elsewhere it is the field's
            return self.app.focused is self.query_one("#ed-list", CriteriaList)
        return True

    def action_edit_selected(self) -> None:
        self.focus_form()

    def focus_form(self) -> None:
        """Focus the selected criterion's first field (its outcome, or its id for a check)."""
        outcome = self.query_one("#ed-f-outcome", FieldArea)
        if outcome.parent is not None and outcome.parent.parent is not None and outcome.parent.parent.display:
            focus_now(outcome)
        else:
            focus_now(self.query_one("#ed-f-id", Input))

    async def _take_typed_keys(self) -> None:
        """Wait until the focused field has processed the keys typed before this save, then take
        what it holds.

        The app runs a priority binding (ctrl+s) the moment its key arrives, but forwards each
        typed key to the focused widget's own queue; on a busy machine that queue lags, and the
        save used to run before the last keys (or all of them) reached the document: the file
        kept the old text and the typing stayed unsaved. A callback queued on the field runs
        after every key queued before it; the field's text is then final, and is read directly
        (its change messages may still be on their way up).
        """
        focused = self.app.focused
        if focused is None or self not in focused.ancestors:
            return
        taken = asyncio.Event()
        focused.call_later(taken.set)
        with contextlib.suppress(TimeoutError):  # a field removed meanwhile never runs it
            await asyncio.wait_for(taken.wait(), TYPED_KEYS_WAIT)
        if isinstance(focused, FieldControl):
            edit = focused.current_edit()
            if edit is not None:
                self.on_field_control_edited(edit)
        elif isinstance(focused, YamlView) and focused.text != self.document.text:
            await self._apply_yaml()

    async def flush(self) -> None:
        """Apply whatever the user typed that is still waiting for its pause."""
        await self._flush()
        if self._yaml_timer is not None:
            await self._apply_yaml()

    @property
    def pending_fields(self) -> list[str]:
        """The ids of the fields whose edit waits to be applied (for its pause, enter, or leaving it)."""
        return list(self._pending)

    @property
    def waiting_for_pause(self) -> bool:
        """Whether typed text will be applied when the typing pause ends."""
        return self._field_timer is not None or self._yaml_timer is not None

    # -- showing the document ---------------------------------------------------------
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
            if self.is_attached and self.app.is_running:
                raise  # a missing view while the app runs is a bug; while it shuts down, expected

    async def _sync_views(self, force: bool, reset_yaml: bool) -> None:
        document = self.document
        self.query_one("#ed-yaml", YamlView).show_text(document.text, reset=reset_yaml)
        self._sync_yaml_note()
        count = document.criteria_count
        if document.structure_problem is not None:
            pass  # keep the selection for when the YAML parses again
        elif count == 0:
            self.selected = None
        elif self.selected is None or self.selected >= count:
            self.selected = min(self.selected or 0, count - 1)
        self._sync_list()
        await self._sync_form(force=force)
        self.query_one("#ed-rubric", RubricForm).show_document(document, keep=self._kept_fields(), force=force)
        self._released_field = None
        self._sync_status()

    def _sync_yaml_note(self) -> None:
        note = self.query_one("#ed-yaml-problem", Static)
        text, state = yaml_note(self.document)
        note.update(text)
        note.set_class(state == "error", "-error")
        note.set_class(state == "ok", "-ok")
        note.display = state != "ok"

    def _sync_list(self) -> None:
        listing = self.query_one("#ed-list", CriteriaList)
        listing.show_document(self.document)
        if self._quiet_highlight is not None and listing.highlighted == self._quiet_highlight:
            return  # a selection asked for (select_criterion) is on its way: keep it
        if self.selected is not None and listing.highlighted != self.selected:
            self._quiet_highlight = self.selected
            listing.highlighted = self.selected

    async def _sync_form(self, force: bool = False) -> None:
        form = self.query_one("#ed-form", CriterionForm)
        form.show_criterion(self.document, self.selected)
        focused = self.app.focused
        focus_id = focused.id if focused is not None and form in focused.ancestors else None
        await form.apply_layout()
        if not self.is_attached:
            return
        if focus_id and self.app.focused is None:  # its row was rebuilt (score ranges)
            with contextlib.suppress(NoMatches):
                self.query_one(f"#{focus_id}").focus()
        force = force or form.index_changed
        show_fields(form.fields(), form.data or {}, keep=set() if force else self._kept_fields(), clear_errors=force)
        self._sync_form_problems(form.index)

    def _kept_fields(self) -> set[str]:
        """The fields a refresh leaves alone: the one being typed in, and those with an edit waiting
        (a focused field an outside edit changed before the user typed in it shows that value)."""
        keep = set(self._pending)
        focused = self.app.focused
        released = focused is not None and focused.id == self._released_field
        if isinstance(focused, FieldControl) and focused.id and not (released and focused.shows_document()):
            keep.add(focused.id)
        return keep

    def _sync_form_problems(self, index: int | None) -> None:
        with contextlib.suppress(NoMatches):
            widget = self.query_one("#ed-form-problems", Static)
            if index is None:
                widget.update("")
                return
            prefix = f"criteria[{index}]"
            mine = [p for p in self.document.problems() if prefix in p.message]
            widget.update("\n".join(f"{'✗' if p.severity == 'error' else '!'} {p}" for p in mine))
            widget.display = bool(mine)

    def _sync_status(self) -> None:
        self.query_one("#ed-status", Static).update(status_markup(self.document))

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
            self._bursts.end()
            await self._sync_form()
        if not quiet:
            self._post_selection()

    def _post_selection(self) -> None:
        ids = self.document.criterion_ids()
        index = self.selected
        self.post_message(self.SelectionChanged(ids[index] if index is not None and index < len(ids) else None, index))

    # -- field edits --------------------------------------------------------------------
    def on_field_control_edited(self, event: FieldEdited) -> None:
        """Queue a field's edit (or show why it cannot be applied)."""
        event.stop()
        field, key = event.field, event.field.id or ""
        problem = event.error
        if problem is None and not event.reverted:
            problem = cross_check(self.document, self.selected, event.spec, event.value)
        if event.reverted or problem is not None:
            self._pending.pop(key, None)
            field.show_error(problem or "")
            return
        field.show_error("")
        self._pending[key] = event
        if event.apply_now:
            self.call_later(self._flush)
        elif event.spec.live:
            if self._field_timer is not None:
                self._field_timer.stop()
            self._field_timer = self.set_timer(self.field_debounce, self._flush)

    async def _flush(self) -> bool:
        """Apply every queued field edit; True if the document changed."""
        if self._field_timer is not None:
            self._field_timer.stop()
            self._field_timer = None
        pending, self._pending = self._pending, {}
        changed = False
        for key, edit in pending.items():
            write = partial(apply_field, self.document, self.selected, edit.spec, edit.value)
            try:
                changed |= self._bursts.apply(key, write)
            except (EditError, IndexError, RubricError) as exc:
                edit.field.show_error(str(exc))
            if edit.apply_now:
                self._bursts.end()  # enter, a pick, a toggle: one step each
        if changed:
            await self._after_edit()
        return changed

    async def _after_edit(self, *, force: bool = False) -> None:
        await self._sync(force=force)
        self.post_message(self.Changed(self.document))

    async def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        widget = event.widget
        if isinstance(widget, FieldControl):
            if (widget.id or "") in self._pending:
                await self._flush()
            self._bursts.end()
        elif isinstance(widget, YamlView):
            if self._yaml_timer is not None:
                await self._apply_yaml()
            self._bursts.end()

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id != "ed-tabs":
            return
        event.stop()
        if event.pane.id == "ed-tab-rubric":
            with contextlib.suppress(NoMatches):  # the studio closing
                await self.query_one("#ed-rubric", RubricForm).build()
        if event.pane.id == "ed-tab-yaml" and self.selected is not None and self._yaml_line_for != self.selected:
            line = self.document.criterion_line(self.selected)
            if line is not None:
                self.query_one("#ed-yaml", YamlView).move_cursor((line - 1, 0), center=True)
                self._yaml_line_for = self.selected

    # -- the YAML view ---------------------------------------------------------------------
    def on_text_area_changed(self, event: YamlView.Changed) -> None:
        view = event.text_area
        if not isinstance(view, YamlView):
            return
        event.stop()
        if self._yaml_timer is not None:
            self._yaml_timer.stop()
            self._yaml_timer = None
        if view.text != self.document.text:
            self._yaml_timer = self.set_timer(self.yaml_debounce, self._apply_yaml)

    async def _apply_yaml(self) -> None:
        if self._yaml_timer is not None:
            self._yaml_timer.stop()
            self._yaml_timer = None
        view = self.query_one("#ed-yaml", YamlView)
        if self._bursts.apply(("yaml", view.burst), partial(self.document.replace_text, view.text)):
            await self._after_edit(force=True)

    def _cancel_timers(self) -> None:
        for timer in (self._field_timer, self._yaml_timer):
            if timer is not None:
                timer.stop()
        self._field_timer = self._yaml_timer = None

    # -- messages from the list and the band buttons ------------------------------------
    async def on_criteria_list_command(self, event: CriteriaList.Command) -> None:
        event.stop()
        if event.command == "add":
            await self.add_criterion()
        elif event.command == "duplicate":
            await self.duplicate_criterion()
        elif event.command == "delete":
            self.confirm_delete()
        elif event.command == "move":
            await self.move_criterion(event.delta)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id == "ed-range-add":
            event.stop()
            await self.add_score_range()
        elif button_id.startswith("ed-range-del-"):
            event.stop()
            await self.remove_score_range(int(button_id.rsplit("-", 1)[1]))

    # -- criteria ------------------------------------------------------------------------
    async def _structural(self, operation: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
        """Run a list operation after applying pending typing; (ok, result)."""
        await self.flush()
        try:
            result = operation(*args)
        except (EditError, IndexError) as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return False, None
        return True, result

    async def add_criterion(self) -> None:
        """Add a criterion after the selected one and put the cursor in its outcome, ready to type over."""
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
        """Ask, then delete the selected criterion."""
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
        with contextlib.suppress(NoMatches):
            self.query_one("#ed-list", CriteriaList).focus()

    async def move_criterion(self, delta: int) -> None:
        if self.selected is None:
            return
        ok, new = await self._structural(self.document.move_criterion, self.selected, delta)
        if not ok or new == self.selected:
            return
        self.selected = new
        await self._after_edit()

    # -- score ranges ---------------------------------------------------------------------
    async def add_score_range(self) -> None:
        """Add a band at the next free bound and put the cursor in its text (empty: the field's
        placeholder asks for it, so typing never mixes with a default)."""
        if self.selected is None:
            return
        await self.flush()
        lower = next_band(self.document.criterion_data(self.selected))
        if lower is None:
            return
        try:
            self.document.set_score_range(self.selected, lower, "")
        except EditError as exc:
            self.notify(str(exc), severity="error", title="Editor")
            return
        await self._after_edit()
        row = range_keys(self.document.criterion_data(self.selected)).index(lower)
        with contextlib.suppress(NoMatches):
            self.query_one(f"#ed-range-text-{row}", FieldInput).focus()

    async def remove_score_range(self, row: int) -> None:
        if self.selected is None:
            return
        await self.flush()
        keys = range_keys(self.document.criterion_data(self.selected))
        if not 0 <= row < len(keys):
            return
        self.document.remove_score_range(self.selected, keys[row])
        await self._after_edit()

    # -- undo / redo / save -------------------------------------------------------------------
    async def action_undo(self) -> None:
        await self.flush()
        undone = self.document.undo()
        if isinstance(undone, UndoStop):
            self.notify(f"Reached {undone.outside} — ctrl+z again undoes it.", title="Undo", timeout=6)
        elif undone:
            await self._after_edit(force=True)
            outside = self.document.reverted_outside
            if outside is not None and self.document.dirty:
                self.notify(f"Undid {outside}: your text now differs from the file on disk, and saving "
                            "asks before replacing it.", title="Undo", severity="warning", timeout=8)
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
        await self._take_typed_keys()
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
