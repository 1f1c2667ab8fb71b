"""Editing the labels sidecar in place: one sample's label at a time, comments kept.

The studio writes labels while the user works, and the user may also edit the
file by hand. Every edit here re-reads the file from disk (so hand edits are never
clobbered), changes only the one sample's entry through a round-trip
``ruamel.yaml`` document (comments, key order, quoting and folded notes survive),
and replaces the file atomically — over exactly the version it read: if the file changes
in between (a hand edit saved at that moment, another studio), the edit is redone once on
the new content, and never written over it. A missing file is created with a header comment
(with the user's umask), and a labels path that is not a regular file (a FIFO, a device) is
refused without blocking.
Comment lines that follow a deleted or appended key are moved, not lost.

Each setter returns the sample's :class:`Label` after the edit (None once the entry is gone:
an entry left empty is removed); :func:`apply_change` returns the label before it too (undo). Bad values, and a file that is not
valid YAML, raise ValueError and leave the file untouched.
"""

from __future__ import annotations

import copy
import functools
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, FoldedScalarString, LiteralScalarString
from ruamel.yaml.tokens import CommentToken

from rubric_studio.core.atomic import (
    ABSENT,
    ChangedOnDisk,
    DiskState,
    locked,
    rewrite_safely,
    write_text_safely,
)
from rubric_studio.core.files import read_user_file_state
from rubric_studio.core.labels import _journal
from rubric_studio.core.labels._annotators import ENTRY_KEYS, UNNAMED
from rubric_studio.core.labels._journal import signature
from rubric_studio.core.labels._labels import (
    CELL_LABELS,
    LABEL_KEYS,
    Label,
    LabelChange,
    change_value,
    check_verdict,
    find_key,
    has_label,
    load_sidecar,
    own_label,
    parse_label,
    score_value,
)
from rubric_studio.core.labels._overlay import Bases, resolve
from rubric_studio.core.labels._splice import entries
from rubric_studio.core.labels._wording import SEVERAL, check_fingerprint
from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import load_with_positions, needs_double_quotes

HEADER = (
    "# Human labels: sample id -> {verdict: pass|fail, score: 0-10, criteria: {id: met|unmet}, note}.\n"
    "# Written by rubric-studio when you label samples; edit freely, comments are kept.\n"
)
_SEQ_LINE = re.compile(r"^( *)- ")
_BLANK_BEFORE_KEY = re.compile(r"\n[ \t]*\n[^\s#-]")
_KEY_LINE = re.compile(r"^( *)[^\s#-][^:#]*:\s*(#.*)?$")
_EntryEdit = Callable[[CommentedMap, list[str]], None]  # edits one sample's entry (comment lines to carry)
_ATTEMPTS = 5  # tries when a writer without the lock (a hand edit) keeps changing the file
def _written_text(value: str) -> str:
    """A key or value this module adds, double-quoted when a YAML reader would read it plain as
    something else or lose a line break (:func:`rubric_studio.core.yamlpos.needs_double_quotes`)."""
    return DoubleQuotedScalarString(value) if needs_double_quotes(value) else value


def round_trip_yaml(text: str = "") -> YAML:
    """A round-trip YAML configured like ``text`` (mapping / sequence indent guessed).

    Defaults: ``indent(mapping=2, sequence=4, offset=2)``, quotes preserved, no wrapping.
    Shared with :mod:`rubric_studio.engine.fit._fit` for rubric edits.
    """
    mapping, sequence, offset = 2, 4, 2
    lines = text.splitlines()
    for index, line in enumerate(lines[:-1]):
        head = _KEY_LINE.match(line)
        if not head:
            continue
        nxt = lines[index + 1]
        seq = _SEQ_LINE.match(nxt)
        if seq:
            offset = len(seq.group(1)) - len(head.group(1))
            content = len(nxt) - len(nxt[len(seq.group(0)):].lstrip(" ")) - len(head.group(1))
            sequence = max(content, offset + 2)
            break
    for index, line in enumerate(lines[:-1]):
        head = _KEY_LINE.match(line)
        nxt = lines[index + 1]
        if head and nxt.strip() and not nxt.lstrip().startswith(("-", "#")):
            step = len(nxt) - len(nxt.lstrip(" ")) - len(head.group(1))
            if step > 0:
                mapping = step
                break
    yaml = YAML()
    yaml.indent(mapping=mapping, sequence=sequence, offset=max(0, offset))
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


