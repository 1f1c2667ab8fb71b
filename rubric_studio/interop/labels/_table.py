"""Labels as a table (CSV or JSON Lines): one row per sample × annotator.

Columns: ``id, annotator, verdict, score, note``, then one per criterion id of the rubric
(``met`` / ``unmet``; an analytic criterion's 0-10 score when the label has one). An empty cell is
no label for that field; importing sets every field the file has a column for (an empty cell clears
it) for the (sample, annotator) of each row, and leaves other annotators' labels and other columns
alone. A row with nothing filled in is skipped (an export of unlabelled samples to fill in), and
said so in the summary.

CSV is written with ``,`` and ``\n`` line ends; a cell holding ``,``, ``"``, a line break or
spaces at either end is quoted. Free text that a spreadsheet would run as a formula (``=``, ``+``,
``-``, ``@``, a tab or a carriage return first) is written after a ``'``, taken off again on import
(:func:`~rubric_studio.interop.labels._common.defuse`), so notes come back byte for byte. A file
separated by ``;`` or tabs is read too (the header line decides). JSON Lines keeps every text as it
is (no quote added or taken off).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from rubric_studio.core.labels import Label
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.interop.labels._common import (
    FIXED,
    ImportedLabels,
    SampleIds,
    annotator_name,
    cell_changes,
    cell_value,
    defuse,
    described,
    enough,
    json_kind,
    number_in,
    plain_number,
    read_json,
    restore,
    row_changes,
    text_or_none,
)

TABLE_FORMATS = ("csv", "jsonl")
#: Separators a CSV file may use, as a message names them.
SEPARATORS = {",": "','", ";": "';'", "\t": "tab"}
_NEEDS_QUOTES = re.compile(r'[,"\r\n]|^\s|\s$')


def export_table(rubric: Rubric, by_sample: Mapping[str, Mapping[str, Label]], fmt: str,
                 sample_ids: list[str] | None = None) -> str:
    """The labels as CSV or JSON Lines; ``sample_ids`` (the samples, in order) adds an empty row for each
    sample nobody labelled."""
    rows = list(_rows(rubric, by_sample, sample_ids))
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    lines = [_csv_line([*FIXED, *(c.key for c in rubric.criteria)])]
    lines += [_csv_line([_csv_cell(name, value) for name, value in row.items()]) for row in rows]
    return "".join(lines)


def _csv_line(cells: list[str]) -> str:
    """One CSV record: a cell holding ``,``, ``"``, CR, LF or spaces at either end is quoted (``"`` doubled);
    Python's own writer leaves a lone CR unquoted, which splits the row in every reader."""
    return ",".join('"' + cell.replace('"', '""') + '"' if _NEEDS_QUOTES.search(cell) else cell for cell in cells) + "\n"


def _rows(rubric: Rubric, by_sample: Mapping[str, Mapping[str, Label]],
          sample_ids: list[str] | None) -> Iterator[dict[str, Any]]:
    order = list(dict.fromkeys([*(sample_ids or []), *by_sample]))
    for sample_id in order:
        labels = by_sample.get(sample_id) or {}
        if not labels:
            yield {"id": sample_id, **dict.fromkeys(FIXED[1:]), **dict.fromkeys(c.key for c in rubric.criteria)}
        for annotator, label in labels.items():
            row: dict[str, Any] = {"id": sample_id, "annotator": annotator, "verdict": label.verdict,
                                   "score": plain_number(label.score), "note": label.note}
            row.update({c.key: cell_value(c, label) for c in rubric.criteria})
            yield row


def _csv_cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    return defuse(value) if name in ("id", "annotator", "note") else str(value)


