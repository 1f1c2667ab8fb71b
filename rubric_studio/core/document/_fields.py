"""Field edits of a rubric document: a criterion's keys, its check and score ranges, the
rubric's top-level keys and its ``judge:`` block.

Each edit goes through ruamel (:mod:`~rubric_studio.core.document._roundtrip`), keeps the
comments around the key it changes (:mod:`~rubric_studio.core.document._keys`), and returns
whether the text changed.
Consecutive edits of one field coalesce into one undo step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubric_studio.core.checks import CHECK_TYPES
from rubric_studio.core.document._keys import append_tail, delete_key, set_key, trailing_lines
from rubric_studio.core.document._nodes import criteria_seq, criterion_map, item_indent
from rubric_studio.core.document._schema import (
    CHECK_DEFAULTS,
    CHECK_FIELDS,
    CHECK_ORDER,
    CRITERION_ORDER,
    JUDGE_ONLY,
    JUDGE_ORDER,
    RUBRIC_ORDER,
    EditError,
)
from rubric_studio.core.document._style import styled

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml.comments import CommentedMap

__all__ = ["FieldEdits"]


def _make_judged(mapping: CommentedMap) -> None:
    """Turn a check criterion into a judge criterion with an empty ``outcome`` to fill in."""
    if "check" not in mapping:
        return  # already judged; a missing or misspelt outcome stays the user's to fix
    orphan = trailing_lines(mapping, "check")
    position = list(mapping.keys()).index("check")
    del mapping["check"]
    if "outcome" not in mapping:
        mapping.insert(position, "outcome", "")
    append_tail(mapping, "outcome", orphan)


#: The assertions of a json_path check, exactly one of which it holds.
_JSON_PATH_ASSERTIONS = ("equals", "exists", "matches", "value_type")


def _make_check(mapping: CommentedMap, check_type: str, indent: int) -> None:
    """Make the criterion a ``check_type`` check, dropping judge-only keys and foreign parameters."""
    from ruamel.yaml.comments import CommentedMap

    old = mapping.get("check")
    if isinstance(old, CommentedMap) and old.get("type") == check_type:
        return
    orphan = ""
    for key in JUDGE_ONLY:
        orphan += delete_key(mapping, key)
    keep = set(CHECK_FIELDS[check_type]) | {"timeout"}
    if isinstance(old, CommentedMap):
        old["type"] = styled(check_type, old.get("type"))
        for key in list(old.keys()):
            if key not in keep and key != "type":
                delete_key(old, key)
        if len(old) == 1:
            for key, value in CHECK_DEFAULTS.get(check_type, {}).items():
                set_key(old, key, value, CHECK_ORDER, indent=indent + 2)
    else:
        new = CommentedMap([("type", check_type), *CHECK_DEFAULTS.get(check_type, {}).items()])
        set_key(mapping, "check", new, CRITERION_ORDER, indent=indent)
    append_tail(mapping, "check", orphan)


def _set_band(mapping: CommentedMap, index: int, lower: int, text: str, indent: int) -> None:
    """Set the score band at ``lower`` of criterion ``index`` (its mapping), creating ``score_ranges``."""
    from ruamel.yaml.comments import CommentedMap

    ranges = mapping.get("score_ranges")
    if not isinstance(ranges, CommentedMap):
        if "check" in mapping:
            raise EditError(f"criteria[{index}] is a check; score ranges apply to judge criteria")
        set_key(mapping, "score_ranges", {lower: text}, CRITERION_ORDER, indent=indent)
        return
    if lower in ranges:
        ranges[lower] = styled(text, ranges[lower], indent=indent + 2)
        return
    keys = [k for k in ranges if isinstance(k, int)]
    # insert after the last smaller key (keys may be out of order in the file)
    order = list(ranges.keys())
    smaller = [order.index(k) for k in keys if k < lower]
    position = max(smaller) + 1 if smaller else 0
    ranges.insert(position, lower, styled(text, indent=indent + 2))


class FieldEdits:
    """The field edits of :class:`~rubric_studio.core.document._document.RubricDocument`.

    A mixin: it uses the document's ``_text``, ``_edit``, ``transaction`` and ``criterion_data``.
    """

    def set_criterion_field(self, index: int, key: str, value: Any) -> bool:
        """Set one key of criterion ``index`` (``None`` deletes it). True if the text changed."""
        before = self._text

        def mutate(data: Any) -> None:
            criteria = criteria_seq(data)
            if not -len(criteria) <= index < len(criteria):
                raise IndexError(f"no criterion {index} (the rubric has {len(criteria)})")
            item = criteria[index]
            if isinstance(item, str) and key == "outcome" and value is not None:
                criteria[index] = styled(value, item, indent=item_indent(data, index))
                return
            if isinstance(item, str) and value is None:
                return
            mapping = criterion_map(data, index)
            set_key(mapping, key, value, CRITERION_ORDER, indent=item_indent(data, index))

        self._edit(mutate, coalesce=("criterion", index, key))
        return self._text != before

    def append_criterion_items(self, index: int, key: str, items: list[Any]) -> bool:
        """Append ``items`` to criterion ``index``'s list ``key`` (e.g. ``examples``), creating it when
        absent. The items already there stay exactly as written (comments, quoting), and comment
        lines after the list stay after it. True if the text changed."""
        from ruamel.yaml.comments import CommentedSeq

        before = self._text

        def mutate(data: Any) -> None:
            mapping = criterion_map(data, index)
            indent = item_indent(data, index)
            seq = mapping.get(key)
            if seq is None or (isinstance(seq, CommentedSeq) and not seq):
                set_key(mapping, key, list(items), CRITERION_ORDER, indent=indent)
                return
            if not isinstance(seq, CommentedSeq):
                raise EditError(f"criteria[{index}].{key} is not a list; fix it in the YAML view")
            tail = "" if seq.fa.flow_style() else trailing_lines(seq, len(seq) - 1, cut=True)
            for item in items:
                seq.append(styled(item, indent=indent + 2))
            if seq.fa.flow_style() and any(isinstance(item, dict | list) for item in seq):
                seq.fa.set_block_style()
            append_tail(seq, len(seq) - 1, tail)

        self._edit(mutate)
        return self._text != before

    def set_check_field(self, index: int, key: str, value: Any) -> bool:
        """Set one parameter of criterion ``index``'s check (``None`` deletes it)."""
        from ruamel.yaml.comments import CommentedMap

        if key == "type":
            return self.set_check_type(index, value)
        before = self._text

        def mutate(data: Any) -> None:
            mapping = criterion_map(data, index)
            check = mapping.get("check")
            if not isinstance(check, CommentedMap):
                raise EditError(f"criteria[{index}] has no check; choose a check type first")
            if value is not None and check.get("type") == "json_path" and key in _JSON_PATH_ASSERTIONS:
                # a json_path check has one assertion: the one a new check started with (exists:
                # true) gives way to the one the user fills in, instead of making it invalid
                defaults = CHECK_DEFAULTS.get("json_path", {})
                for other in _JSON_PATH_ASSERTIONS:
                    if other != key and other in defaults and check.get(other) == defaults[other]:
                        delete_key(check, other)
            set_key(check, key, value, CHECK_ORDER, indent=item_indent(data, index) + 2)

        self._edit(mutate, coalesce=("check", index, key))
        return self._text != before

    def set_check_type(self, index: int, check_type: str | None) -> bool:
        """Make criterion ``index`` a check of ``check_type``, or a judge criterion (``None``).

        Judge-only keys (outcome, operator, score_ranges) go when it becomes a check;
        parameters of the old check type that the new one does not have go too.
        Turning a check into a judge criterion adds an empty ``outcome`` to fill in;
        a criterion that has no ``check`` is judged already and is left as it is.
        """
        if check_type is not None and check_type not in CHECK_TYPES:
            raise EditError(f"unknown check type {check_type!r}; expected one of: {', '.join(CHECK_TYPES)}")
        before = self._text

        def mutate(data: Any) -> None:
            mapping = criterion_map(data, index)
            if check_type is None:
                _make_judged(mapping)
            else:
                _make_check(mapping, check_type, item_indent(data, index))

        self._edit(mutate, coalesce=("check-type", index))
        return self._text != before

    # -- score ranges --------------------------------------------------------
    def set_score_range(self, index: int, lower: int, text: str | None) -> bool:
        """Set the band starting at ``lower`` (0-10) of criterion ``index``; ``None`` removes it."""
        if text is None:
            return self.remove_score_range(index, lower)
        if isinstance(lower, bool) or not isinstance(lower, int) or not 0 <= lower <= 10:
            raise EditError(f"score range lower bounds are integers from 0 to 10, got {lower!r}")
        before = self._text

        def mutate(data: Any) -> None:
            _set_band(criterion_map(data, index), index, lower, text, item_indent(data, index))

        self._edit(mutate, coalesce=("score-range", index, lower))
        return self._text != before

    def remove_score_range(self, index: int, lower: int) -> bool:
        """Remove the band at ``lower``; removing the last band removes ``score_ranges``."""
        from ruamel.yaml.comments import CommentedMap

        before = self._text

        def mutate(data: Any) -> None:
            mapping = criterion_map(data, index)
            ranges = mapping.get("score_ranges")
            if not isinstance(ranges, CommentedMap) or lower not in ranges:
                return
            if len(ranges) == 1:
                delete_key(mapping, "score_ranges")
            else:
                delete_key(ranges, lower)

        self._edit(mutate)
        return self._text != before

    def move_score_range(self, index: int, old_lower: int, new_lower: int) -> bool:
        """Change a band's lower bound, keeping its text (one undo step)."""
        if old_lower == new_lower:
            return False
        data = self.criterion_data(index)
        ranges = data.get("score_ranges") or {}
        if old_lower not in ranges:
            raise EditError(f"criteria[{index}] has no score range at {old_lower}")
        if new_lower in ranges:
            raise EditError(f"there is already a score range at {new_lower}")
        with self.transaction():
            self.set_score_range(index, new_lower, ranges[old_lower])
            self.remove_score_range(index, old_lower)
        return True

    # -- rubric-level fields -------------------------------------------------
    def set_rubric_field(self, key: str, value: Any) -> bool:
        """Set a top-level key (name, description, pass_threshold, on_error ...); ``None`` deletes."""
        from ruamel.yaml.comments import CommentedMap

        if key == "criteria":
            raise EditError("edit criteria with the criterion methods")
        before = self._text

        def mutate(data: Any) -> None:
            if not isinstance(data, CommentedMap):
                raise EditError("the rubric is not a mapping; fix the YAML first")
            set_key(data, key, value, RUBRIC_ORDER, indent=2)

        self._edit(mutate, coalesce=("rubric", key))
        return self._text != before

    def set_judge_field(self, key: str, value: Any) -> bool:
        """Set a key of the ``judge:`` block (created when needed; removed when emptied)."""
        from ruamel.yaml.comments import CommentedMap

        before = self._text

        def mutate(data: Any) -> None:
            if not isinstance(data, CommentedMap):
                raise EditError("the rubric is not a mapping; fix the YAML first")
            judge = data.get("judge")
            if not isinstance(judge, CommentedMap):
                if value is None:
                    return
                set_key(data, "judge", {key: value}, RUBRIC_ORDER, indent=2)
                return
            set_key(judge, key, value, JUDGE_ORDER, indent=4)
            if not judge:
                delete_key(data, "judge")

        self._edit(mutate, coalesce=("judge", key))
        return self._text != before
