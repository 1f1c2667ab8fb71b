"""Regular expressions between rubric-studio (Python's ``regex`` module, version 0) and JavaScript
(the ``RegExp`` promptfoo and AgentV run, without the ``u`` flag), both ways.

:func:`to_javascript` gives a pattern and the ``RegExp`` flags that find the same matches, or raises
:class:`UntranslatableRegex` naming the construct JavaScript cannot express - never a pattern that
JavaScript would refuse or read differently:

* inline flags: ``(?i)`` becomes the ``i`` flag when it holds for the whole pattern (JavaScript has
  no case-insensitivity for part of a pattern); ``(?m)``, ``(?s)``, ``(?x)``, ``(?a)`` and ``(?u)``
  are applied where they hold (the whole pattern, a group, or from a point to the group's end), as
  Python applies them; ``(?L)`` (locale) has no form;
* anchors and the dot are written out so that no JavaScript flag changes them: ``\\A`` and ``\\Z`` as
  lookarounds at the very start and end, ``$`` as "at the end or before a final newline" (Python's
  meaning; JavaScript's ``$`` is only the end), ``^`` and ``$`` of multi-line mode as "after / before
  ``\\n``" (JavaScript also breaks lines at ``\\r``, U+2028 and U+2029), ``.`` as ``[^\\n]``;
* ``(?P<n>...)`` → ``(?<n>...)``, ``(?P=n)`` → ``\\k<n>``, ``{,n}`` → ``{0,n}``, ``(?#...)`` dropped,
  ``\\U``/``\\N{...}``/``\\a`` and octal escapes as ``\\x``/``\\u`` escapes, a character outside the
  Basic Multilingual Plane as a group (two UTF-16 units there);
* no form: atomic groups, possessive quantifiers, recursion, conditionals, branch reset, ``\\p{...}``,
  POSIX classes and the ``regex`` module's own escapes (``\\G``, ``\\K``, ``\\X``, ``\\m`` ...).

``\\d``, ``\\w``, ``\\b`` and (without ``(?a)``) ``\\s`` are written as they are: in JavaScript they
match ASCII digits and letters only, where rubric-studio also matches other scripts' (see
docs/how-to/promptfoo.md).

:func:`python_regex` reads a JavaScript pattern back: what :func:`to_javascript` wrote returns as it
was, and a foreign pattern gets JavaScript's meaning (``$`` is the very end, ``.`` stops at every
line break JavaScript knows).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace

#: The very start / end of the text, whatever the flags.
START, END = "(?<![\\s\\S])", "(?![\\s\\S])"
#: Python's ``$``: the end, or before a newline that ends the text; with ``m``: before any ``\n``.
DOLLAR, DOLLAR_MULTILINE = "(?=\\n?" + END + ")", "(?=\\n|" + END + ")"
#: Python's ``^`` in multi-line mode: the start, or after ``\n``.
CARET_MULTILINE = "(?<![^\\n])"
#: Python's ``.`` without ``s``.
DOT = "[^\\n]"
_ASCII_SPACE = " \\t\\n\\r\\f\\v"
_FLAG_GROUP = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]+))?([:)])")
_QUANTIFIER = re.compile(r"\{(\d*)(,?)(\d*)\}")
_RECURSION = re.compile(r"\(\?[+-]?\d")
_NAMED_GROUP = re.compile(r"\(\?P?<([^\W\d]\w*)>")
_NAMED_BACKREF = re.compile(r"\(\?P=([^\W\d]\w*)\)")
_POSIX_CLASS = re.compile(r"\[:\^?[a-z]+:\]")
_CODE_ESCAPES = {"x": re.compile(r"\\x[0-9a-fA-F]{2}"), "u": re.compile(r"\\u[0-9a-fA-F]{4}"),
                 "U": re.compile(r"\\U[0-9a-fA-F]{8}"), "N": re.compile(r"\\N\{[^}]*\}")}
_OCTAL = re.compile(r"\\(0[0-7]{0,2}|[0-7]{3})")
_BACKREF = re.compile(r"\\(\d{1,2})")
_NO_FORM = {"(?>": "an atomic group (?>...)", "(?|": "a branch reset group (?|...)",
            "(?(": "a conditional group (?(...)...)", "(?R": "recursion (?R)", "(?&": "recursion (?&name)",
            "(?P>": "recursion (?P>name)"}
_REGEX_ONLY_ESCAPES = "GKXmMLCzEQ"


class UntranslatableRegex(ValueError):
    """A pattern with no JavaScript form; the message names the construct and says why."""


@dataclass(frozen=True)
class JsRegex:
    """A pattern in JavaScript syntax and the ``RegExp`` flags it needs (``""`` or ``"i"``)."""

    source: str
    flags: str = ""


@dataclass(frozen=True)
class _Mode:
    """The flags in force at a point of a Python pattern."""

    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = False
    verbose: bool = False
    ascii: bool = False

    def with_flags(self, on: str, off: str) -> _Mode:
        if "L" in on:
            raise UntranslatableRegex("the locale flag (?L) has no JavaScript form")
        changes = {name: letter in on for letter, name in _FLAG_NAMES.items() if letter in on + off}
        return replace(self, **changes)


_FLAG_NAMES = {"i": "ignore_case", "m": "multiline", "s": "dotall", "x": "verbose", "a": "ascii"}


def to_javascript(pattern: str, flags: str = "", *, dollar_is_end: bool = False) -> JsRegex:
    """``pattern`` (with rubric-studio's ``flags``, letters of ``imsx``) as JavaScript; ``dollar_is_end``:
    the caller already reads ``$`` as the very end (JavaScript's meaning). Raises UntranslatableRegex."""
    mode = _Mode().with_flags(flags, "")
    translator = _ToJavaScript(pattern, mode, dollar_is_end)
    source = translator.run()
    return JsRegex(source, "i" if translator.ignore_case else "")


class _ToJavaScript:
    """One pass over a Python pattern, writing its JavaScript form token by token."""

    def __init__(self, pattern: str, mode: _Mode, dollar_is_end: bool) -> None:
        self.text, self.at, self.mode, self.dollar_is_end = pattern, 0, mode, dollar_is_end
        self.out: list[str] = []
        self.groups: list[_Mode] = []  # the mode to restore at each open group's end
        self.ignore_case = mode.ignore_case  # the one case rule of the whole JavaScript pattern
        self.leading = True  # nothing matched yet: a flag group here sets the whole pattern's flags

    def run(self) -> str:
        while self._skip_verbose() < len(self.text):
            self._token()
        return "".join(self.out)

    def _skip_verbose(self) -> int:
        """Past whitespace and ``#`` comments when verbose (outside classes); the position reached."""
        while self.mode.verbose and self.at < len(self.text):
            char = self.text[self.at]
            if char.isspace():
                self.at += 1
            elif char == "#":
                end = self.text.find("\n", self.at)
                self.at = len(self.text) if end < 0 else end + 1
            else:
                break
        return self.at

    def _token(self) -> None:
        char = self.text[self.at]
        if char == "(":
            self._group()
            return
        self.leading = False
        if char == "\\":
            self._emit_atom(self._escape(in_class=False))
        elif char == "[":
            self._emit_atom(self._class())
        elif char == ")":
            self.at += 1
            self.mode = self.groups.pop() if self.groups else self.mode
            self.out.append(")")
            self._quantifier()
        elif char in "*+?{":
            self._quantifier(required=True)
        else:
            self.at += 1
            self._emit_atom(self._plain(char))

    def _plain(self, char: str) -> str:
        if char == ".":
            return "[\\s\\S]" if self.mode.dotall else DOT
        if char == "^":
            return CARET_MULTILINE if self.mode.multiline else "^"
        if char == "$":
            if self.mode.multiline:
                return DOLLAR_MULTILINE
            return "$" if self.dollar_is_end else DOLLAR
        if char in "]}":
            return "\\" + char
        return _literal(char)

    def _emit_atom(self, text: str) -> None:
        self.out.append(text)
        self._quantifier()

    def _quantifier(self, required: bool = False) -> None:
        """The quantifier after an atom (``{,n}`` as ``{0,n}``); a possessive one has no form."""
        self._skip_verbose()
        char = self.text[self.at:self.at + 1]
        braces = _QUANTIFIER.match(self.text, self.at) if char == "{" else None
        if braces and (braces.group(1) or braces.group(2)):  # {n}, {n,}, {n,m}, {,m} and {,}; {} is literal
            low, comma, high = braces.groups()
            self.out.append("{" + (low or "0") + comma + high + "}")
            self.at = braces.end()
        elif char and char in "*+?":
            self.out.append(char)
            self.at += 1
        elif required and char == "{":  # a brace that is no quantifier is a literal brace
            self.at += 1
            self._emit_atom("\\{")
            return
        else:
            return
        self._skip_verbose()
        follower = self.text[self.at:self.at + 1]
        if follower == "+":
            raise UntranslatableRegex(f"a possessive quantifier ({self.out[-1]}+) has no JavaScript form")
        if follower == "?":
            self.out.append("?")
            self.at += 1

    # -- groups ---------------------------------------------------------------------
    def _group(self) -> None:
        text, at = self.text, self.at
        for opener, what in _NO_FORM.items():
            if text.startswith(opener, at):
                raise UntranslatableRegex(f"{what} has no JavaScript form")
        if _RECURSION.match(text, at):
            raise UntranslatableRegex("recursion (?N) has no JavaScript form")
        if text.startswith("(?#", at):
            end = self.text.find(")", self.at)
            self.at = len(self.text) if end < 0 else end + 1
            return
        flag_group = _FLAG_GROUP.match(self.text, self.at)
        if flag_group and (flag_group.group(1) or flag_group.group(2)):
            self._flags(flag_group)
            return
        self.leading = False
        self.groups.append(self.mode)
        named, backref = _NAMED_GROUP.match(text, at), _NAMED_BACKREF.match(text, at)
        if backref:
            self.groups.pop()
            self.at = backref.end()
            self._emit_atom(f"\\k<{backref.group(1)}>")
        elif named:
            self.at = named.end()
            self.out.append(f"(?<{named.group(1)}>")
        else:
            opener = next((o for o in ("(?:", "(?=", "(?!", "(?<=", "(?<!") if text.startswith(o, at)), "(")
            if opener == "(" and text.startswith("(?", at):
                raise UntranslatableRegex(f"the group {text[at:at + 4]!r}... has no JavaScript form")
            self.at += len(opener)
            self.out.append(opener)

    def _flags(self, found: re.Match[str]) -> None:
        """``(?flags)`` (to the enclosing group's end) or ``(?flags:...)`` (a group of its own)."""
        on, off, end = found.group(1), found.group(2) or "", found.group(3)
        mode = self.mode.with_flags(on, off)
        self.at = found.end()
        if mode.ignore_case != self.ignore_case:
            if not (self.leading and end == ")" and not self.groups):
                raise UntranslatableRegex("case-insensitivity for part of a pattern ((?i) or (?-i) after its "
                                          "start, or (?i:...)) has no JavaScript form: its i flag covers all of it")
            self.ignore_case = mode.ignore_case
        if mode.ascii and mode.ignore_case:
            raise UntranslatableRegex("(?a) with case-insensitive matching has no JavaScript form: JavaScript's i "
                                      "flag folds letters beyond ASCII too")
        if end == ":":
            self.leading = False
            self.groups.append(self.mode)
            self.out.append("(?:")
        self.mode = mode

    # -- escapes and classes ----------------------------------------------------------
    def _escape(self, *, in_class: bool) -> str:
        """The JavaScript form of the escape at ``self.at`` (a backslash), which is consumed."""
        text, start = self.text, self.at
        letter = text[start + 1:start + 2]
        self.at = start + 2
        if not letter:
            raise UntranslatableRegex("a pattern cannot end with a backslash")
        if letter in "AZ" and not in_class:
            return START if letter == "A" else END
        if letter in "sS" and self.mode.ascii:
            if in_class and letter == "S":
                raise UntranslatableRegex("\\S inside a class with (?a) has no JavaScript form")
            return _ASCII_SPACE if in_class else ("[" if letter == "s" else "[^") + _ASCII_SPACE + "]"
        if letter in "dDwWsSbBnrtfv" or not letter.isalnum():
            return "\\" + letter
        if not letter.isascii():  # an escaped letter of another script is that letter
            return _class_literal(letter) if in_class else _literal(letter)
        if letter in "xuUN":
            return self._code_escape(letter, in_class)
        if letter == "a":
            return "\\x07"
        if letter.isdigit():
            return self._numeric_escape()
        raise UntranslatableRegex(f"the escape \\{letter} has no JavaScript form"
                                  + (" (a regex-module escape)" if letter in _REGEX_ONLY_ESCAPES else ""))

    def _code_escape(self, letter: str, in_class: bool) -> str:
        found = _CODE_ESCAPES[letter].match(self.text, self.at - 2)
        if found is None:
            raise UntranslatableRegex(f"the escape \\{letter} is incomplete")
        self.at = found.end()
        if letter in "xu":
            return found.group(0)
        if letter == "U":
            code = int(found.group(0)[2:], 16)
        else:
            try:
                code = ord(unicodedata.lookup(found.group(0)[3:-1]))
            except KeyError:
                raise UntranslatableRegex(f"{found.group(0)} names no character") from None
        return _code_point(code, in_class)

    def _numeric_escape(self) -> str:
        """A backreference ``\\1`` ... ``\\99`` (as written) or an octal escape (as ``\\x``/``\\u``)."""
        octal = _OCTAL.match(self.text, self.at - 2)
        if octal:
            self.at = octal.end()
            return _code_point(int(octal.group(1), 8), in_class=True)
        digits = _BACKREF.match(self.text, self.at - 2)
        assert digits is not None
        self.at = digits.end()
        return "\\" + digits.group(1)

    def _class(self) -> str:
        """A character class, ``[`` at ``self.at``; a ``]`` first in it is a literal."""
        text = self.text
        self.at += 1
        out = ["["]
        if text.startswith("^", self.at):
            out.append("^")
            self.at += 1
        if text.startswith("]", self.at):
            out.append("\\]")
            self.at += 1
        while self.at < len(text) and text[self.at] != "]":
            if _POSIX_CLASS.match(text, self.at):
                raise UntranslatableRegex("a POSIX class such as [[:alpha:]] has no JavaScript form")
            if text[self.at] == "\\":
                out.append(self._escape(in_class=True))
                continue
            char = text[self.at]
            self.at += 1
            out.append("\\[" if char == "[" else _class_literal(char))
        if self.at >= len(text):
            raise UntranslatableRegex("a character class is not closed")
        self.at += 1
        return "".join(out) + "]"


def _literal(char: str) -> str:
    """A literal character outside a class (one outside the BMP as a group of its two UTF-16 units)."""
    return f"(?:{char})" if ord(char) > 0xFFFF else char


def _class_literal(char: str) -> str:
    if ord(char) > 0xFFFF:
        raise UntranslatableRegex(f"{char!r} in a character class has no JavaScript form without the u flag")
    return char


def _code_point(code: int, in_class: bool) -> str:
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    if in_class:
        raise UntranslatableRegex(f"U+{code:X} in a character class has no JavaScript form without the u flag")
    high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
    return f"(?:\\u{high:04x}\\u{low:04x})"


# -- JavaScript to Python ------------------------------------------------------------------
#: What :func:`to_javascript` writes for a Python construct, the construct, and under which of the
#: pattern's flags the construct means exactly that (elsewhere the written form is read as it stands).
_WRITTEN: tuple[tuple[str, str, Callable[[str], bool]], ...] = (
    (DOLLAR, "$", lambda flags: "m" not in flags),
    (DOLLAR_MULTILINE, "$", lambda flags: "m" in flags),
    (CARET_MULTILINE, "^", lambda flags: "m" in flags),
    (START, "\\A", lambda flags: True),
    (END, "\\Z", lambda flags: True),
    (DOT, ".", lambda flags: "s" not in flags),
    ("[\\s\\S]", ".", lambda flags: "s" in flags),
)
_LINE_BREAKS = "\\n\\r\\u2028\\u2029"
_JS_NAMED = re.compile(r"\(\?<([^\W\d]\w*)>|\\k<([^\W\d]\w*)>")
#: JavaScript's ``[]`` (matches nothing) and ``[^]`` (matches anything).
_JS_EMPTY_CLASS = re.compile(r"\[\^?\]")


def python_regex(pattern: str, flags: str = "") -> str:
    """A JavaScript ``pattern`` (run with ``flags``) in Python syntax with the same meaning there."""
    out: list[str] = []
    at, in_class = 0, False
    while at < len(pattern):
        piece, at, in_class = _python_piece(pattern, at, in_class, flags)
        out.append(piece)
    return "".join(out)


def _python_piece(pattern: str, at: int, in_class: bool, flags: str) -> tuple[str, int, bool]:
    """(the Python form of the JavaScript token at ``at``, the position after it, inside a class after it)."""
    char = pattern[at]
    if in_class:
        if char == "\\":
            return pattern[at:at + 2], at + 2, True
        return char, at + 1, char != "]"
    for written, python, holds in _WRITTEN:
        if pattern.startswith(written, at) and holds(flags):
            return python, at + len(written), False
    named = _JS_NAMED.match(pattern, at)
    if named:
        name = named.group(1) or named.group(2)
        return (f"(?P<{name}>" if named.group(1) else f"(?P={name})"), named.end(), False
    if char == "\\":
        return pattern[at:at + 2], at + 2, False
    if char == "[":
        empty = _JS_EMPTY_CLASS.match(pattern, at)
        if empty:
            return ("(?!)" if empty.group(0) == "[]" else "[\\s\\S]"), empty.end(), False
        return "[", at + 1, True
    return _python_plain(char, flags), at + 1, False


def _python_plain(char: str, flags: str) -> str:
    """JavaScript's ``.``, ``^`` and ``$`` as Python reads them under the same flags."""
    if char == "." and "s" not in flags:
        return f"[^{_LINE_BREAKS}]"
    if char == "$":
        return f"(?=[{_LINE_BREAKS}]|\\Z)" if "m" in flags else "\\Z"
    if char == "^" and "m" in flags:
        return f"(?<![^{_LINE_BREAKS}])"
    return char
