"""Labels as a table (CSV or JSON Lines): one row per sample × annotator.

Columns: ``id, annotator, verdict, score, note``, then one per criterion id of the rubric
(``met`` / ``unmet``; an analytic criterion's 0-10 score when the label has one). An empty cell is
no label for that field; importing sets every field the file has a column for (an empty cell clears
it) for the (sample, annotator) of each row, and leaves other annotators' labels and other columns
alone. A row with nothing filled in is skipped (an export of unlabelled samples to fill in).
Free text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) is written
after a ``'``, taken off again on import.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

from rubric_studio.core.labels import Label
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.interop.labels._common import (
    FIXED,
    ImportedLabels,
    annotator_name,
    cell_changes,
    cell_value,
    defuse,
    number_in,
    plain_number,
    restore,
    row_changes,
)

TABLE_FORMATS = ("csv", "jsonl")


def export_table(rubric: Rubric, by_sample: Mapping[str, Mapping[str, Label]], fmt: str,
                 sample_ids: list[str] | None = None) -> str:
    """The labels as CSV or JSON Lines; ``sample_ids`` (the samples, in order) adds an empty row for each
    sample nobody labelled."""
    rows = list(_rows(rubric, by_sample, sample_ids))
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*FIXED, *(c.key for c in rubric.criteria)])
    for row in rows:
        writer.writerow([_csv_cell(name, value) for name, value in row.items()])
    return out.getvalue()


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
def read_table(text: str, path: str, rubric: Rubric, fmt: str, default_annotator: str) -> ImportedLabels:
    """The label changes in a CSV / JSON Lines table; RubricError (every problem, with line and column)
    when anything in it cannot be read — then nothing should be written."""
    try:
        names, cells = _csv_table(text) if fmt == "csv" else _jsonl_table(text)
        _check_names(names, rubric, table=fmt == "csv")
    except _CellError as exc:
        raise RubricError([Problem(path, exc.line, exc.column, exc.message)]) from None
    found, problems = ImportedLabels(), []
    seen: dict[tuple[str, str], int] = {}
    for row in cells:
        try:
            sample_id, annotator, fields = _row(rubric, row, default_annotator)
        except _CellError as exc:
            problems.append(Problem(path, exc.line, exc.column, exc.message))
            continue
        if sample_id is None:
            continue
        line = next(iter(row.values()))[1]
        if (sample_id, annotator) in seen:
            problems.append(Problem(path, line, 1, f"a second row for sample {sample_id!r} by {annotator!r} "
                                                   f"(the first is on line {seen[sample_id, annotator]})"))
            continue
        seen[sample_id, annotator] = line
        found.add(sample_id, annotator, row_changes(rubric, fields))
    if problems:
        raise RubricError(problems)
    return found


class _CellError(Exception):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


#: One row: column name -> (value, line, column).
_Row = dict[str, tuple[Any, int, int]]


def _row(rubric: Rubric, row: _Row, default_annotator: str) -> tuple[str | None, str, dict[str, Any]]:
    """(sample id, annotator, field -> value or changes) of one row; sample id None: a row with no label."""
    ids = {c.key: c for c in rubric.criteria}
    fields: dict[str, Any] = {}
    for name, (value, line, column) in row.items():
        if name in ("id", "annotator"):
            continue
        try:
            fields[name] = _field(name, value, ids)
        except ValueError as exc:
            raise _CellError(line, column, f"{name}: {exc}") from None
    if all(_blank(value) for name, (value, _, _) in row.items() if name not in ("id", "annotator")):
        return None, "", {}
    value, line, column = row.get("id", (None, next(iter(row.values()))[1], 1))
    if _blank(value) or not isinstance(value, str | int):
        raise _CellError(line, column, "id: expected the sample's id")
    sample_id = restore(str(value).strip())
    given, line, column = row.get("annotator", (None, line, 1))
    try:
        annotator = annotator_name(restore(str(given))) if not _blank(given) else default_annotator
    except ValueError as exc:
        raise _CellError(line, column, f"annotator: {exc}") from None
    return sample_id, annotator, fields


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _field(name: str, value: Any, criteria: dict) -> Any:
    """One field's value (a criterion's: its label changes); ValueError says what was expected."""
    if name == "verdict":
        if _blank(value):
            return None
        if not isinstance(value, str) or value.strip().lower() not in ("pass", "fail"):
            raise ValueError(f"expected pass, fail or nothing, got {value!r}")
        return value.strip().lower()
    if name == "score":
        number = None if _blank(value) else number_in(value)
        if number is None and not _blank(value):
            raise ValueError(f"expected a number from 0 to 10 or nothing, got {value!r}")
        return number
    if name == "note":
        return None if _blank(value) else restore(str(value))
    return cell_changes(criteria[name], None if _blank(value) else value)


def _check_names(names: list[tuple[str, int, int]], rubric: Rubric, table: bool) -> None:
    """Every column is one of :data:`FIXED` or a criterion id (in a CSV header: once each, ``id`` among them)."""
    known = [*FIXED, *(c.key for c in rubric.criteria)]
    seen: set[str] = set()
    for name, line, column in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise _CellError(line, column, f"unknown column {name!r}: not a criterion of {rubric.name} "
                                           f"({hint}expected {', '.join(known)})")
        if table and name in seen:
            raise _CellError(line, column, f"column {name!r} appears twice")
        seen.add(name)
    if table and "id" not in seen:
        raise _CellError(1, 1, f"expected an id column (the sample's id); the header is {', '.join(n for n, _, _ in names)}")


def _csv_table(text: str) -> tuple[list[tuple[str, int, int]], list[_Row]]:
    """(the header's names with their positions, the rows) of a CSV text."""
    records = list(_csv_records(text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")))
    if not records:
        raise _CellError(1, 1, f"expected a header row: {', '.join(FIXED)}, then criterion ids")
    header = [(value.strip(), line, column) for value, line, column in records[0]]
    rows: list[_Row] = []
    for record in records[1:]:
        if len(record) > len(header):
            _, line, column = record[len(header)]
            raise _CellError(line, column, f"expected {len(header)} cells as in the header, got {len(record)}")
        rows.append({name: record[i] if i < len(record) else ("", record[0][1], record[-1][2])
                     for i, (name, _, _) in enumerate(header)})
    return header, rows


def _csv_records(text: str) -> Iterator[list[tuple[str, int, int]]]:
    """The records of a CSV text (RFC 4180: ``,``, ``"`` quotes, ``""`` inside them), each cell with its
    line and column; blank lines are skipped."""
    i, line, column, size = 0, 1, 1, len(text)
    record: list[tuple[str, int, int]] = []
    while i <= size:
        start = (line, column)
        if i < size and text[i] == '"':
            value, i, line, column = _quoted(text, i, line, column)
            if i < size and text[i] not in ",\n":
                raise _CellError(line, column, "expected , or the end of the line after a quoted cell")
        else:
            end = i
            while end < size and text[end] not in ",\n":
                end += 1
            value, column, i = text[i:end], column + end - i, end
        record.append((value, *start))
        if i < size and text[i] == ",":
            i, column = i + 1, column + 1
            continue
        if any(cell[0] for cell in record) or len(record) > 1:
            yield record
        record, i, line, column = [], i + 1, line + 1, 1


def _quoted(text: str, i: int, line: int, column: int) -> tuple[str, int, int, int]:
    """A quoted cell starting at ``text[i]``: (its value, the index, line and column after it)."""
    start, parts = (line, column), []
    i, column = i + 1, column + 1
    while True:
        if i >= len(text):
            raise _CellError(*start, "a quoted cell is never closed (expected a closing \")")
        char = text[i]
        if char == '"':
            if text.startswith('""', i):
                parts.append('"')
                i, column = i + 2, column + 2
                continue
            return "".join(parts), i + 1, line, column + 1
        parts.append(char)
        i += 1
        line, column = (line + 1, 1) if char == "\n" else (line, column + 1)


def _jsonl_table(text: str) -> tuple[list[tuple[str, int, int]], list[_Row]]:
    """(every key with its position, the rows) of a JSON Lines text."""
    names: list[tuple[str, int, int]] = []
    rows: list[_Row] = []
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _CellError(number, exc.colno, f"not valid JSON: {exc.msg}") from None
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
