"""Reading the user's files with one set of clear messages (never a traceback, never a hang).

:func:`read_user_file` is the one way a rubric, labels, prompt or foreign eval file is read:

* only regular files: a named pipe, ``/dev/zero`` or a socket is refused before a byte is
  read, and opening never blocks (see :func:`~rubric_studio.core.textstream.open_regular_file`);
* at most ``max_bytes`` (:data:`MAX_FILE_BYTES`, 20 MB, by default; a real rubric is a few KB);
* UTF-8 only (a BOM is accepted): a byte that is not UTF-8 is reported with its line and column;
* no C0 control characters other than tab, newline and carriage return (NUL, ESC ...), which
  no YAML or JSON file may contain raw: they are reported with their line and column too.

:func:`parse_user_json` is the JSON counterpart of :func:`rubric_studio.core.yamlpos._load.safe_load`.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import DiskState, UnsafeTarget, read_bytes
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.textstream import not_utf8_problem, open_regular_file
from rubric_studio.core.values import MAX_DEPTH, ValueProblem, check_plain_value, parse_int

#: Largest rubric, labels, prompt or foreign eval file read (bytes). Samples files have their own cap.
MAX_FILE_BYTES = 20 * 1024 * 1024
#: A judge prompt file is sent with every request: anything near this size is a mistake.
MAX_PROMPT_BYTES = 1024 * 1024
#: Largest samples file read whole (.json / .yaml samples, one text sample); .jsonl / .csv stream.
MAX_SAMPLES_BYTES = 256 * 1024 * 1024

_C0_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: What YAML forbids in a stream: C0 controls (but tab, LF, CR), DEL, C1 controls (but NEL),
#: lone surrogates and the two non-characters U+FFFE / U+FFFF.
_YAML_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_C0_NAMES = ("NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
             "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US")


def file_signature(path: str | os.PathLike[str]) -> tuple[int, int, int] | None:
    """A file's (mtime_ns, size, inode): what changes when it is written or replaced; None when it
    is not there. The cheap "did it change since I read it?" of watchers and the label store."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def line_and_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``text[index]``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def unprintable_problem(text: str, file: str, *, yaml: bool = False) -> Problem | None:
    """The first control character ``text`` may not contain, with its line and column; None if clean.

    ``yaml`` also refuses what YAML forbids beyond C0 controls (DEL, C1 controls, U+FFFE ...).
    """
    found = (_YAML_UNPRINTABLE if yaml else _C0_CONTROL).search(text)
    if found is None:
        return None
    code = ord(found.group())
    name = f" ({_C0_NAMES[code]})" if code < 0x20 else ""
    line, column = line_and_column(text, found.start())
    return Problem(file, line, column, f"control character U+{code:04X}{name} is not allowed in this file; "
                                       "remove it (in a double-quoted YAML string, write it as an escape like \\e)")


def _decode(data: bytes, file: str) -> str:
    """UTF-8 ``data`` as text; RubricError naming the line and column of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            raise RubricError([Problem(file, 1, 1, "not UTF-8 text: the file is UTF-16; save it as UTF-8")]) from None
        before = data[: exc.start]
        line_start = before.rfind(b"\n") + 1
        column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
        raise RubricError([not_utf8_problem(file, before.count(b"\n") + 1, column, data[exc.start])]) from None


def read_user_file(
    path: str | Path,
    what: str = "rubric",
    *,
    keep_newlines: bool = False,
    max_bytes: int = MAX_FILE_BYTES,
    controls_ok: bool = False,
    inside: Path | None = None,
) -> str:
    """The text of ``path``; RubricError naming the file (and line:column) and the reason when it cannot be used.

    ``keep_newlines`` keeps the text exactly as written — ``\\r\\n`` and a leading BOM — for
    round-trip editing; otherwise line endings become ``\\n`` and the BOM is dropped.
    ``controls_ok`` accepts control characters (a sample's text may hold anything).
    ``inside``: refuse a file that does not count as inside that folder (see
    :func:`~rubric_studio.core.textstream.open_regular_file`).
    """
    source = str(path)
    with open_regular_file(path, what, inside=inside) as handle:  # refuses FIFOs and devices without blocking
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RubricError([Problem(source, None, None, f"file larger than {max_bytes // (1024 * 1024)} MB; "
                                                       f"a {what} file is expected to be far smaller")])
    text = _decode(data, source)
    problem = None if controls_ok else unprintable_problem(text, source)
    if problem is not None:
        raise RubricError([problem])
    if keep_newlines:
        return text
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_user_file_state(path: str | Path, what: str = "rubric") -> tuple[str | None, DiskState]:
    """The text of ``path`` exactly as stored (no newline translation) and its :class:`DiskState`,
    for a write back over exactly that version; ``(None, ABSENT)`` when it does not exist.

    RubricError, as :func:`read_user_file` words it, when it cannot be read or used.
    """
    source = str(path)
    try:
        data, state = read_bytes(path, MAX_FILE_BYTES)
    except UnsafeTarget as exc:
        raise RubricError([Problem(source, None, None, f"expected a {what} file, but it {exc}")]) from None
    except OSError as exc:
        raise RubricError([Problem(source, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    if data is None:
        return None, state
    if len(data) > MAX_FILE_BYTES:
        raise RubricError([Problem(source, None, None, f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; "
                                                       f"a {what} file is expected to be far smaller")])
    return _decode(data, source), state


def parse_user_json(text: str, file: str, *, line: int = 1, max_depth: int = MAX_DEPTH) -> Any:
    """JSON ``text`` (found at ``line`` of ``file``) as data; RubricError with line:column otherwise.

    Nesting deeper than ``max_depth``, integers too long to print and lone surrogates are
    refused like syntax errors, so nothing downstream meets them.
    """
    try:
        value = json.loads(text, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise RubricError([Problem(file, line + exc.lineno - 1, exc.colno, f"invalid JSON: {exc.msg}")]) from None
    except RecursionError:
        raise RubricError([Problem(file, line, 1, f"JSON nested deeper than {max_depth} levels; refused")]) from None
    try:
        check_plain_value(value, max_depth=max_depth)
    except ValueProblem as exc:
        raise RubricError([Problem(file, line, 1, f"invalid JSON value: {exc}")]) from None
    return value


def read_prompt_file(path: str | Path) -> str:
    """The text of a judge prompt file (``judge.prompt_path``, a Letta ``prompt_path``), at most 1 MB."""
    return read_user_file(path, "prompt", max_bytes=MAX_PROMPT_BYTES)


def read_samples_file(path: str | Path, *, inside: Path | None = None) -> str:
    """The whole text of a samples file read at once (``.json``, ``.yaml``, a text sample), at most 256 MB;
    ``inside``: the samples folder the file must count as inside of (see :func:`read_user_file`)."""
    return read_user_file(path, "samples", max_bytes=MAX_SAMPLES_BYTES, controls_ok=True, inside=inside)
