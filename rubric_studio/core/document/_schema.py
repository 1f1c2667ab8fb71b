"""What the rubric document writes: the canonical order of keys, the parameters of each
check type, and :class:`EditError`, the refusal of an edit that cannot apply.

A key the user did not write is inserted where this order puts it, so files the studio
edits read the same way (``id`` first, ``tags`` last). Shared by every part of
:class:`~rubric_studio.core.document._document.RubricDocument`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubric_studio.core.checks import LiveMapping, LiveSequence, check_types
from rubric_studio.core.problems import RubricStudioError
from rubric_studio.core.rubric import JudgeSettings

__all__ = [
    "CHECK_DEFAULTS",
    "CHECK_FIELDS",
    "CHECK_ORDER",
    "CRITERION_ORDER",
    "JUDGE_ONLY",
    "JUDGE_ORDER",
    "NEW_OUTCOME",
    "RUBRIC_ORDER",
    "EditError",
]

CRITERION_ORDER = ("id", "outcome", "check", "weight", "required", "operator", "score_ranges", "min_score", "tags")
RUBRIC_ORDER = ("name", "description", "pass_threshold", "on_error", "judge", "criteria")
JUDGE_ORDER = tuple(JudgeSettings.model_fields)
CHECK_FIELDS: Mapping[str, tuple[str, ...]] = LiveMapping(lambda: {t.name: t.params for t in check_types()})
"""Parameters of each check type (from its registered definition), in the order the editor shows (and writes) them."""
CHECK_ORDER: Sequence[str] = LiveSequence(
    lambda: ("type", *dict.fromkeys(k for t in check_types() for k in t.params), "timeout"))
"""Order of the keys of a ``check:`` mapping."""
JUDGE_ONLY = ("outcome", "operator", "score_ranges")
"""Keys a criterion loses when it becomes a check."""
CHECK_DEFAULTS: Mapping[str, dict[str, Any]] = LiveMapping(
    lambda: {t.name: dict(t.defaults) for t in check_types() if t.defaults})
"""Parameters a new check of that type starts with (a length check needs a bound)."""
NEW_OUTCOME = "Describe what a good answer does"
"""The outcome of a criterion added without data."""


class EditError(RubricStudioError, ValueError):
    """An edit that cannot be applied to the document as it is (the text is left unchanged)."""
