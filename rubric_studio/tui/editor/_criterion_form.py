"""The form for one criterion of the rubric editor, with its score-range rows.

Every field exists once; showing another criterion fills in values and hides what does
not apply (judge-only rows for a check, the other check types' parameters), so moving
through the list does not rebuild the form. Only the score-range rows are rebuilt, when
their number changes. A check type's parameters are built the first time a criterion of
that type is shown (:class:`CheckParams`): most of a rubric's criteria are judged, and the
editor then opens with a third fewer widgets. The fields report edits themselves
(``FieldEdited``).
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Button, Input, Select, Static

from rubric_studio.core.checks import CHECK_TYPES, EditorField
from rubric_studio.core.checks import check_type as registered_check_type
from rubric_studio.core.document import CHECK_FIELDS, EditError, RubricDocument
from rubric_studio.core.rubric import DEFAULT_ANALYTIC_MIN_SCORE
from rubric_studio.tui.editor._fields import FieldSpec, number_text
from rubric_studio.tui.editor._specs import (
    CHECK_SPECS,
    CRITERION_SPECS,
    KEYWORDS_MODE,
    KIND_ICONS,
    KIND_NAMES,
    NEW_BAND_TEXT,
    check_field_rows,
    check_type_of,
    criterion_kind,
    next_band,
    range_keys,
)
from rubric_studio.tui.editor._widgets import (
    BuiltWhenShown,
    FieldArea,
    FieldCheck,
    FieldControl,
    FieldInput,
    FieldSelect,
    field_row,
    stack_labels_when_narrow,
)

__all__ = ["CheckParams", "CriterionForm", "ScoreRangesEditor"]


class ScoreRangesEditor(Vertical):
    """The bands of an analytic criterion: one row each (lower bound, text, remove) and "+ band".

    Rows are positional (row 0 is the lowest band); only this widget is rebuilt when
    the number of bands changes.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = 0
        self.can_add = True

    def set_data(self, data: dict[str, Any]) -> bool:
        """True when the number of rows changed (``await recompose()`` then)."""
        rows = len(range_keys(data))
        can_add = next_band(data) is not None
        changed = rows != self.rows or can_add != self.can_add
        self.rows, self.can_add = rows, can_add
        return changed

    def compose(self) -> ComposeResult:
        if self.rows:
            yield Static("[b]score ranges[/b] [dim]judge scores 0-10[/dim]", classes="ed-section-title")
            yield Static("from  band", classes="ed-range-head")
        else:
            yield Static("[b]score ranges[/b] [dim]none: met / unmet[/dim]", classes="ed-section-title")
        for row in range(self.rows):
            lower_spec = FieldSpec("range-lower", "score_ranges", "int", "lower bound", row=row,
                                   minimum=0, maximum=10, required=True, live=False)
            text_spec = FieldSpec("range-text", "score_ranges", "text", "band", row=row, required=True)
            with Horizontal(classes="ed-range-row"):
                yield FieldInput(lower_spec, id=f"ed-range-lower-{row}", classes="ed-range-lower")
                yield FieldInput(text_spec, id=f"ed-range-text-{row}", classes="ed-range-text",
                                 placeholder=NEW_BAND_TEXT)
                yield Button("✕", id=f"ed-range-del-{row}", classes="ed-range-del", compact=True,
                             tooltip="Remove this band")
            yield Static("", id=f"ed-range-lower-{row}-err", classes="ed-error", markup=False)
            yield Static("", id=f"ed-range-text-{row}-err", classes="ed-error", markup=False)
        yield Button("+ band", id="ed-range-add", classes="ed-range-add", compact=True, disabled=not self.can_add)


class CheckParams(Vertical, BuiltWhenShown):
    """The parameters of one check type, empty until :meth:`build` is awaited (the form then
    fills them in).

    The form holds one per registered type and shows only the one the criterion uses; the
    others' rows (about 95 widgets for the built-in types) would cost every studio start
    composing, styling and laying out what is never shown unless a criterion of that type is.
    """

    def __init__(self, check_type: str) -> None:
        super().__init__(id=f"ed-check-{check_type}", classes="ed-group")
        self.check_type = check_type

    def compose(self) -> ComposeResult:
        if not self.built:
            return
        for check_type, control, field, spec in check_field_rows():
            if check_type == self.check_type:
                yield from _check_control(control, field, spec)