# -- reading ----------------------------------------------------------------------------------
def read_table(text: str, path: str, rubric: Rubric, fmt: str, default_annotator: str,
               known: SampleIds | None = None) -> ImportedLabels:
    """The label changes in a CSV / JSON Lines table; RubricError (every problem, with line and column)
    when anything in it cannot be read — then nothing should be written. CSV ``text`` is the file as
    stored (line ends and all: a note's CR is kept); ``known``: the sample ids a label may name."""
    found = ImportedLabels()
    try:
        if fmt == "csv":
            names, cells = _csv_table(text, rubric, found)
        else:
            names, cells = _jsonl_table(text, path)
            _check_names(names, rubric, table=False)
    except _CellError as exc:
        raise RubricError([Problem(path, exc.line, exc.column, exc.message)]) from None
    problems = _read_rows(cells, rubric, default_annotator, found, path, csv=fmt == "csv", known=known)
    if problems:
        raise RubricError(problems)
    return found


def _read_rows(cells: Iterator[_Row] | list[_Row], rubric: Rubric, default_annotator: str, found: ImportedLabels,
               path: str, *, csv: bool, known: SampleIds | None) -> list[Problem]:
    """Read every row into ``found``; the problems of those that cannot be read."""
    criteria = {c.key: c for c in rubric.criteria}
    problems: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    empty = 0
    for row in _until_broken(cells, path, problems):
        if enough(problems, path):
            break
        try:
            sample_id, annotator, fields = _row(criteria, row, default_annotator, csv)
        except _CellError as exc:
            problems.append(Problem(path, exc.line, exc.column, exc.message))
            continue
        if sample_id is None:
            empty += 1
            continue
        _, line, column = _id_cell(row)
        if (sample_id, annotator) in seen:
            problems.append(Problem(path, line, column, f"a second row for sample {sample_id!r} by {annotator!r} "
                                                        f"(the first is on line {seen[sample_id, annotator]})"))
            continue
        seen[sample_id, annotator] = line
        unknown = known.unknown(sample_id) if known is not None else None
        if unknown is not None:
            problems.append(Problem(path, line, column, unknown))
        else:
            found.add(sample_id, annotator, row_changes(rubric, fields))
    if empty:
        found.remarks.append(f"{empty} row{'s' if empty != 1 else ''} with no label skipped")
    return problems


def _until_broken(rows: Iterator[_Row], path: str, problems: list[Problem]) -> Iterator[_Row]:
    """The rows, until one cannot be split into cells (a quote never closed, too few or too many cells):
    that problem is added to ``problems`` and reading stops there."""
    try:
        yield from rows
    except _CellError as exc:
        problems.append(Problem(path, exc.line, exc.column, exc.message))


class _CellError(Exception):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


#: One row: column name -> (value, line, column).
_Row = dict[str, tuple[Any, int, int]]


def _row(criteria: dict[str, Criterion], row: _Row, default_annotator: str,
         csv: bool) -> tuple[str | None, str, dict[str, Any]]:
    """(sample id, annotator, field -> value or changes) of one row; sample id None: a row with no label.
    ``criteria``: the rubric's, by id; ``csv``: text cells lose the ``'`` the export put before a formula."""
    fields: dict[str, Any] = {}
    for name, (value, line, column) in row.items():
        if name in ("id", "annotator"):
            continue
        try:
            fields[name] = _field(name, value, criteria, csv)
        except ValueError as exc:
            raise _CellError(line, column, f"{name}: {exc}") from None
    if all(_blank(value) for name, (value, _, _) in row.items() if name not in ("id", "annotator")):
        return None, "", {}
    value, line, column = _id_cell(row)
    if _blank(value) or isinstance(value, bool) or not isinstance(value, str | int):
        raise _CellError(line, column, f"id: expected the sample's id, got {described(value)}")
    sample_id = _text(str(value).strip(), csv)
    given, line, column = row.get("annotator", (None, line, 1))
    try:
        if not _blank(given) and not isinstance(given, str):
            raise ValueError(f"expected a name, got {json_kind(given)}")
        annotator = annotator_name(_text(given, csv)) if not _blank(given) else default_annotator
    except ValueError as exc:
        raise _CellError(line, column, f"annotator: {exc}") from None
    return sample_id, annotator, fields


