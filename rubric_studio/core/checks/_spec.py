"""Deterministic check specifications (the ``check:`` block of a criterion).

Each check type is a pydantic model derived from :class:`CheckModel`, with ``extra="forbid"``;
the registry (:mod:`rubric_studio.core.checks._registry`) picks the model by ``type``. What each
one computes is in :mod:`rubric_studio.core.checks._checks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rubric_studio.core.numbers import MAX_LENGTH, Integer, Number

REGEX_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}


class CheckModel(BaseModel):
    """The base of every check spec: ``type`` (a ``Literal`` of the type's name in each model) and ``timeout``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    if TYPE_CHECKING:  # each model declares its own ``type: Literal[...]`` (first, as files write it)
        type: str

    #: Seconds one evaluation may take before the cell ends in ``error``.
    timeout: Number = Field(default=2.0, gt=0, le=600)

    @property
    def runs_code(self) -> bool:
        """True for checks that run the rubric author's code (need trust)."""
        return False


class LengthCheck(CheckModel):
    """Length in characters or words (whitespace-separated tokens).

    Inside [min, max] the score is 1; above max it falls linearly to 0 at 1.5 × max,
    below min to 0 at 0.5 × min.
    """

    type: Literal["length"]
    min_chars: Integer | None = Field(default=None, ge=0, le=MAX_LENGTH)
    max_chars: Integer | None = Field(default=None, ge=1, le=MAX_LENGTH)
    min_words: Integer | None = Field(default=None, ge=0, le=MAX_LENGTH)
    max_words: Integer | None = Field(default=None, ge=1, le=MAX_LENGTH)

    @model_validator(mode="after")
    def _bounds(self) -> LengthCheck:
        if all(v is None for v in (self.min_chars, self.max_chars, self.min_words, self.max_words)):
            raise ValueError("a length check needs at least one of min_chars, max_chars, min_words, max_words")
        for unit, low, high in (("chars", self.min_chars, self.max_chars), ("words", self.min_words, self.max_words)):
            if low is not None and high is not None and low > high:
                raise ValueError(f"no text can pass: min_{unit} {low} is larger than max_{unit} {high}")
        if self.min_words and self.max_chars is not None and self.max_chars < 2 * self.min_words - 1:
            raise ValueError(
                f"no text can pass: min_words {self.min_words} needs at least {2 * self.min_words - 1} characters "
                f"({self.min_words} one-letter words and the spaces between them), but max_chars is {self.max_chars}")
        return self


class KeywordsCheck(CheckModel):
    """Substring presence: ``required`` (fraction present) or ``forbidden`` (1 − fraction present)."""

    type: Literal["keywords"]
    required: list[str] | None = None
    forbidden: list[str] | None = None
    case_sensitive: bool = False
    whole_words: bool = False

    @model_validator(mode="after")
    def _one_list(self) -> KeywordsCheck:
        if (self.required is None) == (self.forbidden is None):
            raise ValueError("a keywords check needs exactly one of 'required' or 'forbidden'")
        words = self.required if self.required is not None else self.forbidden
        if not words:
            raise ValueError("the keyword list is empty")
        if any(not w for w in words):
            raise ValueError("keywords must be non-empty strings")
        return self


class RegexCheck(CheckModel):
    """A regular expression searched anywhere in the text; met when (not) found per ``expect_match``."""

    type: Literal["regex"]
    pattern: str
    expect_match: bool = True
    flags: str = ""

    @field_validator("flags")
    @classmethod
    def _flags(cls, value: str) -> str:
        unknown = sorted(set(value) - set(REGEX_FLAGS))
        if unknown:
            raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use letters from 'imsx'")
        return value

    @model_validator(mode="after")
    def _compiles(self) -> RegexCheck:
        try:
            self.compiled()
        except regex.error as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        return self

    def compiled(self) -> regex.Pattern:
        flag_bits = 0
        for letter in self.flags:
            flag_bits |= REGEX_FLAGS[letter]
        return regex.compile(self.pattern, flag_bits | regex.VERSION0)


class JsonCheck(CheckModel):
    """The text parses as JSON (code fences allowed) and, optionally, matches a JSON Schema."""

    type: Literal["json"]
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _schema_valid(self) -> JsonCheck:
        if self.json_schema is not None:
            import jsonschema

            from rubric_studio.core.checks._jsonschema import schema_problem

            problem = schema_problem(self.json_schema)
            if problem:
                raise ValueError(problem)
            try:
                jsonschema.validators.validator_for(self.json_schema).check_schema(self.json_schema)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"schema is not a valid JSON Schema: {exc.message}") from None
            except RecursionError:
                raise ValueError("schema is nested too deeply to check") from None
        return self


class PythonCheck(CheckModel):
    """``module:function`` called with the sample; returns a score, a bool or ``(score, reason)``.

    Runs only in a trusted rubric (``--allow-code``). The module is looked up beside
    the rubric file first, then on ``sys.path``.
    """

    type: Literal["python"]
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

    @property
    def runs_code(self) -> bool:
        return True


class CommandCheck(CheckModel):
    """An external program given the sample on stdin that prints a score (0–1) on stdout.

    Runs only in a trusted rubric. A non-zero exit or unparsable output is an error.
    """

    type: Literal["command"]
    command: str | list[str]
    timeout: Number = Field(default=10.0, gt=0, le=600)

    @property
    def runs_code(self) -> bool:
        return True