class CriterionForm(VerticalScroll):
    """The form for one criterion: :meth:`show_criterion` picks what it shows."""

    can_focus = False

    def on_resize(self, event: events.Resize) -> None:
        stack_labels_when_narrow(self, event)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index: int | None = None
        self.count = 0
        self.data: dict[str, Any] | None = None
        self.criterion_id = ""
        self.line: int | None = None
        self.message: str | None = "No criterion selected."
        self.index_changed = False

    # -- what to show ------------------------------------------------------------------
    def set_state(
        self,
        index: int | None,
        data: dict[str, Any] | None,
        *,
        count: int = 0,
        criterion_id: str = "",
        line: int | None = None,
        message: str | None = None,
    ) -> None:
        """Store what to show; :meth:`apply_layout` then shows it."""
        self.index_changed = index != self.index
        self.index, self.data, self.count = index, data, count
        self.criterion_id, self.line, self.message = criterion_id, line, message

    def show_criterion(self, document: RubricDocument, index: int | None) -> None:
        """Store criterion ``index`` of ``document``, or why the form cannot show one."""
        message, data = None, None
        if document.yaml_problem is not None:
            message = (f"The YAML does not parse:\n{document.yaml_problem}\n\n"
                       "Fix it in the YAML tab; the form comes back when it parses.")
            index = None
        elif document.structure_problem is not None:
            message = f"The form cannot edit this file yet:\n{document.structure_problem}\n\nFix it in the YAML tab."
            index = None
        elif index is None:
            message = "No criteria yet. Press [b]a[/b] in the list to add one."
        else:
            try:
                data = document.criterion_data(index)
            except (EditError, IndexError) as exc:
                message, index = str(exc), None
        ids = document.criterion_ids()
        self.set_state(
            index,
            data,
            count=document.criteria_count,
            criterion_id=ids[index] if index is not None and index < len(ids) else "",
            line=document.criterion_line(index) if index is not None else None,
            message=message,
        )

    def title(self) -> str:
        if self.data is None or self.index is None:
            return ""
        kind = criterion_kind(self.data)
        where = f" · line {self.line}" if self.line else ""
        return (
            f"[b]{escape(self.criterion_id)}[/b]  [dim]{KIND_ICONS[kind]} {KIND_NAMES[kind]} · "
            f"{self.index + 1} of {self.count}{where}[/dim]"
        )

    def fields(self) -> list[FieldControl]:
        """Every field control of the form (the score-range rows as they are now)."""
        return [widget for widget in self.query("*") if isinstance(widget, FieldControl)]

    # -- showing it --------------------------------------------------------------------
    async def apply_layout(self) -> None:
        """Show the rows that apply to the current criterion (rebuilding only the score ranges).

        Does nothing once the form is no longer in the app (closing, or removed): the
        shutdown may take the rows away while this runs.
        """
        if not self.is_attached:
            return
        try:
            await self._apply_layout()
        except NoMatches:
            if self.is_attached:
                raise

    async def _apply_layout(self) -> None:
        empty = self.query_one("#ed-form-empty", Static)
        fields = self.query_one("#ed-fields", Vertical)
        if self.data is None or self.index is None:
            empty.update(self.message or "")
            empty.display, fields.display = True, False
            return
        empty.display, fields.display = False, True
        check_type = check_type_of(self.data)
        if check_type in CHECK_FIELDS:
            await self.query_one(f"#ed-check-{check_type}", CheckParams).build()
        self.query_one("#ed-form-title", Static).update(self.title())
        self.query_one("#ed-f-id", Input).placeholder = f"{self.criterion_id} (automatic)"
        self._show_kind_rows(self.data)
        self._show_min_score_hint(self.data)
        ranges = self.query_one(ScoreRangesEditor)
        if ranges.set_data(self.data) and ranges.is_attached:
            await ranges.recompose()

    def _show_kind_rows(self, data: dict[str, Any]) -> None:
        """Judge rows for a judge criterion; for a check, the parameters of its type."""
        is_check = "check" in data
        check_type = check_type_of(data)
        for widget in self.query(".ed-judge-only"):
            widget.display = not is_check
        for widget in self.query(".ed-check-only"):
            widget.display = is_check
        for name in CHECK_FIELDS:
            self.query_one(f"#ed-check-{name}").display = is_check and check_type == name
        self.query_one("#ed-check-none").display = is_check and check_type not in CHECK_FIELDS
        definition = registered_check_type(check_type) if is_check and check_type else None
        if definition is not None:
            self.query_one("#ed-check-title", Static).update(
                f"[b]{escape(definition.name)} check[/b] [dim]{escape(definition.hint)}[/dim]"
            )
            self.query_one("#ed-c-timeout", Input).placeholder = f"{definition.default_timeout:g}"

    def _show_min_score_hint(self, data: dict[str, Any]) -> None:
        if "check" in data:
            placeholder, hint = "1.0", "met when score ≥ this"
        elif range_keys(data):
            placeholder, hint = number_text(DEFAULT_ANALYTIC_MIN_SCORE), "met when score/10 ≥ this"
        else:
            placeholder, hint = "", "unused by a checklist item"
        self.query_one("#ed-f-min_score", Input).placeholder = placeholder
        self.query_one("#ed-f-min_score-hint", Static).update(hint)

    # -- the rows ----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(self.message or "", id="ed-form-empty", classes="ed-empty")
        with Vertical(id="ed-fields"):
            yield Static("", classes="ed-title", id="ed-form-title")
            yield from self._judge_rows()
            yield ScoreRangesEditor(id="ed-ranges", classes="ed-judge-only ed-section")
            with Vertical(id="ed-check", classes="ed-check-only ed-section"):
                yield Static("", id="ed-check-title", classes="ed-section-title")
                yield Static("Choose a check type above.", id="ed-check-none", classes="ed-hint-line")
                yield from self._check_params()
                yield from field_row("timeout", FieldInput(CHECK_SPECS["timeout"], id="ed-c-timeout", placeholder="2"),
                                     "seconds")
            yield from field_row("tags", FieldInput(CRITERION_SPECS["tags"], id="ed-f-tags", placeholder="comma, separated"))
            yield Static("", id="ed-form-problems", classes="ed-problems", markup=False)

    def _judge_rows(self) -> ComposeResult:
        """id, type, outcome, weight, required, operator, min_score."""
        yield from field_row("id", FieldInput(CRITERION_SPECS["id"], id="ed-f-id"))
        check_choices = [("judge (outcome)", "judge"), *((f"check: {t}", t) for t in CHECK_TYPES)]
        yield from field_row("type", FieldSelect(CRITERION_SPECS["type"], check_choices, "judge", id="ed-f-type",
                                                 allow_blank=False))
        with Vertical(classes="ed-judge-only ed-group"):
            yield from field_row("outcome", FieldArea(CRITERION_SPECS["outcome"], id="ed-f-outcome"), tall=True)
        yield from field_row("weight", FieldInput(CRITERION_SPECS["weight"], id="ed-f-weight", placeholder="1"),
                             "default 1; < 0 = penalty")
        yield from field_row("required", FieldCheck(CRITERION_SPECS["required"], "unmet fails the sample", False,
                                                    id="ed-f-required"))
        with Vertical(classes="ed-judge-only ed-group"):
            operators = [("correctness", "correctness"), ("contradiction", "contradiction")]
            yield from field_row(
                "operator",
                FieldSelect(CRITERION_SPECS["operator"], operators, Select.NULL, id="ed-f-operator",
                            prompt="correctness (default)"),
                "contradiction: met unless contradicted",
            )
        yield from field_row("min_score", FieldInput(CRITERION_SPECS["min_score"], id="ed-f-min_score"), " ",
                             hint_id="ed-f-min_score-hint")

    def _check_params(self) -> ComposeResult:
        """A group for every registered check type's parameters (the form shows one, built when first shown)."""
        for name in CHECK_FIELDS:
            yield CheckParams(name)


def _check_control(control: str, field: EditorField, spec: FieldSpec) -> ComposeResult:
    """The row(s) of one check parameter: a words list comes after its required/forbidden switch."""
    if spec.kind == "words":
        modes = [("forbidden: 1 − fraction present", "forbidden"), ("required: fraction present", "required")]
        yield from field_row("mode", FieldSelect(KEYWORDS_MODE, modes, "forbidden", id="ed-c-mode", allow_blank=False))
        yield from field_row(spec.label, FieldArea(spec, id=control), tall=True)
    elif spec.kind == "bool":
        yield from field_row(spec.label, FieldCheck(spec, "", bool(spec.default), id=control), field.hint)
    elif spec.kind in ("json", "json-value"):
        yield from field_row(spec.label, FieldArea(spec, id=control), tall=True)
    elif spec.kind in ("choice", "yes-no"):
        options = [(choice, choice) for choice in (field.choices or ("true", "false"))]
        yield from field_row(spec.label, FieldSelect(spec, options, Select.NULL, id=control, prompt="-"), field.hint)
    else:
        yield from field_row(spec.label, FieldInput(spec, id=control), field.hint)
