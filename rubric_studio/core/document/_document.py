"""The round-trip model of one rubric file, for the studio's editor.

A :class:`RubricDocument` holds the file's *text*; every edit turns that text into
new text that differs only where the edit says. Field edits go through ruamel.yaml's
round-trip mode (comments, key order, quoting and folded scalars survive), and the
result is merged back onto the original text line by line, so a file whose
formatting ruamel would not reproduce exactly still changes only around the edit.
Adding, deleting, duplicating and moving criteria work on the text itself, so the
comments written above a criterion travel with it and section headers
(``# --- deterministic ---``) stay where they are.

Undo/redo keep a snapshot of the text per edit; consecutive edits of the same field
(typing) within :attr:`RubricDocument.coalesce_seconds` are one undo step.

Saving is a compare-and-swap: the document remembers what the file held when it last
read or wrote it (:attr:`RubricDocument.disk_state`: size, SHA-256, mtime), and
:meth:`RubricDocument.save` writes only over that version. If someone changed the file
meanwhile, nothing is written and :class:`~rubric_studio.core.atomic.ChangedOnDisk` carries
the disk's text, so the front end asks: merge (:meth:`RubricDocument.merge_disk`), load
the disk version (:meth:`RubricDocument.take_disk`, undoable), or overwrite exactly that
version (``save(replacing=state)``).

This class is the facade; the parts live beside it: the file's look
(:mod:`.doc_style`, :mod:`.doc_keys`), the edit cycle (:mod:`.doc_roundtrip`), the history
(:mod:`.doc_history`), field edits (:mod:`.doc_fields`), criteria-list edits
(:mod:`.doc_criteria`, :mod:`.doc_layout`) and saving (:mod:`.doc_disk`).
No Textual import here: the TUI's editor and any other front end share this model.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import (
    ChangedOnDisk,
    DiskState,
    UnsafeTarget,
    regular_target,
    remove_stale_temps,
)
from rubric_studio.core.document._criteria import CriteriaListEdits
from rubric_studio.core.document._disk import DiskSync
from rubric_studio.core.document._fields import FieldEdits
from rubric_studio.core.document._history import EditHistory, UndoStop
from rubric_studio.core.document._nodes import criteria_seq
from rubric_studio.core.document._roundtrip import RoundTripYaml
from rubric_studio.core.document._schema import (
    CHECK_FIELDS,
    CRITERION_ORDER,
    JUDGE_ORDER,
    RUBRIC_ORDER,
    EditError,
)
from rubric_studio.core.document._style import plain
from rubric_studio.core.files import read_user_file
from rubric_studio.core.loading import lint_rubric, parse_rubric
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.yamlpos import load_with_positions

__all__ = [
    "CHECK_FIELDS",
    "ChangedOnDisk",
    "CRITERION_ORDER",
    "EditError",
    "JUDGE_ORDER",
    "RUBRIC_ORDER",
    "RubricDocument",
    "UndoStop",
]


class RubricDocument(FieldEdits, CriteriaListEdits, DiskSync):
    """One rubric file as text, with structured edits that keep everything else intact."""

    coalesce_seconds: float = 1.5
    """Edits of the same field closer together than this are one undo step."""

    history_limit: int = 500
    """Undo steps kept (the oldest go first)."""

    def __init__(
        self, text: str, path: str | Path, *, disk_text: str | None = None, disk_state: DiskState | None = None
    ):
        self.path = Path(path)
        self._history = EditHistory(text, self)
        self._disk_text = text if disk_text is None else disk_text
        self._seen = DiskState.of_text(self._disk_text) if disk_state is None else disk_state
        self._cache_text: str | None = None
        self._cache_store: dict[str, Any] = {}
        self._roundtrip = RoundTripYaml(self.file, self._bounded_problem)
        self._roundtrip.restyle(text)

    # -- construction --------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, *, allow_syntax_errors: bool = False) -> RubricDocument:
        """Read a rubric file.

        Raises :class:`RubricError` when the file cannot be read or is not YAML
        (with the syntax error's line and column). A file that is YAML but not a
        valid rubric loads: :meth:`problems` lists what to fix.
        """
        source = Path(path)
        try:
            _, info = regular_target(source)  # a FIFO or a device is refused before anything opens it
        except UnsafeTarget as exc:
            raise RubricError([Problem(str(source), None, None, f"cannot open: {exc}")]) from None
        remove_stale_temps(source)  # what a killed save left beside it
        text = read_user_file(source, "rubric", keep_newlines=True)
        state = DiskState.of_text(text, mtime_ns=info.st_mtime_ns if info is not None else 0)
        return cls.from_text(text, source, disk_state=state, allow_syntax_errors=allow_syntax_errors)

    @classmethod
    def from_text(
        cls,
        text: str,
        path: str | Path,
        *,
        disk_text: str | None = None,
        disk_state: DiskState | None = None,
        allow_syntax_errors: bool = False,
    ) -> RubricDocument:
        """A document for ``text`` that will be saved to ``path``.

        ``disk_text`` is what the file holds now (default: ``text``, i.e. not dirty);
        ``disk_state`` its state as read (default: computed from ``disk_text``).
        """
        document = cls(text, path, disk_text=disk_text, disk_state=disk_state)
        if not allow_syntax_errors:
            problem = document.yaml_problem
            if problem is not None:
                raise RubricError([problem])
        return document

    # -- state ---------------------------------------------------------------
    @property
    def text(self) -> str:
        return self._history.text

    @property
    def _text(self) -> str:
        return self._history.text

    @property
    def disk_text(self) -> str:
        """What the file held when this document last read or wrote it (the base of its edits)."""
        return self._disk_text

    @property
    def disk_state(self) -> DiskState:
        """The :class:`DiskState` of :attr:`disk_text`: what :meth:`save` expects to replace."""
        return self._seen

    @property
    def dirty(self) -> bool:
        return self._text != self._disk_text

    @property
    def file(self) -> str:
        """The path as shown in problems (``file:line:col``)."""
        return str(self.path)

    def __repr__(self) -> str:
        return f"RubricDocument({self.file!r}, dirty={self.dirty})"

    # -- validation ----------------------------------------------------------
    @property
    def _cache(self) -> dict[str, Any]:
        """Values derived from the current text; emptied whenever the text changes."""
        if self._cache_text != self._text:
            self._cache_text = self._text
            self._cache_store = {}
        return self._cache_store

    @property
    def yaml_problem(self) -> Problem | None:
        """The YAML syntax error of the current text, or None when it parses."""
        cache = self._cache
        if "yaml_problem" not in cache:
            try:
                load_with_positions(self._text, self.file)
                problem = None
            except RubricError as exc:
                problem = exc.problems[0] if exc.problems else Problem(self.file, None, None, "invalid YAML")
            cache["yaml_problem"] = problem
        return cache["yaml_problem"]

    @property
    def structure_problem(self) -> str | None:
        """Why the structured edits cannot work on the current text (syntax error,
        duplicate key ...), or None when they can."""
        from ruamel.yaml.comments import CommentedMap

        try:
            data = self._read()
        except EditError as exc:
            return str(exc)
        if not isinstance(data, CommentedMap):
            return "the rubric is not a mapping; fix the YAML first"
        return None

    def parse(self) -> Rubric:
        """The validated rubric; raises :class:`RubricError` listing every problem."""
        return parse_rubric(self._text, self.file, base_dir=self.path.resolve().parent)

    def problems(self) -> list[Problem]:
        """Errors (or, for a valid rubric, lint warnings) of the current text."""
        cache = self._cache
        if "problems" in cache:
            return list(cache["problems"])
        try:
            rubric = self.parse()
        except RubricError as exc:
            found = list(exc.problems)
        else:
            _, positions, _ = load_with_positions(self._text, self.file)
            found = lint_rubric(rubric, positions)
        cache["problems"] = found
        return list(found)

    # -- reading -------------------------------------------------------------
    def _read(self) -> Any:
        """ruamel data of the current text (cached; do not mutate)."""
        cache = self._cache
        if "data" not in cache:
            cache["data"] = self._roundtrip.load(self._text)
        return cache["data"]

    def _bounded_problem(self, text: str) -> Problem | None:
        """Why the bounded YAML loader refuses ``text`` (None when it passes).

        ruamel bounds neither aliases nor nesting: it reads only text that passed this check.
        """
        if text == self._text:
            return self.yaml_problem
        try:
            load_with_positions(text, self.file)
        except RubricError as exc:
            return exc.problems[0] if exc.problems else Problem(self.file, None, None, "invalid YAML")
        return None

    @property
    def criteria_count(self) -> int:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        try:
            data = self._read()
        except EditError:
            return 0
        criteria = data.get("criteria") if isinstance(data, CommentedMap) else None
        return len(criteria) if isinstance(criteria, CommentedSeq) else 0

    def criterion_data(self, index: int) -> dict[str, Any]:
        """Criterion ``index`` as plain data; a plain-string criterion is ``{"outcome": text}``."""
        item = criteria_seq(self._read())[index]
        if isinstance(item, str):
            return {"outcome": str(item)}
        if isinstance(item, dict):
            return plain(item)
        return {}

    def criterion_is_plain(self, index: int) -> bool:
        """True when criterion ``index`` is written as a bare string (``- "Mentions X"``)."""
        return isinstance(criteria_seq(self._read())[index], str)

    def criterion_ids(self) -> list[str]:
        """The id of every criterion, as the rubric assigns them (``c1``, ``c2`` ... when absent)."""
        try:
            criteria = criteria_seq(self._read())
        except EditError:
            return []
        explicit: list[str | None] = []
        for item in criteria:
            value = item.get("id") if isinstance(item, dict) else None
            explicit.append(str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None)
        taken = {i for i in explicit if i is not None}
        counter = 0
        ids = []
        for value in explicit:
            if value is None:
                counter += 1
                while f"c{counter}" in taken:
                    counter += 1
                value = f"c{counter}"
                taken.add(value)
            ids.append(value)
        return ids

    def criterion_index(self, criterion_id: str) -> int | None:
        ids = self.criterion_ids()
        return ids.index(criterion_id) if criterion_id in ids else None

    def criterion_line(self, index: int) -> int | None:
        """1-based line of criterion ``index`` in the current text."""
        try:
            criteria = criteria_seq(self._read())
            line, _ = criteria.lc.item(index)
        except (EditError, IndexError, KeyError, TypeError):
            return None
        return line + 1

    def rubric_data(self) -> dict[str, Any]:
        """The rubric's top-level keys as plain data (``criteria`` included)."""
        data = self._read()
        if not isinstance(data, dict):
            raise EditError("the rubric is not a mapping; fix the YAML first")
        return plain(data)

    # -- undo / redo ---------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        return self._history.can_undo

    @property
    def can_redo(self) -> bool:
        return self._history.can_redo

    def _commit(self, new_text: str, coalesce: Any = None, *, outside: str | None = None) -> bool:
        return self._history.commit(new_text, coalesce, outside=outside)

    def transaction(self) -> AbstractContextManager[None]:
        """Group several edits into one undo step; on an exception the text is restored."""
        return self._history.transaction()

    def undo(self) -> bool | UndoStop:
        """Undo one step: True, False (nothing to undo), or :class:`UndoStop` when the step is an
        outside edit reached for the first time (nothing changed; undo again to undo it)."""
        return self._history.undo()

    @property
    def reverted_outside(self) -> str | None:
        """The outside edit the text undoes while that edit is still on disk, or None: saving
        then asks (:meth:`save` raises :class:`ChangedOnDisk`) like any other overwrite."""
        return self._history.reverted_outside

    def redo(self) -> bool:
        return self._history.redo()

    def break_coalescing(self) -> None:
        """Make the next edit its own undo step (e.g. when the user leaves a field)."""
        self._history.break_coalescing()

    # -- edits ---------------------------------------------------------------
    def replace_text(self, text: str) -> bool:
        """Replace the whole text (the raw YAML view); one undo step per burst of typing."""
        changed = self._commit(text, coalesce=("raw",))
        if changed:
            self._roundtrip.restyle(text)
        return changed

    def _base_dump(self) -> str:
        """ruamel's rendering of the current text (the base an edit is merged against)."""
        return self._roundtrip.base(self._text)

    def _edit(self, mutate: Callable[[Any], Any], coalesce: Any = None) -> Any:
        """Load fresh data, mutate it, render, merge onto the text, commit."""
        new_text, result = self._roundtrip.edit(self._text, mutate)
        self._commit(new_text, coalesce)
        return result
