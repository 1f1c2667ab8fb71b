"""The forms of the rubric editor: one criterion (with its score ranges) and the rubric itself.

Every editable control carries a :class:`FieldSpec` saying which key of the document
it edits and how to read the user's text (:func:`parse_field`). The forms only
display; :class:`~rubric_studio.tui.editor.EditorPane` reads the specs, validates,
and applies the edit to the :class:`~rubric_studio.core.document.RubricDocument`.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from rubric_studio.core.checkspec import CHECK_TYPES
from rubric_studio.core.document import CHECK_FIELDS
from rubric_studio.core.rubric import DEFAULT_ANALYTIC_MIN_SCORE, ID_PATTERN

KIND_ICONS = {"checklist": "✓", "analytic": "◑", "check": "▣", "penalty": "✗"}
KIND_NAMES = {"checklist": "judge · checklist", "analytic": "judge · analytic 0-10", "check": "check", "penalty": "judge · penalty"}
NEW_BAND_TEXT = "Describe this band"
_BAND_ORDER = (0, 10, 5, 7, 3, 8, 2, 1, 4, 6, 9)


@dataclass(frozen=True)
class FieldSpec:
    """What one control edits and how its text is read."""

    scope: str  # criterion | check | check-type | keywords-mode | range-lower | range-text | rubric | judge
    key: str
    kind: str  # text outcome id int float bool choice tags words json pattern model command function
    label: str = ""
    row: int | None = None  # the score-range row (bands sorted by lower bound) it edits
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # strictly greater than
    nonzero: bool = False
    required: bool = False
    default: Any = None  # a choice or bool equal to this removes the key
    live: bool = True  # apply while typing (False: on enter / leaving the field)


def _number_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def display_value(spec: FieldSpec, value: Any) -> Any:
    """How a document value shows in the control for ``spec``."""
    if spec.kind == "bool":
        return bool(spec.default) if value is None else bool(value)
    if spec.kind == "choice":
        return Select.NULL if value is None else str(value)
    if value is None:
        return ""
    if spec.kind == "tags":
        return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if spec.kind == "words":
        return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)
    if spec.kind == "json":
        return json.dumps(value, indent=2) if isinstance(value, dict | list) else str(value)
    if spec.kind == "command" and isinstance(value, list):
        return shlex.join(str(v) for v in value)
    if spec.kind in ("int", "float"):
        return _number_text(value)
    return str(value)


def parse_field(spec: FieldSpec, raw: Any, *, current: Any = None) -> Any:
    """The value to write for ``raw`` (``None`` removes the key); ValueError says what is wrong."""
    kind = spec.kind
    if kind == "bool":
        value = bool(raw)
        return None if spec.default is not None and value == spec.default and current is None else value
    if kind == "choice":
        if raw is Select.NULL or raw is None or raw == "":
            return None
        return None if spec.default is not None and raw == spec.default and current is None else raw
    text = raw if isinstance(raw, str) else str(raw)
    stripped = text.strip()
    if not stripped:
        if spec.required:
            raise ValueError(_empty_message(spec))
        return None
    if kind == "int":
        if not re.fullmatch(r"[-+]?\d+", stripped):
            raise ValueError(f"expected a whole number, got {stripped!r}")
        return _bounded(spec, int(stripped))
    if kind == "float":
        try:
            number: float = float(stripped)
        except ValueError:
            raise ValueError(f"expected a number, got {stripped!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"expected a finite number, got {stripped!r}")
        if re.fullmatch(r"[-+]?\d+", stripped):
            number = int(stripped)
        return _bounded(spec, number)
    if kind == "id":
        if not re.fullmatch(ID_PATTERN, stripped):
            raise ValueError("ids are letters, digits and . _ : - (starting with a letter or digit)")
        return stripped
    if kind == "tags":
        return [part.strip() for part in stripped.split(",") if part.strip()]
    if kind == "words":
        words = [line.strip() for line in text.splitlines() if line.strip()]
        return words
    if kind == "json":
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        if not isinstance(value, dict):
            raise ValueError("a JSON Schema is an object ({...})")
        return value
    if kind == "pattern":
        import regex

        try:
            regex.compile(text, regex.VERSION0)
        except regex.error as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        return text
    if kind == "model":
        provider, sep, name = stripped.partition(":")
        if not sep or not provider or not name:
            raise ValueError('expected "provider:model", e.g. openai:gpt-4o-mini')
        return stripped
    if kind == "function":
        if not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", stripped):
            raise ValueError('expected "module:function"')
        return stripped
    if kind == "command":
        if isinstance(current, list):
            try:
                return shlex.split(stripped)
            except ValueError as exc:
                raise ValueError(f"cannot split the command: {exc}") from None
        return stripped
    if kind == "flags":
        unknown = sorted(set(stripped) - set("imsx"))
        if unknown:
            raise ValueError(f"unknown flag(s) {''.join(unknown)!r}; use letters from 'imsx'")
        return stripped
    if kind == "outcome":
        return stripped
    return stripped


def _empty_message(spec: FieldSpec) -> str:
    if spec.key == "outcome":
        return "the outcome is empty; say what the judge should look for"
    return f"{spec.label or spec.key} is required"


def _bounded(spec: FieldSpec, number: float) -> float:
    if spec.nonzero and number == 0:
        raise ValueError("weight 0 has no effect; use a positive weight, or a negative one for a penalty")
    if spec.minimum is not None and number < spec.minimum:
        raise ValueError(f"must be at least {_number_text(spec.minimum)}")
    if spec.maximum is not None and number > spec.maximum:
        raise ValueError(f"must be at most {_number_text(spec.maximum)}")
    if spec.above is not None and number <= spec.above:
        raise ValueError(f"must be more than {_number_text(spec.above)}")
    return number


# ---------------------------------------------------------------------------
# controls that know what they edit


class FieldInput(Input):
    def __init__(self, spec: FieldSpec, value: str = "", **kwargs: Any) -> None:
        super().__init__(value, compact=True, **kwargs)
        self.spec = spec


class FieldArea(TextArea):
    def __init__(self, spec: FieldSpec, text: str = "", **kwargs: Any) -> None:
        super().__init__(text, soft_wrap=True, compact=True, tab_behavior="focus", **kwargs)
        self.spec = spec


class FieldSelect(Select[str]):
    def __init__(self, spec: FieldSpec, options: list[tuple[str, str]], value: Any, **kwargs: Any) -> None:
        super().__init__(options, value=value, compact=True, **kwargs)
        self.spec = spec
        self.choices = frozenset(choice for _, choice in options)
        self.blank_allowed = bool(kwargs.get("allow_blank", True))

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


class FieldCheck(Checkbox):
    def __init__(self, spec: FieldSpec, label: str, value: bool, **kwargs: Any) -> None:
        super().__init__(label, value, compact=True, **kwargs)
        self.spec = spec


EDIT_CONTROLS = (FieldInput, FieldArea, FieldSelect, FieldCheck)


def control_value(widget: Widget) -> Any:
    if isinstance(widget, FieldArea):
        return widget.text
    if isinstance(widget, FieldInput | FieldSelect | FieldCheck):
        return widget.value
    raise TypeError(widget)


def shown_value(widget: Widget, value: Any) -> Any:
    """What ``widget`` can show for the document value ``value`` (None: it cannot show it).

    A select shows a value that is not one of its choices (a typo in the file) as blank,
    or not at all when it cannot be blank; the problem is reported under the form.
    """
    if value is None:
        return None
    if isinstance(widget, FieldSelect) and value is not Select.NULL and value not in widget.choices:
        return Select.NULL if widget.blank_allowed else None
    return value


def set_control_value(widget: Widget, value: Any) -> None:
    """Show ``value`` (already passed through :func:`shown_value`) without posting anything itself."""
    if isinstance(widget, FieldArea):
        if widget.text != value:
            widget.load_text(value)
    elif isinstance(widget, FieldSelect):
        if widget.value != value:
            widget.value = value
    elif isinstance(widget, FieldInput | FieldCheck) and widget.value != value:
        widget.value = value


def _row(label: str, control: Widget, hint: str = "", *, tall: bool = False, hint_id: str | None = None) -> ComposeResult:
    classes = "ed-row -tall" if tall else "ed-row"
    with Horizontal(classes=classes):
        yield Label(label, classes="ed-label")
        yield control
        if hint:
            yield Static(hint, classes="ed-hint", markup=False, id=hint_id)
    yield Static("", id=f"{control.id}-err", classes="ed-error", markup=False)


# ---------------------------------------------------------------------------
# criterion form


def criterion_kind(data: dict[str, Any]) -> str:
    """checklist | analytic | check | penalty, from raw criterion data."""
    if "check" in data:
        return "check"
    weight = data.get("weight", 1)
    if isinstance(weight, int | float) and not isinstance(weight, bool) and weight < 0:
        return "penalty"
    return "analytic" if data.get("score_ranges") else "checklist"


def check_type_of(data: dict[str, Any]) -> str | None:
    check = data.get("check")
    if isinstance(check, dict):
        value = check.get("type")
        return value if isinstance(value, str) else ""
    return None


def keywords_mode(data: dict[str, Any]) -> str:
    check = data.get("check") if isinstance(data.get("check"), dict) else {}
    return "required" if "required" in check and "forbidden" not in check else "forbidden"


def range_keys(data: dict[str, Any]) -> list[int]:
    ranges = data.get("score_ranges")
    if not isinstance(ranges, dict):
        return []
    return sorted(k for k in ranges if isinstance(k, int) and not isinstance(k, bool))


def range_lower(data: dict[str, Any], row: int | None) -> int | None:
    """The lower bound of score-range row ``row`` (bands sorted by lower bound)."""
    keys = range_keys(data)
    return keys[row] if row is not None and 0 <= row < len(keys) else None


def next_band(data: dict[str, Any]) -> int | None:
    taken = set(range_keys(data))
    return next((k for k in _BAND_ORDER if k not in taken), None)


CRITERION_SPECS: dict[str, FieldSpec] = {
    "id": FieldSpec("criterion", "id", "id", "id"),
    "type": FieldSpec("check-type", "type", "choice", "type"),
    "outcome": FieldSpec("criterion", "outcome", "outcome", "outcome", required=True),
    "weight": FieldSpec("criterion", "weight", "float", "weight", nonzero=True),
    "required": FieldSpec("criterion", "required", "bool", "required", default=False),
    "operator": FieldSpec("criterion", "operator", "choice", "operator"),
    "min_score": FieldSpec("criterion", "min_score", "float", "min_score", minimum=0, maximum=1),
    "tags": FieldSpec("criterion", "tags", "tags", "tags"),
}

CHECK_SPECS: dict[str, FieldSpec] = {
    "min_chars": FieldSpec("check", "min_chars", "int", "min chars", minimum=0),
    "max_chars": FieldSpec("check", "max_chars", "int", "max chars", minimum=1),
    "min_words": FieldSpec("check", "min_words", "int", "min words", minimum=0),
    "max_words": FieldSpec("check", "max_words", "int", "max words", minimum=1),
    "words": FieldSpec("check", "words", "words", "keywords"),
    "case_sensitive": FieldSpec("check", "case_sensitive", "bool", "match case", default=False),
    "whole_words": FieldSpec("check", "whole_words", "bool", "whole words", default=False),
    "pattern": FieldSpec("check", "pattern", "pattern", "pattern", required=True),
    "expect_match": FieldSpec("check", "expect_match", "bool", "expect match", default=True),
    "flags": FieldSpec("check", "flags", "flags", "flags"),
    "schema": FieldSpec("check", "schema", "json", "schema"),
    "function": FieldSpec("check", "function", "function", "function", required=True),
    "command": FieldSpec("check", "command", "command", "command", required=True),
    "timeout": FieldSpec("check", "timeout", "float", "timeout", above=0, maximum=600),
}
KEYWORDS_MODE = FieldSpec("keywords-mode", "mode", "choice", "mode")

_CHECK_HINTS = {
    "length": "words: whitespace tokens; 0 at 1.5 × max",
    "keywords": "substrings, one per line",
    "regex": "searched anywhere; flags from imsx",
    "json": "parses as JSON; optional JSON Schema",
    "python": "module:function; trusted rubrics only",
    "command": "sample on stdin, 0-1 on stdout; trusted only",
}


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
                yield FieldInput(text_spec, id=f"ed-range-text-{row}", classes="ed-range-text")
                yield Button("✕", id=f"ed-range-del-{row}", classes="ed-range-del", compact=True,
                             tooltip="Remove this band")
            yield Static("", id=f"ed-range-lower-{row}-err", classes="ed-error", markup=False)
            yield Static("", id=f"ed-range-text-{row}-err", classes="ed-error", markup=False)
        yield Button("+ band", id="ed-range-add", classes="ed-range-add", compact=True, disabled=not self.can_add)


class CriterionForm(VerticalScroll):
    """The form for one criterion.

    Every field exists once; showing another criterion updates values and hides
    what does not apply (judge-only rows for a check, the other check types'
    parameters), so moving through the list does not rebuild the form.
    """

    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index: int | None = None
        self.count = 0
        self.data: dict[str, Any] | None = None
        self.criterion_id = ""
        self.line: int | None = None
        self.message: str | None = "No criterion selected."
        self.index_changed = False

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

    def title(self) -> str:
        if self.data is None or self.index is None:
            return ""
        kind = criterion_kind(self.data)
        where = f" · line {self.line}" if self.line else ""
        return (
            f"[b]{escape(self.criterion_id)}[/b]  [dim]{KIND_ICONS[kind]} {KIND_NAMES[kind]} · "
            f"{self.index + 1} of {self.count}{where}[/dim]"
        )

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
        data = self.data
        is_check = "check" in data
        check_type = check_type_of(data)
        self.query_one("#ed-form-title", Static).update(self.title())
        self.query_one("#ed-f-id", Input).placeholder = f"{self.criterion_id} (automatic)"
        for widget in self.query(".ed-judge-only"):
            widget.display = not is_check
        for widget in self.query(".ed-check-only"):
            widget.display = is_check
        for name in CHECK_FIELDS:
            self.query_one(f"#ed-check-{name}").display = is_check and check_type == name
        self.query_one("#ed-check-none").display = is_check and check_type not in CHECK_FIELDS
        if is_check and check_type in CHECK_FIELDS:
            self.query_one("#ed-check-title", Static).update(
                f"[b]{check_type} check[/b] [dim]{_CHECK_HINTS[check_type]}[/dim]"
            )
            self.query_one("#ed-c-timeout", Input).placeholder = "10" if check_type == "command" else "2"
        analytic = bool(range_keys(data))
        if is_check:
            placeholder, hint = "1.0", "met when score ≥ this"
        elif analytic:
            placeholder, hint = _number_text(DEFAULT_ANALYTIC_MIN_SCORE), "met when score/10 ≥ this"
        else:
            placeholder, hint = "", "unused by a checklist item"
        self.query_one("#ed-f-min_score", Input).placeholder = placeholder
        self.query_one("#ed-f-min_score-hint", Static).update(hint)
        ranges = self.query_one(ScoreRangesEditor)
        if ranges.set_data(data) and ranges.is_attached:
            await ranges.recompose()

    def compose(self) -> ComposeResult:
        yield Static(self.message or "", id="ed-form-empty", classes="ed-empty")
        with Vertical(id="ed-fields"):
            yield Static("", classes="ed-title", id="ed-form-title")
            yield from _row("id", FieldInput(CRITERION_SPECS["id"], id="ed-f-id"))
            yield from _row(
                "type",
                FieldSelect(
                    CRITERION_SPECS["type"],
                    [("judge (outcome)", "judge"), *((f"check: {t}", t) for t in CHECK_TYPES)],
                    "judge",
                    id="ed-f-type",
                    allow_blank=False,
                ),
            )
            with Vertical(classes="ed-judge-only ed-group"):
                yield from _row("outcome", FieldArea(CRITERION_SPECS["outcome"], id="ed-f-outcome"), tall=True)
            yield from _row(
                "weight",
                FieldInput(CRITERION_SPECS["weight"], id="ed-f-weight", placeholder="1"),
                "default 1; < 0 = penalty",
            )
            yield from _row(
                "required",
                FieldCheck(CRITERION_SPECS["required"], "unmet fails the sample", False, id="ed-f-required"),
            )
            with Vertical(classes="ed-judge-only ed-group"):
                yield from _row(
                    "operator",
                    FieldSelect(
                        CRITERION_SPECS["operator"],
                        [("correctness", "correctness"), ("contradiction", "contradiction")],
                        Select.NULL,
                        id="ed-f-operator",
                        prompt="correctness (default)",
                    ),
                    "contradiction: met unless contradicted",
                )
            yield from _row(
                "min_score",
                FieldInput(CRITERION_SPECS["min_score"], id="ed-f-min_score"),
                " ",
                hint_id="ed-f-min_score-hint",
            )
            yield ScoreRangesEditor(id="ed-ranges", classes="ed-judge-only ed-section")
            with Vertical(id="ed-check", classes="ed-check-only ed-section"):
                yield Static("", id="ed-check-title", classes="ed-section-title")
                yield Static("Choose a check type above.", id="ed-check-none", classes="ed-hint-line")
                yield from self._check_params()
                yield from _row(
                    "timeout",
                    FieldInput(CHECK_SPECS["timeout"], id="ed-c-timeout", placeholder="2"),
                    "seconds",
                )
            yield from _row(
                "tags",
                FieldInput(CRITERION_SPECS["tags"], id="ed-f-tags", placeholder="comma, separated"),
            )
            yield Static("", id="ed-form-problems", classes="ed-problems", markup=False)

    def _check_params(self) -> ComposeResult:
        with Vertical(id="ed-check-keywords", classes="ed-group"):
            yield from _row(
                "mode",
                FieldSelect(KEYWORDS_MODE, [("forbidden: 1 − fraction present", "forbidden"),
                                            ("required: fraction present", "required")],
                            "forbidden", id="ed-c-mode", allow_blank=False),
            )
            yield from _row("keywords", FieldArea(CHECK_SPECS["words"], id="ed-c-words"), tall=True)
            for key in ("case_sensitive", "whole_words"):
                spec = CHECK_SPECS[key]
                yield from _row(spec.label, FieldCheck(spec, "", False, id=f"ed-c-{key}"))
        for check_type, keys in CHECK_FIELDS.items():
            if check_type == "keywords":
                continue
            with Vertical(id=f"ed-check-{check_type}", classes="ed-group"):
                for key in keys:
                    spec = CHECK_SPECS[key]
                    if spec.kind == "bool":
                        yield from _row(spec.label, FieldCheck(spec, "", bool(spec.default), id=f"ed-c-{key}"))
                    elif spec.kind == "json":
                        yield from _row(spec.label, FieldArea(spec, id=f"ed-c-{key}"), tall=True)
                    else:
                        yield from _row(spec.label, FieldInput(spec, id=f"ed-c-{key}"))

    def value_for(self, widget: Widget) -> Any:
        """The document's current value for ``widget``, as the control shows it."""
        spec: FieldSpec = widget.spec  # type: ignore[attr-defined]
        data = self.data or {}
        check = data.get("check") if isinstance(data.get("check"), dict) else {}
        if spec.scope == "check-type":
            t = check_type_of(data)
            return "judge" if t is None else (t if t in CHECK_TYPES else None)
        if spec.scope == "keywords-mode":
            return keywords_mode(data)
        if spec.scope == "criterion":
            return display_value(spec, data.get(spec.key))
        if spec.scope == "check":
            if spec.kind == "words":
                return display_value(spec, check.get(keywords_mode(data)))
            if spec.kind == "bool":
                return bool(check.get(spec.key, spec.default))
            return display_value(spec, check.get(spec.key))
        if spec.scope in ("range-text", "range-lower"):
            lower = range_lower(data, spec.row)
            if lower is None:
                return None
            return str(lower) if spec.scope == "range-lower" else str((data.get("score_ranges") or {}).get(lower, ""))
        return None