def _id_cell(row: _Row) -> tuple[Any, int, int]:
    """The row's id cell (value, line, column); a JSON Lines row without one: None at the row's start."""
    return row.get("id", (None, next(iter(row.values()))[1], 1))


def _text(value: str, csv: bool) -> str:
    return restore(value) if csv else value


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _field(name: str, value: Any, criteria: dict[str, Criterion], csv: bool) -> Any:
    """One field's value (a criterion's: its label changes); ValueError says what was expected."""
    if name == "verdict":
        if _blank(value):
            return None
        if not isinstance(value, str) or value.strip().lower() not in ("pass", "fail"):
            raise ValueError(f"expected pass, fail or nothing, got {described(value)}")
        return value.strip().lower()
    if name == "score":
        number = None if _blank(value) else number_in(value)
        if number is None and not _blank(value):
            raise ValueError(f"expected a number from 0 to 10 or nothing, got {described(value)}")
        return number
    if name == "note":
        note = text_or_none(value)
        return None if note is None else _text(note, csv)
    return cell_changes(criteria[name], None if _blank(value) else value)


def _check_names(names: list[tuple[str, int, int]], rubric: Rubric, table: bool, separator: str = ",") -> None:
    """Every column is one of :data:`FIXED` or a criterion id (in a CSV header: once each, ``id`` among them)."""
    known = [*FIXED, *(c.key for c in rubric.criteria)]
    seen: set[str] = set()
    for name, line, column in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise _CellError(line, column, f"unknown column {described(name)}: not a criterion of {rubric.name} "
                                           f"({hint}expected {', '.join(known)})")
        if table and name in seen:
            raise _CellError(line, column, f"column {name!r} appears twice")
        seen.add(name)
    if table and "id" not in seen:
        raise _CellError(1, 1, f"expected an id column (the sample's id); the header is "
                               f"{SEPARATORS[separator].strip(chr(39))}-separated: {', '.join(n for n, _, _ in names)}")


# -- CSV ----------------------------------------------------------------------------------------
def _csv_table(text: str, rubric: Rubric, found: ImportedLabels) -> tuple[list[tuple[str, int, int]], Iterator[_Row]]:
    """(the header's names with their positions, its rows, read lazily) of a CSV text; the header is
    checked first, and a row with more cells than it is refused at the first cell too many."""
    text = text.removeprefix("\ufeff")
    reader = _CsvReader(text, _separator(text), limit=(len(FIXED) + len(rubric.criteria)) * 2 + 8)
    if reader.separator != ",":
        found.remarks.append(f"read as {SEPARATORS[reader.separator]}-separated")
    records = reader.records()
    first = next(records, None)
    if first is None:
        raise _CellError(1, 1, f"expected a header row: {', '.join(FIXED)}, then criterion ids")
    header = [(value.strip(), line, column) for value, line, column in first]
    _check_names(header, rubric, table=True, separator=reader.separator)
    reader.limit, reader.header_read = len(header), True
    return header, _csv_rows(records, header)


def _csv_rows(records: Iterator[list[tuple[str, int, int]]], header: list[tuple[str, int, int]]) -> Iterator[_Row]:
    for record in records:
        if len(record) < len(header):
            _, line, column = record[-1]
            raise _CellError(line, column, f"expected {len(header)} cells as in the header, got {len(record)}; "
                                           "write an empty cell for each field left blank")
        yield {name: record[i] for i, (name, _, _) in enumerate(header)}


