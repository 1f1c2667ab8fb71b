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

No Textual import here: the TUI's editor and any other front end share this model.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.error import YAMLError as RuamelYAMLError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.tokens import CommentToken

from rubric_studio.core.atomic import (
    ChangedOnDisk,
    DiskState,
    UnsafeTarget,
    regular_target,
    remove_stale_temps,
    write_text_safely,
)
from rubric_studio.core.checkspec import CHECK_TYPES
from rubric_studio.core.files import read_user_file, read_user_file_state
from rubric_studio.core.loading import lint_rubric, parse_rubric
from rubric_studio.core.merge import Merge, merge3
from rubric_studio.core.problems import Problem, RubricError, RubricStudioError
from rubric_studio.core.rubric import JudgeSettings, Rubric, unique_id
from rubric_studio.core.yaml_core import misread_by_yaml11
from rubric_studio.core.yamlpos import load_with_positions

__all__ = [
    "CHECK_FIELDS",
    "ChangedOnDisk",
    "CRITERION_ORDER",
    "EditError",
    "JUDGE_ORDER",
    "RUBRIC_ORDER",
    "RubricDocument",
]

CRITERION_ORDER = ("id", "outcome", "check", "weight", "required", "operator", "score_ranges", "min_score", "tags")
RUBRIC_ORDER = ("name", "description", "pass_threshold", "on_error", "judge", "criteria")
JUDGE_ORDER = tuple(JudgeSettings.model_fields)
CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    "length": ("min_chars", "max_chars", "min_words", "max_words"),
    "keywords": ("required", "forbidden", "case_sensitive", "whole_words"),
    "regex": ("pattern", "expect_match", "flags"),
    "json": ("schema",),
    "python": ("function",),
    "command": ("command",),
}
"""Parameters of each check type, in the order the editor shows (and writes) them."""
_CHECK_ORDER = ("type", *dict.fromkeys(k for fields in CHECK_FIELDS.values() for k in fields), "timeout")
_JUDGE_ONLY = ("outcome", "operator", "score_ranges")
_CHECK_DEFAULTS: dict[str, dict[str, Any]] = {"length": {"max_words": 200}}
_NEW_OUTCOME = "Describe what a good answer does"
_RULER = re.compile(r"^\s*#\s*([-=*#~_+])\1{2,}")
_WIDE = 10**9


class EditError(RubricStudioError, ValueError):
    """An edit that cannot be applied to the document as it is (the text is left unchanged)."""


# ---------------------------------------------------------------------------
# helpers


def _yaml(mapping: int = 2, sequence: int = 4, offset: int = 2) -> YAML:
    yaml = YAML()  # round-trip
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.preserve_quotes = True
    yaml.width = _WIDE
    return yaml


def _plain(value: Any) -> Any:
    """ruamel's round-trip objects as plain Python values."""
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def _same(old: Any, new: Any) -> bool:
    """Equal values of the same kind (``1`` is not ``True``, ``2`` is not ``2.0``)."""
    old, new = _plain(old), _plain(new)
    return type(old) is type(new) and old == new


def _fold_positions(text: str, width: int) -> list[int]:
    """Where a folded (``>``) scalar breaks ``text`` into lines of at most ``width``."""
    candidates = [
        p
        for p, ch in enumerate(text)
        if ch == " " and 0 < p < len(text) - 1 and text[p - 1] != " " and text[p + 1] != " "
    ]
    folds: list[int] = []
    start = 0
    previous: int | None = None
    for position in [*candidates, len(text)]:
        if position - start > width and previous is not None and previous > start:
            folds.append(previous)
            start = previous + 1
        previous = position
    return folds


def _fold_width(old: FoldedScalarString, indent: int) -> int:
    folds = getattr(old, "fold_pos", None) or []
    text = str(old)
    if folds:
        bounds = [-1, *folds, len(text)]
        return max(max(bounds[k + 1] - bounds[k] - 1 for k in range(len(bounds) - 1)), 40)
    return max(78 - indent, 40)


def _styled_str(value: str, old: Any, indent: int) -> str:
    if isinstance(old, str) and str(old) == value:
        return old
    if "\n" in value.rstrip("\n") or (value.endswith("\n") and isinstance(old, LiteralScalarString)):
        return LiteralScalarString(value)
    if isinstance(old, FoldedScalarString):
        new = FoldedScalarString(value)
        new.fold_pos = _fold_positions(value, _fold_width(old, indent))
        return new
    if isinstance(old, LiteralScalarString):
        return LiteralScalarString(value)
    if isinstance(old, SingleQuotedScalarString):
        return SingleQuotedScalarString(value)
    if isinstance(old, DoubleQuotedScalarString) or misread_by_yaml11(value):
        return DoubleQuotedScalarString(value)
    return value