# -- comment bookkeeping ------------------------------------------------------
def _last_leaf(mapping: CommentedMap, key: Any) -> tuple[CommentedMap, Any]:
    value = mapping[key]
    while isinstance(value, CommentedMap) and len(value) and not value.fa.flow_style():
        mapping, key = value, list(value)[-1]
        value = mapping[key]
    return mapping, key


def _is_block(value: Any) -> bool:
    return isinstance(value, LiteralScalarString | FoldedScalarString)


def _take_following(mapping: CommentedMap, key: Any) -> str:
    """Detach the comment / blank lines after ``mapping[key]`` (its end-of-line comment stays)."""
    leaf_map, leaf_key = _last_leaf(mapping, key)
    slot = leaf_map.ca.items.get(leaf_key)
    if not slot or len(slot) < 3 or slot[2] is None:
        return ""
    token = slot[2]
    if _is_block(leaf_map[leaf_key]):  # a block scalar ends its own line: all of it follows
        slot[2] = None
        return token.value
    eol, _, rest = token.value.partition("\n")
    if eol.strip():
        token.value = eol + "\n"
    else:
        slot[2] = None
    return rest


def _give_following(mapping: CommentedMap, key: Any, text: str) -> None:
    """Put comment / blank lines after ``mapping[key]``."""
    if not text:
        return
    leaf_map, leaf_key = _last_leaf(mapping, key)
    slot = leaf_map.ca.items.setdefault(leaf_key, [None, None, None, None])
    while len(slot) < 3:
        slot.append(None)
    if slot[2] is None:
        slot[2] = CommentToken(("" if _is_block(leaf_map[leaf_key]) else "\n") + text, CommentMark(0), None)
    else:
        value = slot[2].value
        slot[2].value = (value if value.endswith("\n") else value + "\n") + text


def _key_column(mapping: CommentedMap, key: Any) -> int | None:
    try:
        return int(mapping.lc.key(key)[1])
    except (AttributeError, KeyError, TypeError):
        return None


def _delete(mapping: CommentedMap, key: Any, carried: str = "") -> str:
    """Delete ``mapping[key]``; returns following comment lines that had no place to go.

    Comment lines indented deeper than the key belonged to it and go with it.
    """
    following = carried + _take_following(mapping, key)
    column = _key_column(mapping, key)
    if column is not None and following:
        lines = following.splitlines(keepends=True)
        deeper = [line for line in lines if line.lstrip().startswith("#") and len(line) - len(line.lstrip(" ")) > column]
        following = "".join(line for line in lines if line not in deeper)
    keys = list(mapping)
    position = keys.index(key)
    del mapping[key]
    if following and position > 0:
        _give_following(mapping, keys[position - 1], following)
        return ""
    return following


def insert_key(mapping: CommentedMap, position: int, key: Any, value: Any) -> None:
    """``mapping.insert`` that keeps comment lines below the key before ``position`` in place.

    Lines that followed the previous key (blank lines, comments about what comes next)
    move below the new key; the previous key keeps its end-of-line comment.
    """
    keys = list(mapping)
    following = _take_following(mapping, keys[position - 1]) if 0 < position <= len(keys) else ""
    mapping.insert(position, key, value)
    _give_following(mapping, key, following)


def _put(mapping: CommentedMap, key: str, value: Any, order: tuple[str, ...] = ()) -> None:
    """Set ``mapping[key]``: in place if present, else at its place in ``order`` (comments moved)."""
    if key in mapping:
        mapping[key] = value
        return
    if key not in order and mapping:  # at the end: no need to look at the other keys
        last = next(reversed(mapping))
        following = _take_following(mapping, last)
        mapping[key] = value
        _give_following(mapping, key, following)
        return
    keys = [str(k) for k in mapping]
    position = len(keys)
    if key in order:
        later = set(order[order.index(key) + 1 :])
        position = next((i for i, k in enumerate(keys) if k in later), len(keys))
    insert_key(mapping, position, key, value)


