"""Deterministic checks: the registry of check types (one definition each: spec, evaluator, editor
fields, exports), their specifications (the ``check:`` block), evaluators, bounded JSON Schema,
and the author's own code checks (run only when the rubric is trusted).

Running a rubric's checks over samples needs the rubric, which needs these specifications: it
sits above both, in :mod:`rubric_studio.core.check_runner` (and :func:`score_text` in
:mod:`rubric_studio.core.grading`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.checks._checks import falloff, json_value
    from rubric_studio.core.checks._definition import (
        TIMEOUT_FIELD,
        CannotExport,
        CheckType,
        EditorField,
        definition_of,
    )
    from rubric_studio.core.checks._eval import CheckFailure, CheckTimeout, Evaluator, TextView
    from rubric_studio.core.checks._jsonschema import schema_problem
    from rubric_studio.core.checks._registry import (
        CHECK_TYPES,
        ENTRY_POINT_GROUP,
        CheckPluginWarning,
        CheckSpec,
        LiveMapping,
        LiveSequence,
        check_type,
        check_types,
        refresh_plugins,
        register,
    )
    from rubric_studio.core.checks._spec import CheckModel, JsonCheck, KeywordsCheck, LengthCheck, RegexCheck

#: Public name -> the private module that defines it.
_EXPORTS = {
    "CannotExport": "_definition",
    "check_type": "_registry",
    "CHECK_TYPES": "_registry",
    "check_types": "_registry",
    "CheckModel": "_spec",
    "CheckPluginWarning": "_registry",
    "CheckFailure": "_eval",
    "CheckTimeout": "_eval",
    "CheckSpec": "_registry",
    "CheckType": "_definition",
    "definition_of": "_definition",
    "EditorField": "_definition",
    "Evaluator": "_eval",
    "ENTRY_POINT_GROUP": "_registry",
    "falloff": "_checks",
    "json_value": "_checks",
    "JsonCheck": "_spec",
    "KeywordsCheck": "_spec",
    "LengthCheck": "_spec",
    "LiveMapping": "_registry",
    "LiveSequence": "_registry",
    "refresh_plugins": "_registry",
    "RegexCheck": "_spec",
    "register": "_registry",
    "schema_problem": "_jsonschema",
    "TextView": "_eval",
    "TIMEOUT_FIELD": "_definition",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