def _styled(value: Any, old: Any = None, *, indent: int = 4, flow: bool = False) -> Any:
    """``value`` as a ruamel node that looks like ``old`` did (quoting, flow or block)."""
    if old is not None and _same(old, value):
        return old
    if isinstance(value, str):
        return _styled_str(value, old, indent)
    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            previous = old.get(key) if isinstance(old, dict) else None
            mapping[key] = _styled(item, previous, indent=indent + 2, flow=isinstance(item, list))
        if isinstance(old, CommentedMap) and old.fa.flow_style():
            mapping.fa.set_flow_style()
        elif isinstance(old, CommentedMap):
            mapping.fa.set_block_style()
        return mapping
    if isinstance(value, list | tuple):
        seq = CommentedSeq(_styled(item, indent=indent + 2) for item in value)
        use_flow = old.fa.flow_style() if isinstance(old, CommentedSeq) else flow
        if use_flow and all(not isinstance(item, dict | list) for item in value):
            seq.fa.set_flow_style()
        else:
            seq.fa.set_block_style()
        return seq
    return value


def _orphan(container: Any, key: Any, *, cut: bool = False) -> str:
    """Comment and blank lines ruamel stored with ``container[key]`` that follow its line
    (removed from there with ``cut``, for moving them elsewhere).

    ruamel keeps the lines after an end-of-line comment in that comment's token, so
    deleting the key would delete them too; they belong to whatever follows.
    """
    text = ""
    value = container[key]
    if isinstance(value, CommentedMap) and value and not value.fa.flow_style():
        text += _orphan(value, list(value.keys())[-1], cut=cut)
    elif isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        text += _orphan(value, len(value) - 1, cut=cut)
    slot = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.get(key)
    token = entry[slot] if entry and len(entry) > slot else None
    if isinstance(token, CommentToken) and "\n" in token.value:
        end = token.value.index("\n") + 1
        text += token.value[end:]
        if cut:
            token.value = token.value[:end]
    return text


def _append_tail(container: Any, key: Any, text: str) -> None:
    """Emit ``text`` (whole lines) right after the value of ``container[key]``."""
    if not text:
        return
    value = container[key]
    if isinstance(value, CommentedMap) and value and not value.fa.flow_style():
        _append_tail(value, list(value.keys())[-1], text)
        return
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        _append_tail(value, len(value) - 1, text)
        return
    slot = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.setdefault(key, [None, None, None, None])
    while len(entry) <= slot:
        entry.append(None)
    token = entry[slot]
    if isinstance(token, CommentToken):
        token.value = (token.value if token.value.endswith("\n") else token.value + "\n") + text
    else:
        entry[slot] = CommentToken("\n" + text, CommentMark(0), None)


def _delete_key(mapping: CommentedMap, key: Any) -> str:
    """Delete ``key``; the comment lines that followed it move to the key before it.

    Returns those lines when there is no key before to carry them.
    """
    if key not in mapping:
        return ""
    keys = list(mapping.keys())
    orphan = _orphan(mapping, key)
    del mapping[key]
    position = keys.index(key)
    if orphan and position > 0:
        _append_tail(mapping, keys[position - 1], orphan)
        return ""
    return orphan


def _set_key(mapping: CommentedMap, key: Any, value: Any, order: tuple[Any, ...], *, indent: int) -> None:
    """Set (or insert in canonical order) ``key``; ``None`` deletes it."""
    if value is None:
        _delete_key(mapping, key)
        return
    if key in mapping:
        mapping[key] = _styled(value, mapping[key], indent=indent, flow=isinstance(value, list))
        return
    styled = _styled(value, indent=indent, flow=isinstance(value, list))
    rank = {name: position for position, name in enumerate(order)}
    mine = rank.get(key, len(order))
    keys = list(mapping.keys())
    position = 0
    for index, existing in enumerate(keys):
        if rank.get(existing, len(order)) <= mine:
            position = index + 1
    if mine == len(order):
        position = len(keys)
    mapping.insert(position, key, styled)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _merge3(original: str, base: str, new: str) -> str:
    """Apply the change ``base`` → ``new`` onto ``original`` (a line-based diff3).

    ``base`` is ruamel's rendering of ``original`` before the edit, ``new`` after it.
    Where ruamel renders the user's text differently (``base`` ≠ ``original``) the
    user's lines are kept, unless the edit itself rewrote those very lines.
    """
    return merge3(base, new, original).text


