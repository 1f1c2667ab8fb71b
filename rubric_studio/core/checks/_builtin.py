"""The check types rubric-studio ships, each one :class:`~rubric_studio.core.checks._definition.CheckType`.

The editor, the loader's hints, the document's key order and every export read these
definitions; the order here is the order the editor offers the types in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rubric_studio.core.checks._checks import (
    json_evaluator,
    keywords_evaluator,
    length_evaluator,
    regex_evaluator,
)
from rubric_studio.core.checks._code import command_check, python_check
from rubric_studio.core.checks._definition import CannotExport, CheckType, EditorField
from rubric_studio.core.checks._eval import Evaluator
from rubric_studio.core.checks._json_path import JSON_PATH
from rubric_studio.core.checks._spec import (
    CommandCheck,
    JsonCheck,
    KeywordsCheck,
    LengthCheck,
    PythonCheck,
    RegexCheck,
)

__all__ = ["BUILTIN"]

_EXPORTERS = "rubric_studio.interop._checks"
_RUNS_CODE = CannotExport("{type} check runs your own code with rubric-studio's calling convention; not exported "
                          "to {target} - add an equivalent {target} assertion by hand")


def _text(build: Any) -> Any:
    """A builder for a check that reads only the text (no rubric folder)."""
    def builder(spec: Any, base_dir: Path | None) -> Evaluator:
        return build(spec)

    return builder


def _both(name: str) -> dict[str, str]:
    """The promptfoo and AgentV exporters of a built-in type (``interop._checks.<name>``)."""
    return {"promptfoo": f"{_EXPORTERS}:{name}", "agentv": f"{_EXPORTERS}:{name}"}


LENGTH = CheckType(
    "length", LengthCheck, _text(length_evaluator), hint="words: whitespace tokens; 0 at 1.5 × max",
    fields=(EditorField("min_chars", "int", "min chars", minimum=0),
            EditorField("max_chars", "int", "max chars", minimum=1),
            EditorField("min_words", "int", "min words", minimum=0),
            EditorField("max_words", "int", "max words", minimum=1)),
    exports=_both("length_export"), defaults={"max_words": 200},
)
KEYWORDS = CheckType(
    "keywords", KeywordsCheck, _text(keywords_evaluator), hint="substrings, one per line",
    fields=(EditorField("words", "words", "keywords"),
            EditorField("case_sensitive", "bool", "match case", default=False),
            EditorField("whole_words", "bool", "whole words", default=False)),
    exports=_both("keywords_export"),
)
REGEX = CheckType(
    "regex", RegexCheck, _text(regex_evaluator), hint="searched anywhere; flags from imsx",
    fields=(EditorField("pattern", "pattern", "pattern", required=True),
            EditorField("expect_match", "bool", "expect match", default=True),
            EditorField("flags", "flags", "flags")),
    exports=_both("regex_export"), binary=True,
)
JSON = CheckType(
    "json", JsonCheck, _text(json_evaluator), hint="parses as JSON; optional JSON Schema",
    fields=(EditorField("schema", "json", "schema"),),
    exports=_both("json_export"), binary=True,
)
PYTHON = CheckType(
    "python", PythonCheck, python_check, hint="module:function; trusted rubrics only",
    fields=(EditorField("function", "function", "function", required=True),),
    exports={"promptfoo": _RUNS_CODE, "agentv": _RUNS_CODE},
)
COMMAND = CheckType(
    "command", CommandCheck, command_check, hint="sample on stdin, 0-1 on stdout; trusted only",
    fields=(EditorField("command", "command", "command", required=True),),
    exports={"promptfoo": _RUNS_CODE, "agentv": _RUNS_CODE},
)

#: Every built-in type, in the order the editor offers them.
BUILTIN: tuple[CheckType, ...] = (LENGTH, KEYWORDS, REGEX, JSON, PYTHON, COMMAND, JSON_PATH)