# ---------------------------------------------------------------------------
# rubric form

RUBRIC_SPECS: dict[str, FieldSpec] = {
    "name": FieldSpec("rubric", "name", "text", "name", required=True),
    "description": FieldSpec("rubric", "description", "outcome", "description"),
    "pass_threshold": FieldSpec("rubric", "pass_threshold", "float", "pass threshold", minimum=0, maximum=1),
    "on_error": FieldSpec("rubric", "on_error", "choice", "on error"),
}
JUDGE_SPECS: dict[str, FieldSpec] = {
    "model": FieldSpec("judge", "model", "model", "model"),
    "base_url": FieldSpec("judge", "base_url", "text", "base url"),
    "temperature": FieldSpec("judge", "temperature", "float", "temperature", minimum=0, maximum=2),
    "timeout": FieldSpec("judge", "timeout", "float", "timeout", above=0, maximum=3600),
    "max_retries": FieldSpec("judge", "max_retries", "int", "max retries", minimum=0, maximum=20),
    "concurrency": FieldSpec("judge", "concurrency", "int", "concurrency", minimum=1, maximum=256),
    "mode": FieldSpec("judge", "mode", "choice", "mode"),
}


class RubricForm(VerticalScroll):
    """Rubric-level settings: name, description, threshold, error policy, judge."""

    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="ed-rubric-message", classes="ed-problems", markup=False)
        yield Static("[b]rubric[/b]", classes="ed-section-title")
        yield from _row("name", FieldInput(RUBRIC_SPECS["name"], id="ed-r-name", placeholder="required, e.g. support-reply"))
        yield from _row("description", FieldArea(RUBRIC_SPECS["description"], id="ed-r-description"), tall=True)
        yield from _row(
            "threshold",
            FieldInput(RUBRIC_SPECS["pass_threshold"], id="ed-r-pass_threshold", placeholder="0.8"),
            "pass: score ≥ this and every required met",
        )
        yield from _row(
            "on error",
            FieldSelect(RUBRIC_SPECS["on_error"], [("error", "error"), ("ignore", "ignore")], Select.NULL,
                        id="ed-r-on_error", prompt="error (default)"),
            "ignore: leave errored criteria out",
        )
        yield Static("[b]judge[/b] [dim]the CLI's --judge / --base-url override these[/dim]", classes="ed-section-title")
        yield from _row("model", FieldInput(JUDGE_SPECS["model"], id="ed-j-model", placeholder="provider:model, e.g. openai:gpt-4o-mini"))
        yield from _row("base url", FieldInput(JUDGE_SPECS["base_url"], id="ed-j-base_url", placeholder="any OpenAI-compatible server"))
        yield from _row("temperature", FieldInput(JUDGE_SPECS["temperature"], id="ed-j-temperature", placeholder="0"), "0-2")
        yield from _row("timeout", FieldInput(JUDGE_SPECS["timeout"], id="ed-j-timeout", placeholder="60"), "seconds per call")
        yield from _row("max retries", FieldInput(JUDGE_SPECS["max_retries"], id="ed-j-max_retries", placeholder="3"))
        yield from _row("concurrency", FieldInput(JUDGE_SPECS["concurrency"], id="ed-j-concurrency", placeholder="8"), "calls at once")
        yield from _row(
            "mode",
            FieldSelect(JUDGE_SPECS["mode"], [("per_criterion", "per_criterion"), ("batch", "batch")], Select.NULL,
                        id="ed-j-mode", prompt="per_criterion (default)"),
            "batch: one call per sample",
        )

    def value_for(self, widget: Widget) -> Any:
        spec: FieldSpec = widget.spec  # type: ignore[attr-defined]
        if spec.scope == "rubric":
            return display_value(spec, self.data.get(spec.key))
        judge = self.data.get("judge") if isinstance(self.data.get("judge"), dict) else {}
        return display_value(spec, judge.get(spec.key))