# -- file ---------------------------------------------------------------------
def _leading_comments(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        out.append(line)
    return "".join(out)


@functools.lru_cache(maxsize=8)  # asked once per entry appended, of the same text: scanned once
def _blank_separated(text: str) -> bool:
    """Whether top-level entries (after the first) are separated by blank lines."""
    first = re.search(r"^[^\s#-]", text, re.M)
    return bool(first and _BLANK_BEFORE_KEY.search(text, first.end()))


def _read(target: Path) -> tuple[str, DiskState]:
    """The sidecar's text (newlines normalised) and its state; the header when it does not exist yet."""
    try:
        raw, state = read_user_file_state(target, "labels")
    except RubricError as exc:
        raise ValueError(f"{exc.problems[0]}; labels are not written there") from None
    if raw is None:
        return HEADER, ABSENT
    return raw.replace("\r\n", "\n").replace("\r", "\n"), state


class LabelConflict(ValueError):
    """The field this change replaces no longer holds what the writer last saw: the same annotator
    changed it elsewhere (another window, a hand edit). Nothing was written."""


_UNSEEN = object()


def _edit(path: str | Path, sample_id: str, change: _EntryEdit,
          annotator: str | None = None, check: Callable[[Label | None], None] | None = None,
          ) -> tuple[Label | None, Label | None]:
    """Under the sidecar's lock: read it as it is now, let ``change`` edit the sample's entry, write;
    the label before and after. Other annotators' labels and other samples written meanwhile are
    kept as they are (the change is applied to the file as it is now, not to an older copy).

    ``check(label_before)`` may raise to refuse the change (:class:`LabelConflict`). Only a writer
    that takes no lock (an editor saving by hand) can change the file between the read and the
    write: the edit is then redone on the new content, a few times, before ValueError.
    """
    target = Path(path)
    found: list[Label | None] = [None, None]
    with locked(target):
        _journal_folded(target)

    def edit() -> tuple[str, DiskState] | None:
        text, state = _read(target)
        new_text, found[0], found[1] = _edited(text, target, sample_id, change, annotator, check)
        return None if new_text is None else (new_text, state)

    try:
        rewrite_safely(target, edit, attempts=_ATTEMPTS)
    except ChangedOnDisk:
        raise ValueError(f"{target}: kept changing on disk while the label was written; "
                         "nothing written, label again") from None
    return found[0], found[1]


def _edited(text: str, target: Path, sample_id: str, change: _EntryEdit, annotator: str | None = None,
            check: Callable[[Label | None], None] | None = None) -> tuple[str | None, Label | None, Label | None]:
    """The sidecar text after ``change`` edits the sample's entry (None: leave the file alone), and the
    label before and after (``annotator``'s own; None: the entry's top-level label)."""
    data, yaml, prefix = _document(text, target)
    key, entry = _entry(data, sample_id)
    before = None if entry is None else own_label(entry, annotator, sample_id)
    if check is not None:
        check(before)
    if entry is None:
        entry = CommentedMap()
        _append(data, key, entry, text)
    carry: list[str] = []  # comment lines that deletions inside the entry could not place
    for_annotator(change, annotator)(entry, carry)
    result = own_label(entry, annotator, sample_id)
    orphan = ""
    if result is None and before is None:
        return None, None, None  # clearing what was never there: leave the file alone
    if not has_label(entry, sample_id):
        orphan = _delete(data, key, "".join(carry))
        result = None
    elif carry:
        _give_following(data, key, "".join(carry))
    return _dumped(data, yaml, text, prefix, orphan), before, result


def _owner(entry: CommentedMap) -> str | None:
    """Whose label the entry's top level holds (None: it holds none)."""
    if not any(k in entry for k in LABEL_KEYS):
        return None
    owner = entry.get("annotator")
    return UNNAMED if owner is None else str(owner).strip()


def for_annotator(change: _EntryEdit, annotator: str | None) -> _EntryEdit:
    """``change`` made to ``annotator``'s label in an entry (None: to the top level as it is).

    The top level is the annotator's when it holds their label, or no label and they have none
    under ``annotators:`` (it is then marked ``annotator: NAME``); otherwise their label is
    ``annotators.NAME``. A label left empty takes its ``annotator`` mark or its mapping with it.
    """
    if annotator is None:
        return change

    def edit(entry: CommentedMap, carry: list[str]) -> None:
        others = entry.get("annotators")
        mine = isinstance(others, CommentedMap) and find_key(others, annotator) is not None
        owner = _owner(entry)
        if owner == annotator or (owner is None and not mine):
            if annotator != UNNAMED:
                _put(entry, "annotator", _written_text(annotator), LABEL_KEYS + ENTRY_KEYS)
            change(entry, carry)
            if _owner(entry) is None and "annotator" in entry:
                carry.append(_delete(entry, "annotator"))
            return
        if not mine:  # a new label: filled before it is placed, so comments below stay where they are
            label = CommentedMap()
            change(label, carry)
            if not label:
                return
            if isinstance(others, CommentedMap):
                _put(others, _written_text(annotator), label)
            else:
                _put(entry, "annotators", CommentedMap({_written_text(annotator): label}), LABEL_KEYS + ENTRY_KEYS)
            return
        key = find_key(others, annotator)
        if not isinstance(others[key], CommentedMap):
            others[key] = CommentedMap(parse_label(others[key], where=annotator).to_yaml_data())
        change(others[key], carry)
        if not others[key]:
            carry.append(_delete(others, key))
        if not others:
            carry.append(_delete(entry, "annotators", "".join(carry)))
            del carry[:-1]

    return edit


def _set_field(entry: CommentedMap, carry: list[str], name: str, value: Any) -> None:
    if value is None:
        if name in entry:
            carry.append(_delete(entry, name))
    else:
        _put(entry, name, value, LABEL_KEYS)


def _note_value(note: str | None) -> Any:
    """A note exactly as given (a note of only spaces is none): a ``|`` block when it has several lines that
    a block keeps as they are (no space at either end, nothing unprintable), else a quoted string."""
    if note is None or not note.strip():
        return None
    block = "\n" in note and note == note.strip() and note.replace("\n", "").replace("\t", "").isprintable()
    return LiteralScalarString(note) if block and not needs_double_quotes(note) else _written_text(note)


def _set_cells(entry: CommentedMap, carry: list[str], cells: dict[str, str | None]) -> None:
    for state in cells.values():
        if state is not None and state not in CELL_LABELS:
            raise ValueError(f"a criterion label must be met or unmet, got {state!r}")
    criteria = entry.get("criteria")
    if not isinstance(criteria, CommentedMap):
        if all(state is None for state in cells.values()):
            return
        criteria = CommentedMap({_written_text(k): v for k, v in cells.items() if v is not None})
        _put(entry, "criteria", criteria, LABEL_KEYS)  # filled first: comments below it stay below it
    _update_nested(entry, "criteria", criteria, cells, carry)


def _update_nested(entry: CommentedMap, name: str, nested: CommentedMap, values: dict[str, Any],
                   carry: list[str]) -> None:
    """Set each of ``values`` in ``entry[name]`` (``nested``), or remove it (None); the mapping goes
    when left empty, its comment lines carried."""
    for item_id, value in values.items():
        key = find_key(nested, item_id)
        key = _written_text(item_id) if key is None else key
        if value is None:
            if key in nested:
                carry.append(_delete(nested, key))
        else:
            _put(nested, key, value)
    if not nested:
        carry.append(_delete(entry, name, "".join(carry)))
        del carry[:-1]


def apply_change(path: str | Path, sample_id: str, change: LabelChange,
                 annotator: str | None = None, *, expect: Any = _UNSEEN) -> tuple[Label | None, Label | None]:
    """Make ``change`` to the sample's label; (the label before, the label after), None when absent.

    With ``annotator``, the change is made to that annotator's label only (other annotators' labels,
    and the comments around them, stay as they are); without, to the entry's top-level label.
    With ``expect`` (the label the writer last saw, e.g. what an undo puts back over), the change is
    refused with :class:`LabelConflict` when the field it changes holds anything else now; another
    field, another sample or another annotator's label changed meanwhile never refuses it.
    """
    check = None if expect is _UNSEEN else _unchanged_field(sample_id, change, expect, annotator)
    field, value = change.field, change.value
    if field == "label":  # the whole label, its cell scores and wordings too
        return _edit(path, sample_id, _entry_edit(change), annotator, check)
    if field in ("cell", "cell_score"):  # a criterion's met / unmet, or an analytic cell's 0-10 score
        return _edit(path, sample_id, _entry_edit(change), annotator, check)
    check_verdict(value if field == "verdict" else None)
    value = score_value(value) if field == "score" else _note_value(value) if field == "note" else value
    return _edit(path, sample_id, lambda entry, carry: _set_field(entry, carry, field, value), annotator, check)


def _unchanged_field(sample_id: str, change: LabelChange, expect: Label | None,
                     annotator: str | None) -> Callable[[Label | None], None]:
    """The check that the field ``change`` writes still holds what it held in ``expect``."""
    seen = change.value_in(expect)

    def check(now: Label | None) -> None:
        if change.value_in(now) != seen:
            what = f"{change.criterion} cell" if change.field == "cell" else change.field
            whose = f"{annotator}'s " if annotator else ""
            raise LabelConflict(f"{sample_id}: {whose}{what} changed on disk since you last saw it "
                                f"(now {change.value_in(now)!r}); nothing written")

    return check


def set_verdict(path: str | Path, sample_id: str, verdict: str | None) -> Label | None:
    """Mark a sample pass / fail (None clears the verdict)."""
    return apply_change(path, sample_id, LabelChange("verdict", verdict))[1]


def set_score(path: str | Path, sample_id: str, score: float | None) -> Label | None:
    """Give a sample a 0–10 score (None clears it)."""
    return apply_change(path, sample_id, LabelChange("score", score))[1]


def set_note(path: str | Path, sample_id: str, note: str | None) -> Label | None:
    """Attach a note to a sample (None or blank clears it); multi-line notes are written as ``|`` blocks."""
    return apply_change(path, sample_id, LabelChange("note", note))[1]


def set_cell(path: str | Path, sample_id: str, criterion_id: str, state: str | None) -> Label | None:
    """Mark one criterion of a sample met / unmet (None clears it)."""
    return apply_change(path, sample_id, LabelChange("cell", state, criterion_id))[1]


def set_label(path: str | Path, sample_id: str, label: Label | None) -> Label | None:
    """Replace a sample's whole label (None removes the entry), editing keys in place."""
    return apply_change(path, sample_id, LabelChange("label", label))[1]


def _whole_label(label: Label | None) -> _EntryEdit:
    """The entry edit that makes it ``label`` (None or empty: no keys left)."""
    score = score_value(label.score) if label is not None else None
    note = _note_value(label.note) if label is not None else None

    def change(entry: CommentedMap, carry: list[str]) -> None:
        if label is None or label.is_empty:
            for key in reversed([k for k in entry if k not in ENTRY_KEYS]):
                carry.append(_delete(entry, key))
            return
        for key in [k for k in entry if k not in LABEL_KEYS and k not in ENTRY_KEYS]:
            carry.append(_delete(entry, key))
        _set_field(entry, carry, "verdict", label.verdict)
        _set_field(entry, carry, "score", score)
        old = entry.get("criteria")
        cells: dict[str, str | None] = {str(k): None for k in old} if isinstance(old, dict) else {}
        cells.update(label.criteria)
        _set_cells(entry, carry, cells)
        _set_field(entry, carry, "note", note)

    return change


def read_sidecar(target: Path) -> tuple[str, DiskState]:
    """The sidecar's text and state, as every edit here reads it (the header when absent)."""
    return _read(target)


def text_with_changes(text: str, target: Path, changes: list[tuple[str, LabelChange, str | None]]) -> str | None:
    """The sidecar ``text`` with every ``(sample id, change, annotator)`` made, in order (None:
    nothing changed). Nothing is read or written: :func:`apply_changes` and the journal's fold
    both edit through this."""
    grouped: dict[tuple[str, str | None], list[_EntryEdit]] = {}
    for sample_id, change, annotator in changes:
        grouped.setdefault((str(sample_id), annotator), []).append(_entry_edit(change))
    if not grouped:
        return None

    return _edited_many(text, target, grouped)[0]


def _journal_folded(path: str | Path) -> None:
    """Fold the labels journal into the sidecar before editing it directly, so a change made now
    lands after the labels written before it (the caller holds the lock)."""
    fold_journal(path)


# -- the journal folded in ----------------------------------------------------------------------
def fold_journal(sidecar: str | Path) -> int:
    """Write the journal's labels into the sidecar (comments kept) and empty the journal; how
    many lines were folded. Lines a later change outside rubric-studio won over are kept in
    ``<sidecar name>.superseded`` beside the journal. Holds the folder's lock throughout."""
    return fold_journal_counts(sidecar)[0]


def fold_journal_counts(sidecar: str | Path) -> tuple[int, int]:
    """:func:`fold_journal`, saying (lines folded, lines superseded by a change made outside rubric-studio)."""
    return _fold(Path(sidecar))


def _fold(target: Path) -> tuple[int, int]:
    """(lines folded, lines superseded) — see :func:`fold_journal`."""
    journal = _journal.journal_path(target)
    with locked(target):
        tail = _journal.read(journal)
        if not tail.entries:
            if tail.generation is not None:
                _journal.empty(journal)
            return 0, 0
        text, state = _read(target)
        now = signature(target)
        keep, lost = tail.entries, []
        if any(e.base != now for e in tail.entries):
            keep, lost = resolve(tail.entries, now, load_sidecar(target).by_annotator, Bases(journal))
        new_text = text_with_changes(text, target, [(e.sample_id, e.change, e.annotator) for e in keep])
        if new_text is not None:
            write_text_safely(target, new_text, expect=state)
        _journal.keep_superseded(journal, lost, "the sidecar was changed outside rubric-studio after "
                                                "these labels were written, on the same fields")
        _journal.empty(journal)
    return len(tail.entries), len(lost)


# -- many changes in one write --------------------------------------------------
def apply_changes(path: str | Path, changes: list[tuple[str, LabelChange, str | None]]) -> int:
    """Make every ``(sample id, change, annotator)`` in one read-modify-write of the sidecar.

    Each change is made as :func:`apply_change` makes it (to that annotator's label only; None:
    the entry's top-level label), in order, on the file as it is on disk when it is written; a
    ``cell_score`` change sets an analytic cell's 0-10 score (``criterion_scores:``). Returns how
    many labels (sample × annotator) changed. A bad value raises ValueError before anything is read.
    """
    grouped: dict[tuple[str, str | None], list[_EntryEdit]] = {}
    for sample_id, change, annotator in changes:
        grouped.setdefault((str(sample_id), annotator), []).append(_entry_edit(change))
    if not grouped:
        return 0
    target = Path(path)
    changed = [0]
    with locked(target):
        _journal_folded(target)

    def edit() -> tuple[str, DiskState] | None:
        text, state = _read(target)
        new_text, changed[0] = _edited_many(text, target, grouped)
        return None if new_text is None else (new_text, state)

    try:
        rewrite_safely(target, edit)
    except ChangedOnDisk:
        raise ValueError(f"{target}: kept changing on disk while the labels were written; "
                         "nothing written, try again") from None
    return changed[0]


def _entry_edit(change: LabelChange) -> _EntryEdit:
    """The entry edit that makes ``change`` (its value checked now)."""
    field, value = change.field, change.value
    if field == "label":
        check_verdict(value.verdict if value is not None else None)
        whole = _whole_label(value)
        scores = dict(value.criterion_scores) if value is not None else {}
        for score in scores.values():
            score_value(score)
        given = _label_wordings(value)

        def edit(entry: CommentedMap, carry: list[str]) -> None:
            whole(entry, carry)
            _set_criterion_scores(entry, carry, scores, replace=True)
            _set_given_under(entry, carry, given, replace=True)

        return edit
    if field == "cell":
        change_value(change)  # the wording fingerprint checked too
        wording = change.given_under if value is not None else None

        def cell(entry: CommentedMap, carry: list[str]) -> None:
            _set_cells(entry, carry, {change.criterion: value})
            _set_given_under(entry, carry, {change.criterion: wording})

        return cell
    if field == "cell_score":
        score = score_value(value)
        return lambda entry, carry: _set_criterion_scores(entry, carry, {change.criterion: score})
    check_verdict(value if field == "verdict" else None)
    value = score_value(value) if field == "score" else _note_value(value) if field == "note" else value
    return lambda entry, carry: _set_field(entry, carry, field, value)


def _label_wordings(label: Label | None) -> dict[str | None, Any]:
    """The ``given_under:`` a whole label writes: the wording of each of its cells that records one."""
    if label is None:
        return {}
    return {k: check_fingerprint(v, f"given_under.{k}") for k, v in label.given_under.items()
            if k in label.criteria and v != SEVERAL}


def _set_given_under(entry: CommentedMap, carry: list[str], wordings: dict[str | None, Any],
                     replace: bool = False) -> None:
    """Set cells' wording fingerprints under ``given_under:`` (None clears one; ``replace``: clear the
    others), written as the entry writes ``criteria:`` (a flow mapping beside a flow mapping)."""
    current = entry.get("given_under")
    if not isinstance(current, CommentedMap):
        wanted = {_written_text(str(k)): _written_text(v) for k, v in wordings.items() if v is not None}
        if wanted:
            mapping = CommentedMap(wanted)
            criteria = entry.get("criteria")
            if isinstance(criteria, CommentedMap) and criteria.fa.flow_style():
                mapping.fa.set_flow_style()
            _put(entry, "given_under", mapping, LABEL_KEYS)
        elif "given_under" in entry:
            carry.append(_delete(entry, "given_under"))
        return
    if replace:
        wordings = {**{str(k): None for k in current}, **wordings}
    _update_nested(entry, "given_under", current, {str(k): None if v is None else _written_text(v)
                                                   for k, v in wordings.items()}, carry)


def _set_criterion_scores(entry: CommentedMap, carry: list[str], scores: dict[str | None, Any],
                          replace: bool = False) -> None:
    """Set analytic cells' scores under ``criterion_scores:`` (None clears one; ``replace``: clear the others)."""
    current = entry.get("criterion_scores")
    if not isinstance(current, CommentedMap):
        if isinstance(current, dict):  # a flow mapping written by hand
            current = CommentedMap(current)
        wanted = {_written_text(k): v for k, v in scores.items() if v is not None}
        if wanted:
            _put(entry, "criterion_scores", CommentedMap(wanted), LABEL_KEYS)
        elif "criterion_scores" in entry:
            carry.append(_delete(entry, "criterion_scores"))
        return
    if replace:
        scores = {**{str(k): None for k in current}, **scores}
    _update_nested(entry, "criterion_scores", current, scores, carry)


def _edited_many(text: str, target: Path,
                 grouped: dict[tuple[str, str | None], list[_EntryEdit]]) -> tuple[str | None, int]:
    """The sidecar text after every grouped edit (None: nothing changed) and how many labels changed:
    entry by entry when the file allows (:mod:`rubric_studio.core.labels._splice`), else as a whole."""
    fast = _spliced(text, target, grouped)
    if fast is not None:
        return fast
    data, yaml, prefix = _document(text, target)
    changed, orphans = 0, []
    for (sample_id, annotator), edits in grouped.items():
        def change(entry: CommentedMap, carry: list[str], edits: list[_EntryEdit] = edits) -> None:
            for one in edits:
                one(entry, carry)

        changed += _edit_entry(data, text, sample_id, for_annotator(change, annotator), annotator, orphans)
    if not changed:
        return None, 0
    return _dumped(data, yaml, text, prefix, "".join(orphans)), changed


def _dumped(data: CommentedMap, yaml: YAML, text: str, prefix: str, orphans: str) -> str:
    """The sidecar's new text: ``data`` written back under the file's leading comments, with the
    comment lines of a deleted first entry (``orphans``) kept; the header alone when nothing is left."""
    if not data:
        return _leading_comments(text) or HEADER
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    body = buffer.getvalue()
    head = _leading_comments(body)
    return prefix + head + orphans + body[len(head):]


def _entry(data: CommentedMap, sample_id: str) -> tuple[Any, CommentedMap | None]:
    """The key of a sample's entry and the entry (None when absent); a short form (``s1: pass``)
    is turned into a mapping in place, its comments kept."""
    key = find_key(data, sample_id)
    key = _written_text(sample_id) if key is None else key
    entry = data.get(key)
    if entry is not None and not isinstance(entry, CommentedMap):
        following = _take_following(data, key)
        data[key] = entry = CommentedMap(parse_label(entry, where=sample_id).to_yaml_data())
        _give_following(data, key, following)
    return key, entry


def _append(data: CommentedMap, key: Any, entry: CommentedMap, text: str) -> None:
    """Add a new entry at the end, after the comment lines that ended the file, separated as the
    file separates its entries."""
    last = list(data)[-1] if data else None
    tail = _take_following(data, last) if last is not None else ""
    data[key] = entry
    if last is not None and _blank_separated(text):
        _give_following(data, last, "\n")
    _give_following(data, key, tail)


def _document(text: str, target: Path) -> tuple[CommentedMap, YAML, str]:
    """The sidecar's round-trip document, its YAML, and the text kept before it (a file of comments only)."""
    try:
        load_with_positions(text, str(target))  # bounded: ruamel limits neither aliases nor nesting
    except RubricError as exc:
        where, why = (exc.problems[0].location(), exc.problems[0].message) if exc.problems else (target, exc)
        raise ValueError(f"{where}: not valid YAML, fix it by hand first ({why})") from None
    yaml = round_trip_yaml(text)
    try:
        data = yaml.load(text)
    except YAMLError as exc:
        raise ValueError(f"{target}: not valid YAML, fix it by hand first ({exc})") from None
    if data is None:
        return CommentedMap(), yaml, text if text.endswith("\n") or not text else text + "\n"
    if not isinstance(data, CommentedMap):
        raise ValueError(f"{target}: expected a mapping of sample id -> label")
    return data, yaml, ""


def _unshared(data: CommentedMap, key: Any, entry: CommentedMap) -> CommentedMap:
    """The entry as a node of its own when it, or a node in it, is shared with another entry through
    an anchor and alias (``s2: *agreed``): a label written to s2 must not change s1's."""
    shared = getattr(data, "_shared_nodes", None)
    if shared is None:
        counts: dict[int, int] = {}
        stack: list[Any] = [data]
        while stack:
            node = stack.pop()
            counts[id(node)] = counts.get(id(node), 0) + 1
            if counts[id(node)] == 1 and isinstance(node, dict | list):
                stack.extend(node.values() if isinstance(node, dict) else node)
        shared = {node_id for node_id, count in counts.items() if count > 1}
        data._shared_nodes = shared  # type: ignore[attr-defined]  # once per document
    inside: list[Any] = [entry]
    while inside:
        node = inside.pop()
        if id(node) in shared:
            break
        if isinstance(node, dict | list):
            inside.extend(node.values() if isinstance(node, dict) else node)
    else:
        return entry
    own = copy.deepcopy(entry)
    nodes: list[Any] = [own]
    while nodes:  # the copy defines no anchor of its own: the original keeps its name
        node = nodes.pop()
        if hasattr(node, "yaml_set_anchor") and getattr(node, "anchor", None) is not None and node.anchor.value:
            node.anchor.value = None
        if isinstance(node, dict | list):
            nodes.extend(node.values() if isinstance(node, dict) else node)
    data[key] = own
    return own


def _edit_entry(data: CommentedMap, text: str, sample_id: str, change: _EntryEdit, annotator: str | None,
                orphans: list[str]) -> bool:
    """Let ``change`` edit one sample's entry in ``data``; whether the annotator's label changed.

    Comment lines a deleted first entry leaves with no place to go are added to ``orphans``.
    """
    key, entry = _entry(data, sample_id)
    if entry is not None and "&" in text:
        entry = _unshared(data, key, entry)
    carry: list[str] = []
    if entry is None:  # filled before it is placed: nothing is added when the change leaves it empty
        entry = CommentedMap()
        change(entry, carry)
        if not has_label(entry, sample_id):
            return False
        _append(data, key, entry, text)
        return True
    before = own_label(entry, annotator, sample_id)
    change(entry, carry)
    after = own_label(entry, annotator, sample_id)
    if after is None and not has_label(entry, sample_id):
        orphans.append(_delete(data, key, "".join(carry)))
    elif carry:
        _give_following(data, key, "".join(carry))
    return before != after


def _spliced(text: str, target: Path,
            grouped: dict[tuple[str, str | None], list[_EntryEdit]]) -> tuple[str | None, int] | None:
    """The sidecar text after the grouped edits, made entry by entry, and how many labels changed
    ((None, 0): nothing changed); None when the file must be edited as a whole."""
    found = entries(text)
    if found is None:
        return None
    first, spans, index = found
    yaml_rt = round_trip_yaml(text)
    ids = [""] * len(spans)
    for sample_id, number in index.items():
        ids[number] = sample_id
    last = len(spans) - 1
    by_entry: dict[int, list[tuple[str, str | None, list[_EntryEdit]]]] = {}
    for (sample_id, annotator), edits in grouped.items():
        by_entry.setdefault(index.get(sample_id, last), []).append((sample_id, annotator, edits))
    pieces: dict[int, str] = {}
    changed = 0
    for number, groups in by_entry.items():
        start, end = spans[number]
        piece = text[start:end]
        data, _, prefix = _document(piece, target)
        if prefix or len(data) != 1 or str(next(iter(data))) != ids[number]:
            return None  # not the one entry its first line promised
        orphans: list[str] = []
        for sample_id, annotator, edits in groups:
            def change(entry: Any, carry: list[str], edits: list[_EntryEdit] = edits) -> None:
                for one in edits:
                    one(entry, carry)

            changed += _edit_entry(data, text, sample_id, for_annotator(change, annotator), annotator, orphans)
        pieces[number] = "".join(orphans) if not data else _dumped(data, yaml_rt, piece, "", "".join(orphans))
    if not changed:
        return None, 0
    out = [text[:first]]
    for number, (start, end) in enumerate(spans):
        out.append(pieces.get(number, text[start:end]))
    return "".join(out), changed