def _separator(text: str) -> str:
    """The separator of a CSV text: the first of ``,``, ``;`` and tab found in its header line."""
    header = _LINE_BREAK.split(text.lstrip("\r\n"), maxsplit=1)[0]
    return next((sep for sep in SEPARATORS if sep in header), ",")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class _CsvReader:
    """The records of a CSV text (RFC 4180 with ``separator``: ``"`` quotes, ``""`` inside them; CR LF,
    LF or CR ends a record and is kept as written inside quotes), each cell with its line and column.
    A record longer than ``limit`` cells is refused at its first cell too many, before the rest of
    the line is read (the caller lowers ``limit`` to the header's width once it has the header)."""

    def __init__(self, text: str, separator: str, limit: int) -> None:
        self.text, self.separator, self.limit = text, separator, limit
        self.header_read = False
        self._unquoted = re.compile(f"[^{re.escape(separator)}\r\n]*")

    def records(self) -> Iterator[list[tuple[str, int, int]]]:
        """Every record with something in it, in order (blank lines are skipped)."""
        text, size = self.text, len(self.text)
        i, line, column = 0, 1, 1
        record: list[tuple[str, int, int]] = []
        while True:
            value, (i, end_line, end_column) = self._cell(i, line, column)
            record.append((value, line, column))
            if len(record) > self.limit:
                raise _CellError(line, column, self._too_long(len(record)))
            line, column = end_line, end_column
            if i < size and text[i] == self.separator:
                i, column = i + 1, column + 1
                continue
            if len(record) > 1 or record[0][0].strip():
                yield record
            if i >= size:
                return
            i, record, line, column = _LINE_BREAK.match(text, i).end(), [], line + 1, 1  # type: ignore[union-attr]

    def _too_long(self, cells: int) -> str:
        if self.header_read:
            return f"expected {self.limit} cells as in the header; this is cell {cells}"
        return (f"expected a header of at most {self.limit} columns ({', '.join(FIXED)} and the criterion ids); "
                f"this is column {cells}")

    def _cell(self, i: int, line: int, column: int) -> tuple[str, tuple[int, int, int]]:
        """The cell starting at ``text[i]`` and (index, line, column) just after it."""
        text = self.text
        if not text.startswith('"', i):
            end = self._unquoted.match(text, i).end()  # type: ignore[union-attr]
            return text[i:end], (end, line, column + end - i)
        value, end = _quoted(text, i, line, column)
        lines = _LINE_BREAK.findall(text, i, end)
        if lines:
            line, column = line + len(lines), end - max(text.rfind("\n", i, end), text.rfind("\r", i, end))
        else:
            column += end - i
        if end < len(text) and text[end] not in self.separator + "\r\n":
            raise _CellError(line, column, f"expected {SEPARATORS[self.separator]} or the end of the line "
                                           "after a quoted cell")
        return value, (end, line, column)


def _quoted(text: str, i: int, line: int, column: int) -> tuple[str, int]:
    """The quoted cell starting at ``text[i]`` (at ``line``:``column``): its value and the index after it."""
    parts, i = [], i + 1
    while True:
        close = text.find('"', i)
        if close < 0:
            raise _CellError(line, column, "a quoted cell is never closed (expected a closing \")")
        parts.append(text[i:close])
        if not text.startswith('""', close):
            return "".join(parts), close + 1
        parts.append('"')
        i = close + 2


# -- JSON Lines ---------------------------------------------------------------------------------
def _jsonl_table(text: str, path: str) -> tuple[list[tuple[str, int, int]], list[_Row]]:
    """(every key with its position, the rows) of a JSON Lines text (lines end at LF only: a JSON
    string may hold U+2028 or NEL as they are)."""
    names: list[tuple[str, int, int]] = []
    rows: list[_Row] = []
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        if not raw.strip():
            continue
        record = read_json(raw, path, line=number)  # RubricError with this line
        if not isinstance(record, dict):
            raise _CellError(number, 1, "expected an object {id, annotator, verdict, score, note, <criterion id>...}")
        row: _Row = {}
        for key, value in record.items():
            found = raw.find(json.dumps(key, ensure_ascii=False))
            column = found + 1 if found >= 0 else 1
            names.append((str(key), number, column))
            row[str(key)] = (value, number, column)
        rows.append(row)
    return names, rows
