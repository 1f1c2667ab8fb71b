"""Writing the editor's field edits into the document, and grouping them into undo steps.

:func:`apply_field` writes one parsed field value through the document's public edit
methods; :func:`cross_check` holds the checks a single field cannot make alone (an id
used twice, two bands at one bound). :class:`EditBursts` marks where undo steps begin:
a new *burst* of typing (another field, the user came back to a field, the cursor moved
in the YAML view) always starts a new step, whatever the clock says; within one burst the
document merges the edits of one field as it always does. Nothing here touches Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from rubric_studio.core.document import EditError, RubricDocument
from rubric_studio.tui.editor._fields import FieldSpec
from rubric_studio.tui.editor._specs import keywords_mode, range_keys, range_lower, stored_value

__all__ = ["EditBursts", "apply_field", "cross_check", "document_value"]

T = TypeVar("T")


def document_value(document: RubricDocument, index: int | None, spec: FieldSpec) -> Any:
    """The document's value for ``spec`` now (of criterion ``index`` for a criterion field)."""
    try:
        if spec.of_criterion:
            return None if index is None else stored_value(spec, document.criterion_data(index))
        return stored_value(spec, document.rubric_data())
    except (EditError, IndexError):
        return None


def cross_check(document: RubricDocument, index: int | None, spec: FieldSpec, value: Any) -> str | None:
    """What is wrong with writing ``value`` given the rest of the document; None when nothing."""
    if spec.scope == "criterion" and spec.key == "id" and value is not None:
        for other_index, other in enumerate(document.criterion_ids()):
            if other == value and other_index != index:
                return f"id {value!r} is already used by criterion {other_index + 1}"
    if spec.scope == "range-lower" and value is not None and index is not None:
        data = document.criterion_data(index)
        if value != range_lower(data, spec.row) and value in range_keys(data):
            return f"there is already a band at {value}"
    if spec.scope == "check" and spec.kind == "words" and not value:
        return "add at least one keyword (one per line)"
    return None


def apply_field(document: RubricDocument, index: int | None, spec: FieldSpec, value: Any) -> bool:
    """Write one field (of criterion ``index`` for a criterion field); True if the text changed.

    Raises what the document raises for an edit it refuses (EditError, IndexError, RubricError).
    """
    if spec.scope == "rubric":
        return document.set_rubric_field(spec.key, value)
    if spec.scope == "judge":
        return document.set_judge_field(spec.key, value)
    if index is None:
        return False
    if spec.scope == "criterion":
        return document.set_criterion_field(index, spec.key, value)
    if spec.scope == "check-type":
        return document.set_check_type(index, None if value in (None, "judge") else value)
    if spec.scope == "keywords-mode":
        return _switch_keywords_mode(document, index, value)
    if spec.scope == "check":
        key = keywords_mode(document.criterion_data(index)) if spec.kind == "words" else spec.key
        return document.set_check_field(index, key, value)
    if spec.scope in ("range-text", "range-lower"):
        return _apply_score_range(document, index, spec, value)
    return False


def _switch_keywords_mode(document: RubricDocument, index: int, mode: Any) -> bool:
    """Move a keywords check's words from its ``required`` list to ``forbidden`` or back."""
    data = document.criterion_data(index)
    old = keywords_mode(data)
    if mode is None or mode == old:
        return False
    check = data.get("check") if isinstance(data.get("check"), dict) else {}
    words = check.get(old)
    with document.transaction():
        document.set_check_field(index, old, None)
        document.set_check_field(index, mode, words if words else [])
    return True


def _apply_score_range(document: RubricDocument, index: int, spec: FieldSpec, value: Any) -> bool:
    lower = range_lower(document.criterion_data(index), spec.row)
    if lower is None:
        return False
    if spec.scope == "range-text":
        return document.set_score_range(index, lower, value)
    if value is None or value == lower:
        return False
    return document.move_score_range(index, lower, value)


class EditBursts:
    """Which burst of the user's edits the next one belongs to; a new burst is a new undo step.

    Every edit goes through :meth:`apply` with its *source* (the field, or the YAML view's
    burst number). An edit from another source than the last one, or after anyone else
    changed the document (a structural edit, undo, the app), starts a new undo step;
    :meth:`end` closes the current burst (the user left the field, picked another criterion).
    """

    def __init__(self, document: RubricDocument) -> None:
        self.document = document
        self._source: Hashable | None = None
        self._text_after: str | None = None

    @property
    def source(self) -> Hashable | None:
        """The source of the run still open, None when the next edit starts a new one."""
        return self._source

    def apply(self, source: Hashable, edit: Callable[[], T]) -> T:
        """Run ``edit`` (one write to the document) as part of ``source``'s run."""
        if source != self._source or self.document.text != self._text_after:
            self.document.break_coalescing()
            self._source = source
        try:
            return edit()
        finally:
            self._text_after = self.document.text

    def end(self) -> None:
        """The next edit starts a new undo step, whatever its source."""
        self._source = None
        self._text_after = None
