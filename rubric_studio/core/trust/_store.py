"""The trust store: which settings of which rubric the user trusted, kept across runs.

File ``trust.json`` in the user config folder (:func:`~rubric_studio.core.userdir.config_dir`)::

    {"version": 1,
     "rubrics": {"/abs/path/support.yaml": [["judge.base_url", "http://gpu-box:8000/v1"],
                                            ["check.command", "./score.sh"]]}}

Keyed by the rubric's resolved path; each entry is one (setting, value) pair of
:class:`~rubric_studio.core.trust.Gate`, so trust holds for exactly the values trusted
(what they mean: :mod:`rubric_studio.core.trust._policy`). Written atomically, over exactly the
version read (two writers never drop each other's entries). A missing, unreadable,
malformed or out-of-bounds (over 20 MB, nested too deep) file trusts nothing (and is
replaced by the next write).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.core.atomic import ABSENT, DiskState, disk_state, rewrite_safely
from rubric_studio.core.files import parse_user_json, read_user_file_state
from rubric_studio.core.problems import RubricError
from rubric_studio.core.trust._policy import NO_TRUST, Gate, Trust
from rubric_studio.core.userdir import config_dir

VERSION = 1
MAX_ATTEMPTS = 5


def store_path() -> Path:
    """Returns the path of ``trust.json`` in the user config folder (it may not exist yet).
    Raises nothing."""
    return config_dir() / "trust.json"


def rubric_key(rubric_path: str | os.PathLike[str]) -> str:
    """The store's key for a rubric: its resolved absolute path."""
    try:
        return str(Path(rubric_path).resolve())
    except (OSError, RuntimeError, ValueError):
        return os.path.abspath(rubric_path)


def _read_store() -> tuple[dict[str, list[list[str]]], DiskState]:
    """The store's rubrics and the file's state (to write back over exactly that version)."""
    path = store_path()
    try:
        text, state = read_user_file_state(path, "trust store")
    except RubricError as exc:  # unreadable: trusts nothing (a write then fails, or replaces it)
        logging.getLogger(__name__).warning("ignoring %s", exc)
        return {}, _state_or_absent(path)
    try:  # bounded like every user file: nesting depth, number length
        data = parse_user_json(text, str(path)) if text is not None else {}
    except RubricError as exc:
        logging.getLogger(__name__).warning("ignoring %s", exc)
        return {}, state
    rubrics = data.get("rubrics") if isinstance(data, dict) else None
    if not isinstance(rubrics, dict):
        return {}, state
    return {
        str(key): [list(pair) for pair in pairs if _is_pair(pair)]
        for key, pairs in rubrics.items()
        if isinstance(pairs, list)
    }, state


def _state_or_absent(path: Path) -> DiskState:
    try:
        return disk_state(path)
    except OSError:
        return ABSENT


def _is_pair(pair: object) -> bool:
    return isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)


def load_trust(rubric_path: str | os.PathLike[str] | None) -> Trust:
    """What the user trusted of the rubric at ``rubric_path`` (nothing for a rubric without a path)."""
    if rubric_path is None:
        return NO_TRUST
    pairs = _read_store()[0].get(rubric_key(rubric_path), [])
    return Trust(values=frozenset((setting, value) for setting, value in pairs))


def remember(rubric_path: str | os.PathLike[str], gates: Iterable[Gate]) -> None:
    """Add ``gates`` to what the user trusts of that rubric. Raises OSError when the store cannot be written.

    Two studios trusting at once both keep their entries: the write goes only over the
    version read, and is redone on top of the other's when that changed meanwhile.
    """
    key = rubric_key(rubric_path)
    new = [list(gate.key) for gate in gates]
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)

    def edit() -> tuple[str, DiskState]:
        rubrics, state = _read_store()
        pairs = rubrics.setdefault(key, [])
        pairs.extend(pair for pair in new if pair not in pairs)
        return json.dumps({"version": VERSION, "rubrics": rubrics}, indent=1, ensure_ascii=False) + "\n", state

    rewrite_safely(path, edit, attempts=MAX_ATTEMPTS, user_file=True)  # ChangedOnDisk (an OSError) if it never settles
