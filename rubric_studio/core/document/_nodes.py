"""Finding a rubric's criteria in ruamel.yaml round-trip data, for the document's edits.

Each refuses, with an :class:`~rubric_studio.core.document._schema.EditError` that says to fix
the YAML, data whose shape no structured edit can work on (a rubric that is not a
mapping, ``criteria`` that is not a list, a criterion that is a number).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubric_studio.core.document._schema import EditError

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

__all__ = ["criteria_seq", "criterion_map", "item_indent"]


def criteria_seq(data: Any) -> CommentedSeq:
    """The ``criteria:`` list of the rubric ``data``."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if not isinstance(data, CommentedMap):
        raise EditError("the rubric is not a mapping; fix the YAML first")
    criteria = data.get("criteria")
    if not isinstance(criteria, CommentedSeq):
        raise EditError("'criteria' is not a list; fix the YAML first")
    return criteria


def criterion_map(data: Any, index: int) -> CommentedMap:
    """Criterion ``index`` as a mapping; a plain string becomes ``{outcome: ...}`` (in ``data``),
    its end-of-line comment moving to the outcome."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.tokens import CommentToken

    criteria = criteria_seq(data)
    if not -len(criteria) <= index < len(criteria):
        raise IndexError(f"no criterion {index} (the rubric has {len(criteria)})")
    item = criteria[index]
    if isinstance(item, CommentedMap):
        return item
    if isinstance(item, str) or item is None:
        mapping = CommentedMap()
        if item is not None:
            mapping["outcome"] = item
        entry = criteria.ca.items.get(index)
        token = entry[0] if entry else None
        criteria[index] = mapping
        if item is not None and isinstance(token, CommentToken):
            entry[0] = None
            mapping.ca.items["outcome"] = [None, None, token, None]
        return mapping
    raise EditError(f"criteria[{index}] is a {type(item).__name__}, not a criterion; fix it in the YAML view")


def item_indent(data: Any, index: int) -> int:
    """The column of the keys of criterion ``index`` (6 when the data does not say)."""
    try:
        _, column = criteria_seq(data).lc.item(index)
        return int(column) + 2
    except Exception:
        return 6
