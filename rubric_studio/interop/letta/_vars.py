"""Letta per-sample rubric variables: ``{name}`` placeholders filled from the suite's dataset.

Letta formats a model judge's prompt with ``str.format`` rules: besides ``{input}``,
``{submission}`` and ``{ground_truth}``, every key of the sample's ``rubric_vars`` mapping is
a placeholder, filled with ``str(value)``; a placeholder no sample value exists for stops the
run, and a ``rubric_vars`` key named like a built-in is refused. The dataset (the suite's
``dataset:``, relative to the suite's folder) is a JSONL file whose rows carry ``rubric_vars``
(or ``metadata.rubric_vars``), or a CSV whose ``rubric_vars`` column holds a JSON object. A row
with its own ``rubric`` / ``rubric_path`` is graded with that text instead of the grader's
prompt, so its variables do not matter here.

A rubric-studio rubric is one text for every sample, so a placeholder is filled only when every
sample that uses the prompt gives it the same value; otherwise (values differ, a row lacks it,
the dataset cannot be read) it stays as literal text and a warning names it. The dataset is
read only when a prompt has such placeholders, only inside the suite's folder (a suite may come
from anyone, and what is read ends up in judge requests), and line by line with the bounded
readers.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric_studio.core.files import MAX_SAMPLES_BYTES, parse_user_json
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.samples import iter_csv_records
from rubric_studio.core.textstream import iter_lines, iter_record_lines, open_regular_file
from rubric_studio.core.trust import resolve_prompt_path
from rubric_studio.interop._common import Source, Warnings

RESERVED = ("input", "submission", "ground_truth")
#: Unreadable dataset rows reported one by one; the rest are counted in one more warning.
MAX_ROW_WARNINGS = 5
_FORMATTER = string.Formatter()


@dataclass
class _Values:
    """What the samples give one ``rubric_vars`` key: its first value, whether all agree, how many."""

    first: str
    uniform: bool = True
    present: int = 1
    distinct: set[int] = field(default_factory=set)

    def add(self, value: str) -> None:
        self.present += 1
        self.uniform = self.uniform and value == self.first
        self.distinct.add(hash(value))


@dataclass
class _Dataset:
    """The ``rubric_vars`` of a suite's dataset, or why they could not be read (``error``)."""

    label: str
    error: str | None = None
    rows: int = 0
    unreadable: int = 0
    own_rubric: int = 0
    values: dict[str, _Values] = field(default_factory=dict)

    def take(self, variables: dict[str, Any]) -> None:
        self.rows += 1
        for key, raw in variables.items():
            value = str(raw)  # what Letta substitutes
            known = self.values.get(key)
            if known is None:
                self.values[key] = _Values(value, distinct={hash(value)})
            else:
                known.add(value)


class RubricVars:
    """Fills the per-sample placeholders of a suite's judge prompts; reads the dataset once, when needed."""

    def __init__(self, source: Source, suite: dict[str, Any], warn: Warnings):
        self.source, self.suite, self.warn = source, suite, warn
        self._dataset: _Dataset | None = None

    def fill(self, grader: str, prompt: str) -> str:
        """``prompt`` with each placeholder every sample fills alike substituted (escaped, as Letta
        prompts are), others left as written; a warning for each placeholder either way."""
        try:
            parts = list(_FORMATTER.parse(prompt))
        except ValueError as exc:
            self.warn.add(f"grader {grader!r}: the prompt is not a valid Letta template ({exc}); Letta cannot "
                          "fill it, so its placeholders are kept as written")
            return prompt
        fields = [(name, conversion, spec) for _, name, spec, conversion in parts
                  if name is not None and _root(name) not in RESERVED]
        if not fields:
            return prompt
        filled: dict[tuple[str, str | None, str], str] = {}
        for name, conversion, spec in fields:
            value = self._value(grader, name)
            if value is not None:
                try:
                    filled[(name, conversion, spec or "")] = _format(value, conversion, spec or "")
                except ValueError as exc:
                    self.warn.add(f"grader {grader!r}: placeholder {{{name}}} cannot be formatted ({exc}); "
                                  "kept as literal text")
        return _rebuild(parts, filled) if filled else prompt

    def _value(self, grader: str, name: str) -> str | None:
        """The one value every sample gives ``name``, or None after warning why there is none."""
        head = f"grader {grader!r}: placeholder {{{name}}}"
        if not name or not name.isidentifier():
            self.warn.add(f"{head} is not a plain name Letta fills from rubric_vars; kept as literal text")
            return None
        dataset = self._read()
        why = _unresolved(name, dataset)
        if why is not None:
            self.warn.add(f"{head} is filled per sample from the dataset's rubric_vars; {why}, so it is kept "
                          "as literal text")
            return None
        self.warn.add(f"{head} filled with the value all {dataset.rows} samples of {dataset.label} give it in "
                      "rubric_vars")
        return dataset.values[name].first

    def _read(self) -> _Dataset:
        if self._dataset is None:
            self._dataset = _load(self.source, self.suite.get("dataset"), self.warn)
        return self._dataset


