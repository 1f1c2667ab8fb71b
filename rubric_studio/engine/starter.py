"""The starter rubric a new rubric begins as, and the placeholder outcome it carries.

``rubric-studio new NAME.yaml``, the studio opened on a missing file and the "New rubric"
dialog all write :data:`STARTER_RUBRIC`. Its one criterion has the outcome
:data:`PLACEHOLDER_OUTCOME`: a sentence for the user to replace, not a statement for a judge
to check. The grader leaves a criterion whose outcome is exactly that placeholder
``unjudged`` (see :func:`awaits_outcome`), so a brand-new rubric sends no judge request
until the user writes a real outcome and saves.

Textual-free: the CLI, the session and the studio's dialogs share it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Criterion

PLACEHOLDER_OUTCOME = "Write what a good output does here, then save"
"""The starter criterion's outcome; a criterion whose outcome is exactly this is not judged."""

PLACEHOLDER_RATIONALE = "not judged yet: write this criterion's outcome (what a good output does) and save"
"""Why a placeholder criterion's cells are ``unjudged``."""

STARTER_RUBRIC = """\
# {name}: a rubric drafted in rubric-studio.
# Each criterion is judged (outcome: what a good output does) or a deterministic
# check (check: {{type: length, max_words: 150}}). Replace the outcome below with
# your first criterion and save (ctrl+s): the judge grades it from then on.
# The judge is the default model of the provider whose key is set (openai:gpt-6-luna,
# anthropic:claude-haiku-5-5); name one with judge: {{model: provider:model}}, and
# compare another on your labels with: rubric-studio calibrate RUBRIC --switch-to P:M
name: {name}
description: ""
pass_threshold: 0.8
criteria:
  - id: first-criterion
    outcome: Write what a good output does here, then save
    weight: 1
"""
"""The starter rubric; ``{name}`` is the rubric's name (a YAML scalar, see :func:`starter_text`)."""

RUBRIC_SUFFIXES = (".yaml", ".yml")
#: A name that reads back as itself written plain in YAML 1.1 and 1.2 (unless a reader takes it for a
#: boolean or null, see :func:`starter_text`): a letter or ``_`` first, then words, spaces, ``.`` and ``-``.
_PLAIN_NAME = re.compile(r"[^\W\d][\w .-]*")


def awaits_outcome(criterion: Criterion) -> bool:
    """True for a judged criterion whose outcome is still the starter's placeholder."""
    return criterion.is_judged and (criterion.outcome or "").strip() == PLACEHOLDER_OUTCOME


def starter_text(path: Path) -> str:
    """The starter rubric for ``path``, named after the file's stem."""
    from rubric_studio.core.safe_text import json_safe
    from rubric_studio.core.yamlpos import needs_double_quotes

    name = path.stem or "rubric"
    if not _PLAIN_NAME.fullmatch(name) or name != name.strip() or needs_double_quotes(name):
        # a JSON string is a valid YAML double-quoted scalar; json_safe escapes the line breaks only
        # YAML 1.1 knows and the controls YAML does not allow raw
        name = json_safe(json.dumps(name, ensure_ascii=False))
    return STARTER_RUBRIC.format(name=name)


def new_rubric_problem(path: Path) -> str | None:
    """Why a new rubric cannot be created at ``path`` (None when it can).

    Refuses an existing file or folder (a new rubric never replaces anything), a name
    without ``.yaml`` / ``.yml``, an empty name and a parent that is not a folder.
    """
    name = path.name
    if not name or not path.stem.strip() or name.strip() != name or name in (".", ".."):
        return f"{path}: expected a file name such as my-rubric.yaml"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in str(path)):
        return "a file name cannot hold control characters"
    if path.suffix.lower() not in RUBRIC_SUFFIXES:
        return f"{path.name}: a rubric file name ends with .yaml (or .yml)"
    if path.is_symlink() or path.exists():
        what = "a folder" if path.is_dir() else "a file"
        return f"{path}: {what} with this name exists already; choose another name"
    parent = path.parent
    for folder in (parent, *parent.parents):
        if folder.exists():
            if not folder.is_dir():
                return f"{folder}: not a folder"
            break
    return None


def create_starter_rubric(path: Path) -> None:
    """Write the starter rubric at ``path``, creating missing folders.

    Only creates: a file that appeared meanwhile is never replaced. The new file gets the
    user's umask. RubricError naming the path when it cannot be written.
    """
    from rubric_studio.core.atomic import ABSENT, write_text_safely

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_safely(path, starter_text(path), expect=ABSENT)
    except OSError as exc:
        raise RubricError([Problem(str(path), None, None, f"cannot create the rubric: {exc.strerror or exc}")]) from None
