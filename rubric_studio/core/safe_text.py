"""Text from user files made safe for each kind of output.

Sample ids, criterion ids, rubric names, rationales, quotes and notes come from files
someone else may have written. Every output path passes them through the helper for
its kind, so none of them can restyle, corrupt or take over what shows them:

* :func:`terminal_safe` — for anything a terminal shows: control characters (ESC, BEL,
  CR ...), C1 controls, bidirectional overrides and lone surrogates become visible
  stand-ins (``␛``, ``\\x9b``, ``\\u202e``), so no escape sequence reaches the terminal.
* :func:`escape_textual_markup` / :func:`escape_rich_markup` — for strings placed inside
  markup (``[b]...[/]``): terminal-safe, and every ``[`` escaped so no bracket is read as
  a tag (the two parsers treat backslashes differently). Better still, build
  ``rich.text.Text`` / ``textual.content.Content`` objects from :func:`terminal_safe` text.
* :func:`markdown_text` / :func:`markdown_code` — for Markdown tables: pipes, backticks,
  emphasis, brackets, angle brackets and line breaks cannot break the table.
* :func:`xml_text` — for XML 1.0 (JUnit): only characters XML allows; the caller still
  escapes ``<``, ``&`` and quotes with :mod:`xml.sax.saxutils`.
* :func:`json_safe` — for JSON written with ``ensure_ascii=False``: the characters JSON
  leaves raw but a terminal acts on (C1 controls, bidi overrides, lone surrogates) as
  ``\\uXXXX`` escapes, so the data still round-trips exactly.

No dependencies: core, engine, interop, cli and the studio all use the same rules.
"""

from __future__ import annotations

import re

#: C0 controls (but TAB and LF, which multi-line text keeps), DEL, C1 controls, the
#: bidirectional embedding/override/isolate controls, lone surrogates, and the two
#: non-characters XML forbids.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def _stand_in(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures": ␀ … ␛ … ␟
    if code == 0x7F:
        return "␡"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def terminal_safe(text: object, *, multiline: bool = False) -> str:
    """``text`` with every control character shown as a visible stand-in.

    Single-line (the default) also replaces line breaks and tabs (``␊``, ``␉``), for
    ids and table cells; ``multiline=True`` keeps LF and TAB.
    """
    string = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE if multiline else _UNSAFE_LINE
    if pattern.search(string) is None:
        return string
    return pattern.sub(_stand_in, string)


_RICH_OPEN = re.compile(r"(\\*)\[")


def escape_textual_markup(text: object, *, multiline: bool = False) -> str:
    """Terminal-safe text that Textual markup (``Static``, ``Label``, ``notify``) shows literally.

    Every ``[`` is escaped: Textual reads ``[$var]`` and ``[A]`` as tags, which
    ``textual.markup.escape`` leaves alone. Textual keeps other backslashes literal.
    """
    return terminal_safe(text, multiline=multiline).replace("[", "\\[")


def escape_rich_markup(text: object, *, multiline: bool = False) -> str:
    """Terminal-safe text that rich markup (``Text.from_markup``, rich tables, ``DataTable``
    string cells) shows literally: every ``[`` escaped, backslashes before it doubled."""
    safe = terminal_safe(text, multiline=multiline)
    if "[" not in safe:
        return safe
    return _RICH_OPEN.sub(lambda m: m.group(1) * 2 + "\\[", safe)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>#~])")


def markdown_text(text: object, *, line_break: str = " ") -> str:
    """``text`` for one Markdown table cell or line: specials backslash-escaped, line
    breaks as ``line_break`` (a space, or ``<br>`` where the cell may show several lines)."""
    safe = terminal_safe(text, multiline=True).replace("\t", " ")
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", safe)
    lines = [line.strip() for line in escaped.replace("\r", "").split("\n")]
    return line_break.join(line for line in lines if line)


def markdown_code(text: object) -> str:
    """``text`` as inline code that a backtick or pipe inside it cannot end or split."""
    safe = terminal_safe(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", safe)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or safe.startswith(" ") or safe.endswith(" ") else ""
    return f"{fence}{pad}{safe}{pad}{fence}"


def xml_text(text: object) -> str:
    """``text`` with only characters XML 1.0 allows (controls as visible stand-ins).

    Escape the result for its place (``xml.sax.saxutils.escape`` / ``quoteattr``).
    """
    return terminal_safe(text, multiline=True)


_JSON_RAW = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def json_safe(encoded: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` with the characters it leaves raw
    but a terminal acts on written as ``\\uXXXX`` escapes (they only occur inside strings)."""
    if _JSON_RAW.search(encoded) is None:
        return encoded
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