@dataclass
class _Layout:
    """Where each criterion of a block-style ``criteria:`` sequence sits in the text."""

    lines: list[str]
    starts: list[int]  # first line of the chunk (its own comments included)
    dashes: list[int]  # line of the item's "-"
    ends: list[int]  # one past the item's last line
    column: int  # column of the "-"
    added_newline: bool
    newline: str = "\n"

    def chunk(self, index: int) -> list[str]:
        return self.lines[self.starts[index] : self.ends[index]]

    def item(self, index: int) -> list[str]:
        return self.lines[self.dashes[index] : self.ends[index]]

    def separator(self, index: int) -> list[str]:
        """Lines between chunk ``index - 1`` and chunk ``index`` (index ≥ 1)."""
        return self.lines[self.ends[index - 1] : self.starts[index]]

    def blank_separator(self) -> list[str]:
        for index in range(1, len(self.starts)):
            if any(_is_blank(line) for line in self.separator(index)):
                return [self.newline]
        return []

    def join(self, lines: list[str]) -> str:
        text = "".join(lines)
        if self.added_newline and text.endswith(self.newline):
            text = text[: -len(self.newline)]
        return text


# ---------------------------------------------------------------------------


class RubricDocument:
    """One rubric file as text, with structured edits that keep everything else intact."""

    coalesce_seconds: float = 1.5
    """Edits of the same field closer together than this are one undo step."""

    history_limit: int = 500
    """Undo steps kept (the oldest go first)."""

    def __init__(
        self, text: str, path: str | Path, *, disk_text: str | None = None, disk_state: DiskState | None = None
    ):
        self.path = Path(path)
        self._text = text
        self._disk_text = text if disk_text is None else disk_text
        self._seen = DiskState.of_text(self._disk_text) if disk_state is None else disk_state
        self._undo: list[str] = []
        self._redo: list[str] = []
        self._last_key: Any = None
        self._last_time = 0.0
        self._batch_depth = 0
        self._batch_start: str | None = None
        self._cache_text: str | None = None
        self._cache_store: dict[str, Any] = {}
        self._bases: dict[str, str] = {}
        self._style = self._detect_style(text)

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
        return self._text

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
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

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
            cache["data"] = self._load(self._text)
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

    def _load(self, text: str) -> Any:
        problem = self._bounded_problem(text)
        if problem is not None:
            raise EditError(f"{problem}; fix the YAML first")
        try:
            return self._style.load(text)
        except RuamelYAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{self.file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else self.file
            raise EditError(f"{where}: {getattr(exc, 'problem', None) or exc}; fix the YAML first") from None

    def _criteria_seq(self, data: Any) -> CommentedSeq:
        if not isinstance(data, CommentedMap):
            raise EditError("the rubric is not a mapping; fix the YAML first")
        criteria = data.get("criteria")
        if not isinstance(criteria, CommentedSeq):
            raise EditError("'criteria' is not a list; fix the YAML first")
        return criteria

    @property
    def criteria_count(self) -> int:
        try:
            data = self._read()
        except EditError:
            return 0
        criteria = data.get("criteria") if isinstance(data, CommentedMap) else None
        return len(criteria) if isinstance(criteria, CommentedSeq) else 0

    def criterion_data(self, index: int) -> dict[str, Any]:
        """Criterion ``index`` as plain data; a plain-string criterion is ``{"outcome": text}``."""
        item = self._criteria_seq(self._read())[index]
        if isinstance(item, str):
            return {"outcome": str(item)}
        if isinstance(item, dict):
            return _plain(item)
        return {}

    def criterion_is_plain(self, index: int) -> bool:
        """True when criterion ``index`` is written as a bare string (``- "Mentions X"``)."""
        return isinstance(self._criteria_seq(self._read())[index], str)

    def criterion_ids(self) -> list[str]:
        """The id of every criterion, as the rubric assigns them (``c1``, ``c2`` ... when absent)."""
        try:
            criteria = self._criteria_seq(self._read())
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
            criteria = self._criteria_seq(self._read())
            line, _ = criteria.lc.item(index)
        except (EditError, IndexError, KeyError, TypeError):
            return None
        return line + 1

    def rubric_data(self) -> dict[str, Any]:
        """The rubric's top-level keys as plain data (``criteria`` included)."""
        data = self._read()
        if not isinstance(data, dict):
            raise EditError("the rubric is not a mapping; fix the YAML first")
        return _plain(data)

    # -- undo / redo ---------------------------------------------------------
    def _commit(self, new_text: str, coalesce: Any = None) -> bool:
        if new_text == self._text:
            return False
        if self._batch_depth:
            self._text = new_text
            return True
        now = time.monotonic()
        if not (
            coalesce is not None
            and coalesce == self._last_key
            and self._undo
            and now - self._last_time <= self.coalesce_seconds
        ):
            self._undo.append(self._text)
            if len(self._undo) > self.history_limit:
                del self._undo[: len(self._undo) - self.history_limit]
        self._redo.clear()
        self._last_key = coalesce
        self._last_time = now
        self._text = new_text
        return True

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several edits into one undo step; on an exception the text is restored."""
        if self._batch_depth == 0:
            self._batch_start = self._text
        self._batch_depth += 1
        try:
            yield
        except BaseException:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                assert self._batch_start is not None
                self._text = self._batch_start
                self._batch_start = None
            raise
        self._batch_depth -= 1
        if self._batch_depth == 0:
            start, self._batch_start = self._batch_start, None
            assert start is not None
            if start != self._text:
                final, self._text = self._text, start
                self._last_key = None
                self._commit(final)

    def undo(self) -> bool:
        if not self._undo:
            return False
        self._redo.append(self._text)
        self._text = self._undo.pop()
        self._last_key = None
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        self._undo.append(self._text)
        self._text = self._redo.pop()
        self._last_key = None
        return True

    def break_coalescing(self) -> None:
        """Make the next edit its own undo step (e.g. when the user leaves a field)."""
        self._last_key = None

    # -- whole-text edits ----------------------------------------------------
    def replace_text(self, text: str) -> bool:
        """Replace the whole text (the raw YAML view); one undo step per burst of typing."""
        changed = self._commit(text, coalesce=("raw",))
        if changed:
            self._bases.clear()
            self._style = self._detect_style(text)
        return changed

    def save(self, *, replacing: DiskState | None = None) -> str:
        """Write the text atomically over the version of the file last read; returns the text written.

        The file is re-read just before the write. When it holds anything else (an edit
        made outside, a removal), nothing is written: :class:`ChangedOnDisk` carries what
        is on disk now. ``replacing`` is a state the user saw and chose to overwrite: the
        write then goes over exactly that version (and again over nothing else).
        :class:`~rubric_studio.core.atomic.UnsafeTarget` when the path is not a regular file.
        """
        text = self._text
        self._seen = write_text_safely(self.path, text, expect=self._seen if replacing is None else replacing)
        self._disk_text = text
        self._last_key = None
        return text

    def read_disk_state(self) -> tuple[str, DiskState]:
        """The file's text now (exactly as stored) and its state; RubricError when it cannot be read."""

        text, state = read_user_file_state(self.path, "rubric")
        if text is None:
            raise RubricError([Problem(self.file, None, None, "rubric not found: no such file")])
        return text, state

    def read_disk(self) -> str:
        return self.read_disk_state()[0]

    def disk_changed(self) -> bool:
        """True when the file on disk no longer holds :attr:`disk_text`."""
        try:
            return not self.read_disk_state()[1].same_content(self._seen)
        except RubricError:
            return True

    def merge_disk(self, disk_text: str) -> Merge:
        """Three-way merge of the unsaved edits with ``disk_text`` (base: :attr:`disk_text`).

        Nothing changes here; :meth:`take_disk` with the merged text applies it.
        """
        return merge3(self._disk_text, self._text, disk_text)

    def take_disk(self, disk_text: str, state: DiskState, text: str | None = None) -> bool:
        """Base the document on ``disk_text`` (read as ``state``) and show ``text`` (default: ``disk_text``).

        One undo step: the text before is one undo away. True if the text changed.
        """
        self._disk_text = disk_text
        self._seen = state
        self._last_key = None
        changed = self._commit(disk_text if text is None else text)
        if changed:
            self._bases.clear()
            self._style = self._detect_style(self._text)
        self._last_key = None
        return changed

    def reload_from_disk(self) -> bool:
        """Take the file's current content (undoable); True if the text changed."""
        text, state = self.read_disk_state()
        return self.take_disk(text, state)

    # -- the edit machinery --------------------------------------------------
    def _detect_style(self, text: str) -> YAML:
        """The ruamel configuration that reproduces ``text`` best (2/4/2 first)."""
        if self._bounded_problem(text) is not None:  # not YAML (yet) or out of bounds: keep the default
            return _yaml()
        candidates = [(2, 4, 2)]
        try:
            from ruamel.yaml.util import load_yaml_guess_indent

            _, indent, block_seq_indent = load_yaml_guess_indent(text)
            if indent is not None and block_seq_indent is not None:
                candidates.append((indent, indent + block_seq_indent, block_seq_indent))
        except Exception:  # not YAML (yet): keep the default
            return _yaml()
        candidates += [(2, 2, 0), (4, 4, 2), (4, 6, 4)]
        best: tuple[int, YAML, str] | None = None
        for mapping, sequence, offset in dict.fromkeys(candidates):
            yaml = _yaml(mapping, sequence, offset)
            try:
                data = yaml.load(text)
                out = io.StringIO()
                yaml.dump(data, out)
            except Exception:  # duplicate keys and the like: keep the default
                return _yaml()
            rendered = out.getvalue()
            if rendered == text:
                self._remember_base(text, rendered)
                return yaml
            mine, theirs = Counter(text.splitlines()), Counter(rendered.splitlines())
            score = sum(((mine - theirs) + (theirs - mine)).values())
            if best is None or score < best[0]:
                best = (score, yaml, rendered)
        assert best is not None
        self._remember_base(text, best[2])
        return best[1]

    def _dump(self, data: Any) -> str:
        out = io.StringIO()
        self._style.dump(data, out)
        return out.getvalue()

    def _base_dump(self) -> str:
        """ruamel's rendering of the current text (remembered for recent texts: undo goes back)."""
        base = self._bases.get(self._text)
        if base is None:
            base = self._dump(self._load(self._text))
            self._remember_base(self._text, base)
        return base

    def _remember_base(self, text: str, base: str) -> None:
        self._bases[text] = base
        while len(self._bases) > 16:
            del self._bases[next(iter(self._bases))]

    def _edit(self, mutate: Callable[[Any], Any], coalesce: Any = None) -> Any:
        """Load fresh data, mutate it, render, merge onto the text, commit."""
        data = self._load(self._text)
        result = mutate(data)
        rendered = self._dump(data)
        crlf = "\r\n" in self._text
        original = self._text.replace("\r\n", "\n") if crlf else self._text
        new_text = _merge3(original, self._base_dump(), rendered)
        if crlf:
            new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
        self._commit(new_text, coalesce)
        if new_text == rendered:
            self._remember_base(new_text, rendered)  # ruamel renders its own output unchanged
        return result

    def _criterion_map(self, data: Any, index: int, *, create_for: str | None = None) -> CommentedMap:
        """Criterion ``index`` as a mapping; a plain string becomes ``{outcome: ...}``."""
        criteria = self._criteria_seq(data)
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

    def _item_indent(self, data: Any, index: int) -> int:
        try:
            _, column = self._criteria_seq(data).lc.item(index)
            return int(column) + 2
        except Exception:
            return 6

    # -- criterion fields ----------------------------------------------------
    def set_criterion_field(self, index: int, key: str, value: Any) -> bool:
        """Set one key of criterion ``index`` (``None`` deletes it). True if the text changed."""
        before = self._text

        def mutate(data: Any) -> None:
            criteria = self._criteria_seq(data)
            if not -len(criteria) <= index < len(criteria):
                raise IndexError(f"no criterion {index} (the rubric has {len(criteria)})")
            item = criteria[index]
            if isinstance(item, str) and key == "outcome" and value is not None:
                criteria[index] = _styled(value, item, indent=self._item_indent(data, index))
                return
            if isinstance(item, str) and value is None:
                return
            mapping = self._criterion_map(data, index)
            _set_key(mapping, key, value, CRITERION_ORDER, indent=self._item_indent(data, index))

        self._edit(mutate, coalesce=("criterion", index, key))
        return self._text != before

    def append_criterion_items(self, index: int, key: str, items: list[Any]) -> bool:
        """Append ``items`` to criterion ``index``'s list ``key`` (e.g. ``examples``), creating it when
        absent. The items already there stay exactly as written (comments, quoting), and comment
        lines after the list stay after it. True if the text changed."""
        before = self._text

        def mutate(data: Any) -> None:
            mapping = self._criterion_map(data, index)
            indent = self._item_indent(data, index)
            seq = mapping.get(key)
            if seq is None or (isinstance(seq, CommentedSeq) and not seq):
                _set_key(mapping, key, list(items), CRITERION_ORDER, indent=indent)
                return
            if not isinstance(seq, CommentedSeq):
                raise EditError(f"criteria[{index}].{key} is not a list; fix it in the YAML view")
            tail = "" if seq.fa.flow_style() else _orphan(seq, len(seq) - 1, cut=True)
            for item in items:
                seq.append(_styled(item, indent=indent + 2))
            if seq.fa.flow_style() and any(isinstance(item, dict | list) for item in seq):
                seq.fa.set_block_style()
            _append_tail(seq, len(seq) - 1, tail)

        self._edit(mutate)
        return self._text != before

    def set_check_field(self, index: int, key: str, value: Any) -> bool:
        """Set one parameter of criterion ``index``'s check (``None`` deletes it)."""
        if key == "type":
            return self.set_check_type(index, value)
        before = self._text

        def mutate(data: Any) -> None:
            mapping = self._criterion_map(data, index)
            check = mapping.get("check")
            if not isinstance(check, CommentedMap):
                raise EditError(f"criteria[{index}] has no check; choose a check type first")
            _set_key(check, key, value, _CHECK_ORDER, indent=self._item_indent(data, index) + 2)

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
            mapping = self._criterion_map(data, index)
            indent = self._item_indent(data, index)
            old = mapping.get("check")
            if check_type is None:
                if "check" not in mapping:
                    return  # already judged; a missing or misspelt outcome stays the user's to fix
                orphan = _orphan(mapping, "check") if "check" in mapping else ""
                position = list(mapping.keys()).index("check") if "check" in mapping else None
                if "check" in mapping:
                    del mapping["check"]
                if "outcome" not in mapping:
                    if position is not None:
                        mapping.insert(position, "outcome", "")
                    else:
                        _set_key(mapping, "outcome", "", CRITERION_ORDER, indent=indent)
                _append_tail(mapping, "outcome", orphan)
                return
            if isinstance(old, CommentedMap) and old.get("type") == check_type:
                return
            orphan = ""
            for key in _JUDGE_ONLY:
                orphan += _delete_key(mapping, key)
            keep = set(CHECK_FIELDS[check_type]) | {"timeout"}
            if isinstance(old, CommentedMap):
                old["type"] = _styled(check_type, old.get("type"))
                for key in list(old.keys()):
                    if key not in keep and key != "type":
                        _delete_key(old, key)
                if len(old) == 1:
                    for key, value in _CHECK_DEFAULTS.get(check_type, {}).items():
                        _set_key(old, key, value, _CHECK_ORDER, indent=indent + 2)
            else:
                new = CommentedMap([("type", check_type), *_CHECK_DEFAULTS.get(check_type, {}).items()])
                _set_key(mapping, "check", new, CRITERION_ORDER, indent=indent)
            _append_tail(mapping, "check", orphan)

        self._edit(mutate, coalesce=("check-type", index))
        return self._text != before

    def set_score_range(self, index: int, lower: int, text: str | None) -> bool:
        """Set the band starting at ``lower`` (0-10) of criterion ``index``; ``None`` removes it."""
        if text is None:
            return self.remove_score_range(index, lower)
        if isinstance(lower, bool) or not isinstance(lower, int) or not 0 <= lower <= 10:
            raise EditError(f"score range lower bounds are integers from 0 to 10, got {lower!r}")
        before = self._text

        def mutate(data: Any) -> None:
            mapping = self._criterion_map(data, index)
            indent = self._item_indent(data, index)
            ranges = mapping.get("score_ranges")
            if not isinstance(ranges, CommentedMap):
                if "check" in mapping:
                    raise EditError(f"criteria[{index}] is a check; score ranges apply to judge criteria")
                _set_key(mapping, "score_ranges", {lower: text}, CRITERION_ORDER, indent=indent)
                return
            if lower in ranges:
                ranges[lower] = _styled(text, ranges[lower], indent=indent + 2)
                return
            keys = [k for k in ranges if isinstance(k, int)]
            # insert after the last smaller key (keys may be out of order in the file)
            order = list(ranges.keys())
            smaller = [order.index(k) for k in keys if k < lower]
            position = max(smaller) + 1 if smaller else 0
            ranges.insert(position, lower, _styled(text, indent=indent + 2))

        self._edit(mutate, coalesce=("score-range", index, lower))
        return self._text != before

    def remove_score_range(self, index: int, lower: int) -> bool:
        """Remove the band at ``lower``; removing the last band removes ``score_ranges``."""
        before = self._text

        def mutate(data: Any) -> None:
            mapping = self._criterion_map(data, index)
            ranges = mapping.get("score_ranges")
            if not isinstance(ranges, CommentedMap) or lower not in ranges:
                return
            if len(ranges) == 1:
                _delete_key(mapping, "score_ranges")
            else:
                _delete_key(ranges, lower)

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
        if key == "criteria":
            raise EditError("edit criteria with the criterion methods")
        before = self._text

        def mutate(data: Any) -> None:
            if not isinstance(data, CommentedMap):
                raise EditError("the rubric is not a mapping; fix the YAML first")
            _set_key(data, key, value, RUBRIC_ORDER, indent=2)

        self._edit(mutate, coalesce=("rubric", key))
        return self._text != before

    def set_judge_field(self, key: str, value: Any) -> bool:
        """Set a key of the ``judge:`` block (created when needed; removed when emptied)."""
        before = self._text

        def mutate(data: Any) -> None:
            if not isinstance(data, CommentedMap):
                raise EditError("the rubric is not a mapping; fix the YAML first")
            judge = data.get("judge")
            if not isinstance(judge, CommentedMap):
                if value is None:
                    return
                _set_key(data, "judge", {key: value}, RUBRIC_ORDER, indent=2)
                return
            _set_key(judge, key, value, JUDGE_ORDER, indent=4)
            if not judge:
                _delete_key(data, "judge")

        self._edit(mutate, coalesce=("judge", key))
        return self._text != before

    # -- criteria as a list (text-level, comments travel with their criterion) -
    def _layout(self) -> _Layout | None:
        """The text layout of a block-style criteria list, or None (flow style, empty ...)."""
        data = self._read()
        criteria = self._criteria_seq(data)
        if not criteria or criteria.fa.flow_style():
            return None
        text = self._text
        newline = "\r\n" if "\r\n" in text else "\n"
        added = not text.endswith("\n")
        lines = (text + newline if added else text).splitlines(True)
        try:
            key_line = data.lc.key("criteria")[0]
        except Exception:
            key_line = -1
        dashes: list[int] = []
        column = -1
        for index in range(len(criteria)):
            line, col = criteria.lc.item(index)
            dash = lines[line].rfind("-", 0, col)
            while dash < 0 or lines[line][:dash].strip():
                line -= 1
                if line <= key_line:
                    return None
                stripped = lines[line].rstrip("\n").rstrip()
                dash = len(stripped) - 1 if stripped.endswith("-") else -1
            if column == -1:
                column = dash
            if dash != column or (dashes and line <= dashes[-1]):
                return None
            dashes.append(line)
        ends: list[int] = []
        for index, dash in enumerate(dashes):
            limit = dashes[index + 1] if index + 1 < len(dashes) else len(lines)
            end = dash + 1
            for number in range(dash + 1, limit):
                line = lines[number]
                if _is_blank(line):
                    continue
                if _indent_of(line) <= column:
                    break
                end = number + 1
            ends.append(end)
        starts: list[int] = []
        for index, dash in enumerate(dashes):
            floor = ends[index - 1] if index else key_line + 1
            start = dash
            while start - 1 >= floor and _is_comment(lines[start - 1]):
                start -= 1
            for number in range(dash - 1, start - 1, -1):
                if _RULER.match(lines[number]):
                    start = number + 1
                    break
            starts.append(start)
        return _Layout(lines, starts, dashes, ends, column, added, newline)

    def _render_item(self, item: Any, column: int) -> list[str]:
        """The lines of one new criterion at dash column ``column``."""
        holder = CommentedMap([("criteria", CommentedSeq([item]))])
        holder["criteria"].fa.set_block_style()
        rendered = self._dump(holder).splitlines(True)[1:]
        if not rendered:
            return []
        here = _indent_of(rendered[0])
        shift = column - here
        out = []
        for line in rendered:
            if _is_blank(line):
                out.append(line)
            elif shift >= 0:
                out.append(" " * shift + line)
            else:
                out.append(line[min(-shift, _indent_of(line)) :])
        return out

    def _insert_lines(self, layout: _Layout, index: int, item_lines: list[str]) -> str:
        lines = layout.lines
        sep = layout.blank_separator()
        count = len(layout.starts)
        if index >= count:
            at = layout.ends[-1]
            new = lines[:at] + sep + item_lines + lines[at:]
        elif index <= 0:
            at = layout.starts[0]
            new = lines[:at] + item_lines + sep + lines[at:]
        else:
            at = layout.ends[index - 1]
            new = lines[:at] + sep + item_lines + lines[at:]
        return layout.join(new)

    def _unique_id(self, wanted: str) -> str:
        return unique_id(wanted, set(self.criterion_ids()))

    def add_criterion(self, data: dict[str, Any] | None = None, index: int | None = None) -> int:
        """Insert a criterion (default: a new judge criterion at the end); returns its index."""
        if data is None:
            data = {"id": self._unique_id("new-criterion"), "outcome": _NEW_OUTCOME}
        ordered = {k: data[k] for k in CRITERION_ORDER if k in data}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        read = self._read()
        if not isinstance(read, CommentedMap):
            raise EditError("the rubric is not a mapping; fix the YAML first")
        criteria = read.get("criteria")
        count = len(criteria) if isinstance(criteria, CommentedSeq) else 0
        position = count if index is None else max(0, min(index, count))
        item = _styled(ordered, indent=4)
        layout = self._layout() if isinstance(criteria, CommentedSeq) and criteria else None
        if layout is not None:
            rendered = [line[:-1] + layout.newline if line.endswith("\n") else line
                        for line in self._render_item(item, layout.column)]
            new_text = self._insert_lines(layout, position, rendered)
            self._commit(new_text)
            return position

        def mutate(data_: Any) -> None:
            seq = data_.get("criteria")
            if not isinstance(seq, CommentedSeq):
                seq = CommentedSeq()
                _set_key(data_, "criteria", [], RUBRIC_ORDER, indent=2)
                seq = data_["criteria"]
            if not seq:
                seq.fa.set_block_style()
            seq.insert(position, item)

        self._edit(mutate)
        return position

    def delete_criterion(self, index: int) -> None:
        """Remove criterion ``index`` with the comments written directly above it."""
        count = self.criteria_count
        if not 0 <= index < count:
            raise IndexError(f"no criterion {index} (the rubric has {count})")
        layout = self._layout()
        if layout is None or count == 1:

            def mutate(data: Any) -> None:
                seq = self._criteria_seq(data)
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
            if not any(_is_comment(lines[n]) for n in span):
                remove.update(span)
                break
        self._commit(layout.join([line for n, line in enumerate(lines) if n not in remove]))

    def duplicate_criterion(self, index: int) -> int:
        """Copy criterion ``index`` right after itself with a new id (``tone-copy``); returns its index."""
        count = self.criteria_count
        if not 0 <= index < count:
            raise IndexError(f"no criterion {index} (the rubric has {count})")
        original = self._criteria_seq(self._read())[index]
        has_id = isinstance(original, dict) and "id" in original
        new_id = self._unique_id(f"{original['id']}-copy") if has_id else None
        layout = self._layout()
        with self.transaction():
            if layout is not None:
                self._commit(self._insert_lines(layout, index + 1, layout.item(index)))
            else:
                copy = _plain(original)

                def mutate(data: Any) -> None:
                    self._criteria_seq(data).insert(index + 1, _styled(copy, indent=4))

                self._edit(mutate)
            if new_id is not None:
                self.set_criterion_field(index + 1, "id", new_id)
        return index + 1

    def move_criterion(self, index: int, delta: int) -> int:
        """Move criterion ``index`` by ``delta`` places (clamped); returns its new index."""
        count = self.criteria_count
        if not 0 <= index < count:
            raise IndexError(f"no criterion {index} (the rubric has {count})")
        target = max(0, min(count - 1, index + delta))
        if target == index:
            return index
        layout = self._layout()
        if layout is None:

            def mutate(data: Any) -> None:
                seq = self._criteria_seq(data)
                seq.insert(target, seq.pop(index))

            self._edit(mutate)
            return target
        order = list(range(count))
        order.insert(target, order.pop(index))
        lines = layout.lines
        out = lines[: layout.starts[0]]
        for position, source in enumerate(order):
            if position:
                out += layout.separator(position)
            out += layout.chunk(source)
        out += lines[layout.ends[-1] :]
        self._commit(layout.join(out))
        return target
