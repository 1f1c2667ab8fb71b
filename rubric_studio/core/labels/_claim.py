"""Claiming a sidecar's unnamed labels: the labels of a file written before annotators become one
named person's (``annotator: NAME`` added to each entry), and back.

A sidecar from before annotators holds labels of the unnamed annotator. Someone who labelled it
alone and now labels again in the studio (as their OS user) would otherwise add a second label
beside their own old one, and a changed mind would read as two people disagreeing ("no
consensus"). The studio claims the unnamed labels for the current annotator on their first label
change when nobody is named in the file and the annotator was not named explicitly (see
:mod:`rubric_studio.session.claim`); :func:`unclaim` undoes it. Only entries whose top-level label
is unnamed change, comments stay, the file is replaced atomically over exactly what was read.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from rubric_studio.core.atomic import ChangedOnDisk, locked, rewrite_safely
from rubric_studio.core.labels._annotators import ENTRY_KEYS, check_name
from rubric_studio.core.labels._labels import LABEL_KEYS, parse_label
from rubric_studio.core.labels._store import (
    _delete,
    _give_following,
    _put,
    _read,
    _take_following,
    _written_text,
    round_trip_yaml,
)
from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import load_with_positions

__all__ = ["claim_unnamed", "unclaim"]


def _unnamed(entry: object) -> bool:
    if isinstance(entry, CommentedMap):
        return "annotator" not in entry and "annotators" not in entry and any(k in entry for k in LABEL_KEYS)
    return isinstance(entry, str)  # ``id: pass``


def _named(entry: object) -> bool:
    return isinstance(entry, CommentedMap) and ("annotator" in entry or "annotators" in entry)


def _rewrite(path: Path, edit) -> list[str]:
    """Apply ``edit(data) -> ids`` to the sidecar's round-trip document and write it (nothing when
    no id changed); the ids changed. The labels journal is folded in first (changes land in order)."""
    from rubric_studio.core.labels._store import _journal_folded

    changed: list[str] = []
    with locked(path):
        _journal_folded(path)

    def rewrite():
        text, state = _read(path)
        try:
            load_with_positions(text, str(path))  # bounded: ruamel limits neither aliases nor nesting
            yaml = round_trip_yaml(text)
            data = yaml.load(text)
        except (RubricError, YAMLError):
            raise ValueError(f"{path}: not valid YAML, fix it by hand first") from None
        if not isinstance(data, CommentedMap):
            return None
        changed[:] = edit(data)
        if not changed:
            return None
        buffer = io.StringIO()
        yaml.dump(data, buffer)
        return buffer.getvalue(), state

    try:
        rewrite_safely(path, rewrite)
    except ChangedOnDisk:
        raise ValueError(f"{path}: kept changing on disk while the labels were claimed; nothing written") from None
    return changed


def claim_unnamed(path: str | Path, annotator: str, only: Iterable[str] | None = None) -> list[str]:
    """Mark every unnamed label in the sidecar as ``annotator``'s; the sample ids claimed.

    Nothing is claimed (an empty list) when any entry names an annotator: the unnamed labels may
    then be someone else's. ``only`` limits the claim to those ids (a redo)."""
    name = check_name(annotator)
    wanted = None if only is None else set(only)

    def edit(data: CommentedMap) -> list[str]:
        if any(_named(entry) for entry in data.values()):
            return []
        ids = []
        for key in list(data):
            entry = data[key]
            if not _unnamed(entry) or (wanted is not None and str(key) not in wanted):
                continue
            if not isinstance(entry, CommentedMap):  # ``id: pass`` becomes a mapping to carry the name
                following = _take_following(data, key)
                data[key] = entry = CommentedMap(parse_label(entry, where=str(key)).to_yaml_data())
                _give_following(data, key, following)
            _put(entry, "annotator", _written_text(name), LABEL_KEYS + ENTRY_KEYS)  # ``yes`` stays a name
            ids.append(str(key))
        return ids

    return _rewrite(Path(path), edit)


def unclaim(path: str | Path, sample_ids: Iterable[str], annotator: str) -> list[str]:
    """Undo :func:`claim_unnamed`: drop ``annotator: NAME`` from those entries (where it still says
    ``annotator``); the ids changed."""
    wanted = set(sample_ids)

    def edit(data: CommentedMap) -> list[str]:
        ids = []
        for key in list(data):
            entry = data[key]
            if str(key) in wanted and isinstance(entry, CommentedMap) and str(entry.get("annotator")) == annotator:
                carried = _delete(entry, "annotator")
                if carried:
                    _give_following(data, key, carried)
                ids.append(str(key))
        return ids

    return _rewrite(Path(path), edit)