def _root(name: str) -> str:
    """The variable a field refers to (``a`` for ``a.b`` or ``a[0]``), as Letta's check reads it."""
    return re.split(r"[.\[]", name, maxsplit=1)[0]


def _format(value: str, conversion: str | None, spec: str) -> str:
    return _FORMATTER.format_field(_FORMATTER.convert_field(value, conversion), spec)


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _rebuild(parts: list[tuple[str, str | None, str | None, str | None]],
             filled: dict[tuple[str, str | None, str], str]) -> str:
    """The template again from its parsed parts, with the ``filled`` fields replaced by their text."""
    out: list[str] = []
    for literal, name, spec, conversion in parts:
        out.append(_escape(literal))
        if name is None:
            continue
        value = filled.get((name, conversion, spec or ""))
        if value is not None:
            out.append(_escape(value))
        else:
            out.append("{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(out)


def _unresolved(name: str, dataset: _Dataset) -> str | None:
    """Why ``name`` has no single value in ``dataset`` (None when it has one)."""
    if dataset.error is not None:
        return dataset.error
    if dataset.unreadable:
        return f"{dataset.unreadable} row(s) of {dataset.label} could not be read"
    if not dataset.rows:
        return f"no sample of {dataset.label} uses the grader's prompt"
    values = dataset.values.get(name)
    present = values.present if values else 0
    if present < dataset.rows:
        return (f"it is missing from {dataset.rows - present} of the {dataset.rows} samples of {dataset.label} "
                "(Letta refuses to run those)")
    assert values is not None
    if not values.uniform:
        return (f"it differs across the {dataset.rows} samples of {dataset.label} ({len(values.distinct)} distinct "
                "values; a per-sample rubric cannot be one rubric-studio rubric)")
    return None


# -- reading the dataset ----------------------------------------------------------
def _locate(source: Source, ref: Any) -> tuple[Path | None, str]:
    """(path to read, label for messages), or (None, why it is not read)."""
    if not isinstance(ref, str) or not ref.strip():
        return None, "the suite names no dataset"
    lowered = ref.strip().lower()
    if lowered.startswith(("https://", "http://")):
        return None, f"dataset {ref!r} is a download and is not fetched"
    if source.base_dir is None:
        return None, f"dataset {ref!r} cannot be read when the suite is given as text (import the file instead)"
    target, inside = resolve_prompt_path(ref, source.base_dir)
    if not inside:
        return None, f"dataset {ref!r} is outside the suite's folder and is not read (copy it next to the suite)"
    if target.suffix.lower() not in (".jsonl", ".csv"):
        return None, f"dataset {ref!r} is neither .jsonl nor .csv (the only datasets Letta reads)"
    folder = os.path.dirname(source.file) if not source.file.startswith("<") else ""
    return target, os.path.normpath(os.path.join(folder, ref))


def _load(source: Source, ref: Any, warn: Warnings) -> _Dataset:
    """The dataset's rubric_vars; unreadable rows are warned about with their file:line."""
    target, label = _locate(source, ref)
    if target is None:
        return _Dataset(str(ref), error=label)
    dataset = _Dataset(label)
    reported = 0
    try:
        with open_regular_file(target, "dataset") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_SAMPLES_BYTES:
                dataset.error = f"{label} is larger than {MAX_SAMPLES_BYTES // (1024 * 1024)} MB and is not read"
                return dataset
            rows = _csv_rows(label, handle) if target.suffix.lower() == ".csv" else _jsonl_rows(label, handle)
            for item in rows:
                if isinstance(item, Problem):
                    dataset.unreadable += 1
                    reported += 1
                    if reported <= MAX_ROW_WARNINGS:
                        warn.add(f"{item.location()}: {item.message}; row skipped")
                    continue
                own_rubric, variables = item
                if own_rubric:
                    dataset.own_rubric += 1
                else:
                    dataset.take(variables)
    except RubricError as exc:
        reason = exc.problems[0].message if exc.problems else "cannot read"
        dataset.error = f"dataset {label} cannot be read ({reason})"
        return dataset
    if reported > MAX_ROW_WARNINGS:
        warn.add(f"{label}: {reported - MAX_ROW_WARNINGS} more unreadable row(s) skipped")
    if dataset.own_rubric:
        warn.add(f"{label}: {dataset.own_rubric} sample(s) carry their own rubric (rubric/rubric_path), which "
                 "Letta uses instead of the graders' prompts; only the graders' prompts are imported")
    return dataset


Row = tuple[bool, dict[str, Any]] | Problem


def _checked(variables: Any, file: str, line: int) -> dict[str, Any] | Problem:
    """A row's ``rubric_vars`` (None → empty), or the Problem Letta would fail the row on."""
    if variables is None:
        return {}
    if not isinstance(variables, dict):
        return Problem(file, line, 1, f"rubric_vars must be a JSON object, got {type(variables).__name__}")
    clash = sorted(key for key in variables if key in RESERVED)
    if clash:
        return Problem(file, line, 1, f"rubric_vars key {clash[0]!r} is a built-in placeholder; Letta refuses it")
    return variables


def _jsonl_rows(file: str, handle: Any) -> Iterator[Row]:
    """(has its own rubric, rubric_vars) per JSONL row, read as Letta's loader reads it."""
    for item in iter_record_lines(handle, file):
        if isinstance(item, Problem):
            yield item
            continue
        number, text = item
        try:
            record = parse_user_json(text.strip(), file, line=number)
        except RubricError as exc:
            yield exc.problems[0]
            continue
        if not isinstance(record, dict):
            yield Problem(file, number, 1, f"expected one JSON object per line, got {type(record).__name__}")
            continue
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        variables = _checked(record.get("rubric_vars") or metadata.get("rubric_vars"), file, number)
        own = record.get("rubric") is not None or record.get("rubric_path") is not None
        yield variables if isinstance(variables, Problem) else (own, variables)


def _csv_rows(file: str, handle: Any) -> Iterator[Row]:
    """(has its own rubric, rubric_vars) per CSV row; ``rubric_vars`` is a cell holding a JSON object."""
    for item in iter_csv_records(file, iter_lines(handle)):
        if isinstance(item, Problem):
            yield item
            continue
        line, row = item
        cell = (row.get("rubric_vars") or "").strip()
        try:
            parsed = parse_user_json(cell, file, line=line) if cell else None
        except RubricError as exc:
            problem = exc.problems[0]
            yield Problem(file, line, 1, f"column 'rubric_vars': {problem.message}")
            continue
        variables = _checked(parsed, file, line)
        own = bool((row.get("rubric") or "").strip() or (row.get("rubric_path") or "").strip())
        yield variables if isinstance(variables, Problem) else (own, variables)
