"""Reading a user's text file safely: never blocking, bounded in memory, exact positions.

:func:`open_regular_file` refuses named pipes, devices and sockets before reading a byte
(``/dev/zero`` or a FIFO given as a file would otherwise hang or fill memory).
:func:`iter_lines` streams the lines of such a file in constant memory: a UTF-8 BOM is
dropped, a line longer than the cap is skipped (and flagged), and bytes that are not
UTF-8 are kept as markers so the caller can report their line and column instead of a
traceback or a silent guess at another encoding. Whole files are read by
:func:`rubric_studio.core.files.read_user_file`.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from rubric_studio.core.problems import Problem, RubricError

#: Longest line (in characters) a records file may have: one record, a few long answers.
MAX_LINE_CHARS = 16 * 1024 * 1024
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_NEWLINES = ("\n", "\r")


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular_file(path: str | Path, what: str = "samples", *, inside: Path | None = None) -> BinaryIO:
    """Open ``path`` for binary reading; RubricError unless it is a readable regular file.

    The file is checked before opening (no side effects on devices) and again on the open
    descriptor (no race with a file swapped in between); opening never blocks on a FIFO.
    With ``inside`` (a resolved folder), a file that does not count as inside it — reached
    through a symlink to elsewhere, with hard links elsewhere, in a hidden or credentials
    folder (:func:`rubric_studio.core.folders.outside_reason`) — is refused before a byte is read.
    """
    source = str(path)

    def fail(message: str) -> RubricError:
        return RubricError([Problem(source, None, None, message)])

    try:
        kind = file_kind(os.stat(source).st_mode)
        if kind is not None:
            raise fail(f"expected a {what} file, got {kind}")
        descriptor = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise fail(f"{what} not found: no such file") from None
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror or exc}") from None
    opened = os.fstat(descriptor)
    kind = file_kind(opened.st_mode)
    if kind is not None:
        os.close(descriptor)
        raise fail(f"expected a {what} file, got {kind}")
    if inside is not None:
        from rubric_studio.core.folders import outside_reason

        real = Path(os.path.realpath(source))
        reason = outside_reason(real, inside, opened)
        if reason is not None:
            os.close(descriptor)
            shown = "" if real == Path(os.path.abspath(source)) else f" (it is a link to {real})"
            raise fail(f"not read: this {what} file {reason.replace('the folder', f'the {what} folder')}{shown}")
    if hasattr(os, "set_blocking"):
        os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


@dataclass(slots=True)
class Line:
    """One physical line: its 1-based number and text (line ending kept).

    ``too_long`` lines have empty text: they were skipped without being held in memory.
    """

    number: int
    text: str
    too_long: bool = False

    def bad_byte(self) -> tuple[int, int] | None:
        """(1-based column, byte value) of the first byte that is not UTF-8, or None."""
        found = None if self.text.isascii() else _ESCAPED_BYTE.search(self.text)
        if found is None:
            return None
        return found.start() + 1, ord(found.group()) - 0xDC00


def not_utf8_problem(file: str, line: int, column: int, byte: int) -> Problem:
    """The message for a byte that is not UTF-8 (no encoding is guessed)."""
    return Problem(file, line, column, f"not UTF-8 text: byte 0x{byte:02x} cannot be decoded; save the file as UTF-8")


def too_long_problem(file: str, line: int, limit: int = MAX_LINE_CHARS) -> Problem:
    return Problem(file, line, 1, f"line longer than {limit:,} characters; it is skipped")


def iter_record_lines(handle: BinaryIO, file: str) -> Iterator[tuple[int, str] | Problem]:
    """The non-blank lines of a JSON Lines file as ``(line number, text)`` — line end and a leading
    BOM (files joined with ``cat`` keep each one) removed — or the Problem of a line that is too
    long or not UTF-8, which the caller reports and skips."""
    for line in iter_lines(handle):
        if line.too_long:
            yield too_long_problem(file, line.number)
            continue
        if not line.text.strip():
            continue
        bad = line.bad_byte()
        if bad is not None:
            yield not_utf8_problem(file, line.number, *bad)
            continue
        yield line.number, line.text.rstrip("\r\n").removeprefix("\ufeff")


def iter_lines(handle: BinaryIO, *, max_chars: int = MAX_LINE_CHARS) -> Iterator[Line]:
    """The lines of an open binary file, split on ``\\n``, ``\\r\\n`` or ``\\r`` (endings kept)."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
    number = 0
    while True:
        chunk = text.readline(max_chars)
        if not chunk:
            return
        number += 1
        if len(chunk) < max_chars or chunk.endswith(_NEWLINES):
            yield Line(number, chunk)
            continue
        while True:  # drain the rest of an overlong line without keeping it
            rest = text.readline(1 << 20)
            if not rest or rest.endswith(_NEWLINES):
                break
        yield Line(number, "", too_long=True)
