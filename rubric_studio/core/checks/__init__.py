"""Deterministic checks: their specifications (the ``check:`` block), evaluators, bounded JSON Schema,
and the author's own code checks (run only when the rubric is trusted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.core.checks._checks import CheckRunner, falloff
    from rubric_studio.core.checks._grade import score_text
    from rubric_studio.core.checks._jsonschema import schema_problem
    from rubric_studio.core.checks._spec import (
        CHECK_TYPES,
        CheckSpec,
        JsonCheck,
        KeywordsCheck,
        LengthCheck,
        RegexCheck,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "CHECK_TYPES": "_spec",
    "CheckRunner": "_checks",
    "CheckSpec": "_spec",
    "falloff": "_checks",
    "JsonCheck": "_spec",
    "KeywordsCheck": "_spec",
    "LengthCheck": "_spec",
    "RegexCheck": "_spec",
    "schema_problem": "_jsonschema",
    "score_text": "_grade",
}
__all__ = [
    "CHECK_TYPES",
    "CheckRunner",
    "CheckSpec",
    "falloff",
    "JsonCheck",
    "KeywordsCheck",
    "LengthCheck",
    "RegexCheck",
    "schema_problem",
    "score_text",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
