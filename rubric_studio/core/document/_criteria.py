"""Adding, deleting, duplicating and moving the criteria of a rubric document.

In a block-style list these work on the text's lines (:mod:`~rubric_studio.core.document._layout`),
so a criterion's own comments travel with it and section headers stay in place; otherwise
(flow style, an empty list, odd indentation) they edit through ruamel.
"""

from __future__ import annotations

from typing import Any

from rubric_studio.core.document._keys import set_key
from rubric_studio.core.document._layout import (
    CriteriaLayout,
    find_layout,
    insert_lines,
    is_comment,
    render_item,
)
from rubric_studio.core.document._nodes import criteria_seq
from rubric_studio.core.document._schema import CRITERION_ORDER, NEW_OUTCOME, RUBRIC_ORDER, EditError
from rubric_studio.core.document._style import plain, styled
from rubric_studio.core.rubric import unique_id

__all__ = ["CriteriaListEdits"]


class CriteriaListEdits:
    """The criteria-list edits of :class:`~rubric_studio.core.document._document.RubricDocument`.

    A mixin: it uses the document's ``_text``, ``_read``, ``_edit``, ``_commit``,
    ``_roundtrip``, ``transaction``, ``criteria_count``, ``criterion_ids`` and
    ``set_criterion_field``.
    """

    def _layout(self) -> CriteriaLayout | None:
        """The text layout of a block-style criteria list, or None (flow style, empty ...)."""
        data = self._read()
        return find_layout(data, criteria_seq(data), self._text)

    def _unique_id(self, wanted: str) -> str:
        return unique_id(wanted, set(self.criterion_ids()))

    def _checked_index(self, index: int) -> int:
        """The number of criteria; IndexError when ``index`` is not one of them."""
        count = self.criteria_count
        if not 0 <= index < count:
            raise IndexError(f"no criterion {index} (the rubric has {count})")
        return count

    def add_criterion(self, data: dict[str, Any] | None = None, index: int | None = None) -> int:
        """Insert a criterion (default: a new judge criterion at the end); returns its index."""
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        if data is None:
            data = {"id": self._unique_id("new-criterion"), "outcome": NEW_OUTCOME}
        ordered = {k: data[k] for k in CRITERION_ORDER if k in data}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        read = self._read()
        if not isinstance(read, CommentedMap):
            raise EditError("the rubric is not a mapping; fix the YAML first")
        criteria = read.get("criteria")
        count = len(criteria) if isinstance(criteria, CommentedSeq) else 0
        position = count if index is None else max(0, min(index, count))
        item = styled(ordered, indent=4)
        layout = self._layout() if isinstance(criteria, CommentedSeq) and criteria else None
        if layout is not None:
            rendered = [line[:-1] + layout.newline if line.endswith("\n") else line
                        for line in render_item(self._roundtrip.dump, item, layout.column)]
            self._commit(insert_lines(layout, position, rendered))
            return position

        def mutate(data_: Any) -> None:
            seq = data_.get("criteria")
            if not isinstance(seq, CommentedSeq):
                set_key(data_, "criteria", [], RUBRIC_ORDER, indent=2)
                seq = data_["criteria"]
            if not seq:
                seq.fa.set_block_style()
            seq.insert(position, item)

        self._edit(mutate)
        return position

    def delete_criterion(self, index: int) -> None:
        """Remove criterion ``index`` with the comments written directly above it."""
        count = self._checked_index(index)
        layout = self._layout()
        if layout is None or count == 1:

            def mutate(data: Any) -> None:
                seq = criteria_seq(data)
                del seq[index]
                if not seq:
                    seq.fa.set_flow_style()

            self._edit(mutate)
            return
        lines = layout.lines
        remove = set(range(layout.starts[index], layout.ends[index]))
        candidates = []
        if index + 1 < count:
            candidates.append(range(layout.ends[index], layout.starts[index + 1]))
        if index > 0:
            candidates.append(range(layout.ends[index - 1], layout.starts[index]))
        for span in candidates:
            if not any(is_comment(lines[n]) for n in span):
                remove.update(span)
                break
        self._commit(layout.join([line for n, line in enumerate(lines) if n not in remove]))

    def duplicate_criterion(self, index: int) -> int:
        """Copy criterion ``index`` right after itself with a new id (``tone-copy``); returns its index."""
        self._checked_index(index)
        original = criteria_seq(self._read())[index]
        has_id = isinstance(original, dict) and "id" in original
        new_id = self._unique_id(f"{original['id']}-copy") if has_id else None
        layout = self._layout()
        with self.transaction():
            if layout is not None:
                self._commit(insert_lines(layout, index + 1, layout.item(index)))
            else:
                copy = plain(original)

                def mutate(data: Any) -> None:
                    criteria_seq(data).insert(index + 1, styled(copy, indent=4))

                self._edit(mutate)
            if new_id is not None:
                self.set_criterion_field(index + 1, "id", new_id)
        return index + 1

    def move_criterion(self, index: int, delta: int) -> int:
        """Move criterion ``index`` by ``delta`` places (clamped); returns its new index."""
        count = self._checked_index(index)
        target = max(0, min(count - 1, index + delta))
        if target == index:
            return index
        layout = self._layout()
        if layout is None:

            def mutate(data: Any) -> None:
                seq = criteria_seq(data)
                seq.insert(target, seq.pop(index))

            self._edit(mutate)
            return target
        order = list(range(count))
        order.insert(target, order.pop(index))
        out = layout.lines[: layout.starts[0]]
        for position, source in enumerate(order):
            if position:
                out += layout.separator(position)
            out += layout.chunk(source)
        out += layout.lines[layout.ends[-1] :]
        self._commit(layout.join(out))
        return target
