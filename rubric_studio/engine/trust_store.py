"""The trust store: which settings of which rubric the user trusted, kept across runs.

File ``trust.json`` in the user config folder (:func:`~rubric_studio.judges.userdir.config_dir`)::

    {"version": 1,
     "rubrics": {"/abs/path/support.yaml": [["judge.base_url", "http://gpu-box:8000/v1"],
                                            ["check.command", "./score.sh"]]}}

Keyed by the rubric's resolved path; each entry is one (setting, value) pair of
:class:`~rubric_studio.core.trust.Gate`, so trust holds for exactly the values trusted
(what they mean: :mod:`rubric_studio.core.trust`). Written atomically. A missing,
unreadable or malformed file trusts nothing (and is replaced by the next write).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.core.trust import NO_TRUST, Gate, Trust
from rubric_studio.judges.userdir import config_dir

VERSION = 1


def store_path() -> Path:
    return config_dir() / "trust.json"


def rubric_key(rubric_path: str | os.PathLike[str]) -> str:
    """The store's key for a rubric: its resolved absolute path."""
    try:
        return str(Path(rubric_path).resolve())
    except (OSError, RuntimeError, ValueError):
        return os.path.abspath(rubric_path)


def _read_all() -> dict[str, list[list[str]]]:
    path = store_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        logging.getLogger(__name__).warning("ignoring %s: %s", path, exc)
        return {}
    rubrics = data.get("rubrics") if isinstance(data, dict) else None
    if not isinstance(rubrics, dict):
        return {}
    return {
        str(key): [list(pair) for pair in pairs if _is_pair(pair)]
        for key, pairs in rubrics.items()
        if isinstance(pairs, list)
    }


def _is_pair(pair: object) -> bool:
    return isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)


def load_trust(rubric_path: str | os.PathLike[str] | None) -> Trust:
    """What the user trusted of the rubric at ``rubric_path`` (nothing for a rubric without a path)."""
    if rubric_path is None:
        return NO_TRUST
    pairs = _read_all().get(rubric_key(rubric_path), [])
    return Trust(values=frozenset((setting, value) for setting, value in pairs))


def remember(rubric_path: str | os.PathLike[str], gates: Iterable[Gate]) -> None:
    """Add ``gates`` to what the user trusts of that rubric. Raises OSError when the store cannot be written."""
    from rubric_studio.core.atomic import atomic_write_text

    rubrics = _read_all()
    key = rubric_key(rubric_path)
    pairs = rubrics.setdefault(key, [])
    for gate in gates:
        if list(gate.key) not in pairs:
            pairs.append(list(gate.key))
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"version": VERSION, "rubrics": rubrics}, indent=1, ensure_ascii=False) + "\n")
