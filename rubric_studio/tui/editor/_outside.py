"""How an edit made outside the studio meets the field the user is typing in.

The field being typed in is the authority for its own text. An outside edit of *other*
fields merges around it and never rewrites it; an outside edit of *that* field while it holds
the user's typing is a conflict: nothing is merged into the middle of the typing, and saving
asks. :func:`shown_in` reads what a field would show for a given text of the rubric, so the
editor can tell the two cases apart without touching its document.
"""

from __future__ import annotations

import functools
from typing import Any

from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import safe_load
from rubric_studio.tui.editor._fields import FieldSpec
from rubric_studio.tui.editor._specs import field_display

__all__ = ["UNREADABLE", "shown_in"]

UNREADABLE = object()  # the text does not parse, or has no such criterion


def _criteria(data: Any) -> list[Any]:
    items = data.get("criteria") if isinstance(data, dict) else None
    return items if isinstance(items, list) else []


def _criterion_index(items: list[Any], criterion_id: str | None) -> int | None:
    """The index of the criterion with ``criterion_id`` (an explicit id, or ``cN`` when absent)."""
    if criterion_id is None:
        return None
    for index, item in enumerate(items):
        value = item.get("id") if isinstance(item, dict) else None
        if value is not None and str(value) == criterion_id:
            return index
        if value is None and criterion_id == f"c{index + 1}":
            return index
    return None


@functools.lru_cache(maxsize=4)
def _load(text: str, file: str) -> Any:
    """The parsed ``text`` (read only), or UNREADABLE. Cached: an outside edit asks about the
    same base and disk texts more than once (before it is merged, and after)."""
    try:
        data = safe_load(text, file)
    except RubricError:
        return UNREADABLE
    return data if isinstance(data, dict) else UNREADABLE


def shown_in(text: str, file: str, spec: FieldSpec, criterion_id: str | None, index: int | None) -> Any:
    """What the control for ``spec`` shows when the rubric's text is ``text``: of the criterion
    ``criterion_id`` (else the one at ``index``) for a criterion field, else of the rubric."""
    data = _load(text, file)
    if data is UNREADABLE:
        return UNREADABLE
    if not spec.of_criterion:
        return field_display(spec, data)
    items = _criteria(data)
    found = _criterion_index(items, criterion_id)
    if found is None:
        found = index
    if found is None or not 0 <= found < len(items):
        return UNREADABLE
    item = items[found]
    return field_display(spec, item if isinstance(item, dict) else {"outcome": str(item)})
