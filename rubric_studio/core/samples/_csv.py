"""CSV records, streamed, with every broken record reported at its line.

The ``csv`` module alone swallows the rest of a file into one field after an unclosed
quote, raises past its 128 kB field limit, and loses track of lines. Here the lines come
from :func:`~rubric_studio.core.textstream.iter_lines` through a feed that remembers the
lines of the record being read, so that:

- a record with bytes that are not UTF-8 is reported at that line and column and skipped;
- a quote left open (the rest of the file, or the lines up to the next quote, read as one
  field) is reported as "unclosed quote opened on line N", that record is skipped and
  reading resumes on the line after the quote;
- a record longer than :data:`MAX_RECORD_CHARS` ends the reading with a clear message
  (memory stays bounded);
- other malformed records (``"a"b``, a NUL) are reported and the next line starts afresh.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

from rubric_studio.core.problems import Problem
from rubric_studio.core.textstream import MAX_LINE_CHARS, Line, not_utf8_problem, too_long_problem

#: Longest record (all its lines) held in memory while it is parsed.
MAX_RECORD_CHARS = MAX_LINE_CHARS
#: Unclosed quotes recovered from before the rest of a file is given up as unreadable.
MAX_RECOVERIES = 1000

CsvItem = tuple[int, dict[str, str]] | Problem


class _LineTooLong(Exception):
    def __init__(self, line: Line):
        self.line = line


class _RecordTooLarge(Exception):
    pass


class _LineFeed:
    """The text lines given to ``csv.reader``; keeps the current record's lines for reporting."""

    def __init__(self, lines: Iterator[Line], max_record_chars: int):
        self._lines = lines
        self._pushed: list[Line] = []
        self._max = max_record_chars
        self.record: list[Line] = []
        self._chars = 0
        self.exhausted = False

    def __iter__(self) -> _LineFeed:
        return self

    def __next__(self) -> str:
        if self._pushed:
            line = self._pushed.pop()
        else:
            try:
                line = next(self._lines)
            except StopIteration:
                self.exhausted = True
                raise
        if line.too_long:
            raise _LineTooLong(line)
        self.record.append(line)
        self._chars += len(line.text)
        if self._chars > self._max:
            raise _RecordTooLarge
        return line.text

    def start_record(self) -> None:
        self.record, self._chars = [], 0

    def push_back(self, lines: list[Line]) -> None:
        """Read ``lines`` again, before anything not read yet."""
        self._pushed.extend(reversed(lines))
        self.exhausted = False


def runaway_quote(lines: list[Line]) -> tuple[int, int] | None:
    """(line, column) of the first quote that opens a field running past its line end, or None.

    A quote opened and never closed takes the following lines into its field; when a later
    quote then "closes" it, parsing breaks further down. Either way the culprit is here.
    """
    in_quotes, field_start, opened = False, True, None
    for line in lines:
        text, index = line.text, 0
        while index < len(text):
            char = text[index]
            if in_quotes:
                if char == '"':
                    if text.startswith('"', index + 1):
                        index += 1
                    else:
                        in_quotes = False
                elif char in "\r\n":
                    return opened
            elif char == '"' and field_start:
                in_quotes, opened, field_start = True, (line.number, index + 1), False
            else:
                field_start = char in ",\r\n"
            index += 1
    return opened if in_quotes else None


def _bad_byte_problem(file: str, lines: list[Line]) -> Problem | None:
    for line in lines:
        bad = line.bad_byte()
        if bad is not None:
            return not_utf8_problem(file, line.number, *bad)
    return None


def _rows(file: str, lines: Iterator[Line]) -> Iterator[tuple[int, list[str]] | Problem]:
    """Each row as (first line, cells), or a Problem for a record that cannot be read."""
    if csv.field_size_limit() < MAX_RECORD_CHARS:
        csv.field_size_limit(MAX_RECORD_CHARS)  # our own per-record cap applies instead
    feed = _LineFeed(lines, MAX_RECORD_CHARS)
    reader = csv.reader(feed, strict=True)
    recoveries = 0
    while True:
        feed.start_record()
        try:
            cells = next(reader)
        except StopIteration:
            return
        except _LineTooLong as exc:
            yield too_long_problem(file, exc.line.number)
            continue
        except _RecordTooLarge:
            yield _too_large_problem(file, feed.record)
            return
        except csv.Error as exc:
            if not feed.exhausted and len(feed.record) < 2:
                yield _malformed_problem(file, feed.record, exc)
                continue
            recoveries += 1
            yield from _recover_unclosed(file, feed, recoveries)
            if recoveries >= MAX_RECOVERIES:
                return
            continue
        if not cells or not feed.record:
            continue
        bad = _bad_byte_problem(file, feed.record)
        yield bad if bad is not None else (feed.record[0].number, cells)


def _malformed_problem(file: str, record: list[Line], exc: csv.Error) -> Problem:
    hint = "; a quote inside a quoted field is written twice (\"\")" if "expected after" in str(exc) else ""
    return Problem(file, record[0].number if record else None, 1, f"malformed CSV record: {exc}{hint}")


def _too_large_problem(file: str, record: list[Line]) -> Problem:
    start = record[0].number if record else None
    opened = runaway_quote(record)
    if opened is not None:
        return Problem(file, *opened, f"unclosed quote opened on line {opened[0]}: the record runs past "
                       f"{MAX_RECORD_CHARS:,} characters; the rest of the file is not read")
    return Problem(file, start, 1, f"record longer than {MAX_RECORD_CHARS:,} characters; the rest of the file is not read")


def _recover_unclosed(file: str, feed: _LineFeed, recoveries: int) -> Iterator[Problem]:
    """Report the quote that swallowed the following lines and re-read the lines after it."""
    record = feed.record
    line, column = runaway_quote(record) or ((record[0].number, 1) if record else (None, None))
    if recoveries >= MAX_RECOVERIES:
        yield Problem(file, line, column, f"unclosed quote opened on line {line}; after {MAX_RECOVERIES} "
                      "broken records the rest of the file is not read")
        return
    yield Problem(file, line, column, f"unclosed quote opened on line {line}: the record is skipped "
                  f"and reading resumes on line {line + 1 if line else '?'}")
    feed.push_back([kept for kept in record if line is not None and kept.number > line])


def iter_csv_records(file: str, lines: Iterator[Line]) -> Iterator[CsvItem]:
    """(first line, {column: value}) for each data row, or a Problem; the first row is the header."""
    header: list[str] | None = None
    for item in _rows(file, lines):
        if isinstance(item, Problem):
            yield item
            if header is None:
                return
            continue
        line, cells = item
        if header is None:
            header = cells
            continue
        if len(cells) > len(header):
            yield Problem(file, line, 1, f"row has {len(cells)} cells but the header has {len(header)}")
            continue
        yield line, dict(zip(header, cells, strict=False))
    if header is None:
        yield Problem(file, 1, 1, "the CSV has no header row; expected columns like id,input,output")
