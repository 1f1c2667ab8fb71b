"""Problems found in user files, each with file, line and column.

A :class:`Problem` is what the user sees; :class:`RubricError` carries one or more
of them when a file cannot be used at all. Lines and columns are 1-based.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a file: where it is and what was expected."""

    file: str
    line: int | None
    column: int | None
    message: str
    severity: str = "error"  # "error" | "warning"

    def location(self) -> str:
        if self.line is None:
            return self.file
        if self.column is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"

    def __str__(self) -> str:
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        return f"{self.location()}: {prefix}{self.message}"

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "severity": self.severity,
        }


class RubricStudioError(Exception):
    """Base class of every error rubric-studio raises on purpose."""


class RubricError(RubricStudioError):
    """A rubric, samples or labels file that cannot be used; ``problems`` says why."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid file")
