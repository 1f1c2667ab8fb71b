"""Checking that data read from a user's file is plain and bounded before anything uses it.

``json.loads`` accepts ``"\\ud800"`` (a lone surrogate, which later fails to encode),
integers far past what ``str()`` will print, and any nesting depth; YAML adds integers
written in hex, which skip the decimal digit limit. :func:`check_plain_value` walks a
value once (iteratively: depth is no risk to the walk itself) and raises
:class:`ValueProblem` naming the first offending place, so callers can report one bad
record or one bad schema instead of failing later, far from the file.
"""

from __future__ import annotations

import re
import sys
from typing import Any

#: Deepest nesting of lists/mappings accepted in one record or schema.
MAX_DEPTH = 100
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_LONG_DIGITS = re.compile(r"[0-9]{" + str((sys.get_int_max_str_digits() or 4300) + 1) + ",}")


class LongNumber:
    """Stands for an integer too long to convert (from ``json.loads(..., parse_int=parse_int)``)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int):
        self.digits = digits


def parse_int(text: str) -> int | LongNumber:
    """``parse_int`` hook for ``json.loads``: a :class:`LongNumber` instead of raising past the digit limit.

    This keeps one oversized number from failing a whole file: the record holding it is
    then reported by :func:`check_plain_value`.
    """
    limit = max_int_digits()
    if limit and len(text.lstrip("-")) > limit:
        return LongNumber(len(text.lstrip("-")))
    return int(text)


class ValueProblem(ValueError):
    """One value that cannot be used; ``kind`` is "surrogate", "integer", "depth" or "type"."""

    def __init__(self, message: str, kind: str, where: str = ""):
        self.kind = kind
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


def max_int_digits() -> int:
    """Decimal digits an integer may have and still be printed (0 means no limit)."""
    return sys.get_int_max_str_digits()


def _too_many_digits(number: int) -> bool:
    limit = max_int_digits()
    # bit_length * log10(2) bounds the digit count without converting the number.
    return bool(limit) and abs(number).bit_length() * 0.30103 > limit - 1


def _path_of(trail: tuple | None, where: str) -> str:
    """The readable path (``metadata.tags[2]``) of a trail of (parent trail, key) pairs."""
    keys: list[Any] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    path = where
    for key in reversed(keys):
        if isinstance(key, int) and not isinstance(key, bool):
            path = f"{path}[{key}]"
        else:
            path = f"{path}.{key}" if path else str(key)
    return path


def _scalar_problem(value: Any, json_only: bool) -> tuple[str, str] | None:
    """(message, kind) when a scalar cannot be used, else None; cheap for the common cases."""
    if isinstance(value, str):
        found = None if value.isascii() else _SURROGATE.search(value)
        if found:
            return f"text contains a lone surrogate \\u{ord(found.group()):04x}, which is not valid Unicode", "surrogate"
    elif isinstance(value, LongNumber):
        return f"a number with {value.digits} digits (more than {max_int_digits()}); write it as a string", "integer"
    elif isinstance(value, int) and not isinstance(value, bool):
        if _too_many_digits(value):
            return f"a number with more than {max_int_digits()} digits; write it as a string", "integer"
    elif json_only and value is not None and not isinstance(value, bool | float):
        return f"expected plain JSON data, got a {type(value).__name__}", "type"
    return None


def _key_problem(key: Any, json_only: bool) -> tuple[str, str] | None:
    problem = _scalar_problem(key, json_only)
    if problem is None and json_only and not isinstance(key, str):
        problem = f"keys must be text, got {type(key).__name__} {key!r}", "type"
    return problem


def check_plain_value(value: Any, *, max_depth: int = MAX_DEPTH, json_only: bool = False, where: str = "") -> None:
    """Raise :class:`ValueProblem` at the first lone surrogate, oversized integer or too-deep nesting.

    ``json_only`` also refuses values JSON has no type for (dates, bytes, sets from YAML).
    Mapping keys are checked like values. The path in the message is only built on a problem.
    """
    stack: list[tuple[Any, int, tuple | None]] = [(value, 0, None)]
    while stack:
        item, depth, trail = stack.pop()
        if isinstance(item, dict | list):
            if depth >= max_depth:
                raise ValueProblem(f"nested deeper than {max_depth} levels", "depth", _path_of(trail, where))
            is_mapping = isinstance(item, dict)
            for key, child in item.items() if is_mapping else enumerate(item):
                if is_mapping and not (type(key) is str and key.isascii()):
                    problem = _key_problem(key, json_only)
                    if problem:
                        raise ValueProblem(*problem, _path_of(trail, where))
                if isinstance(child, dict | list) or not (isinstance(child, str) and child.isascii()):
                    stack.append((child, depth + 1, (trail, key)))
        else:
            problem = _scalar_problem(item, json_only)
            if problem:
                raise ValueProblem(*problem, _path_of(trail, where))


def lone_surrogate_escape_column(text: str) -> int | None:
    """1-based column of the first ``\\uD800``-``\\uDFFF`` escape in JSON text that is not half of a pair."""
    found = _LONE_SURROGATE_ESCAPE.search(text)
    return found.start() + 1 if found else None


def long_number_column(text: str) -> int | None:
    """1-based column of the first run of digits too long to be an integer, or None."""
    found = _LONG_DIGITS.search(text)
    return found.start() + 1 if found else None
