"""Samples: the outputs a rubric is applied to.

Accepted sources: a folder of ``.txt`` / ``.md`` files (one sample each, id = file
stem), or a ``.jsonl``, ``.yaml``/``.yml`` or ``.csv`` file of records with the
fields ``id``, ``input``, ``output`` (alias ``submission``), ``ground_truth``
(alias ``expected``), ``messages`` (a chat transcript: the graded text is the last
assistant message), ``tool_calls``, ``metadata`` and ``label``. Other fields are
kept in ``metadata``. A bad record is reported with its file and line and skipped;
the others still load. :func:`iter_samples` streams, :func:`load_samples` collects.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric_studio.core.problems import Problem, RubricError

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
RECORD_SUFFIXES = (".jsonl", ".ndjson", ".yaml", ".yml", ".csv", ".json")
KNOWN_FIELDS = {
    "id",
    "input",
    "output",
    "submission",
    "ground_truth",
    "expected",
    "messages",
    "tool_calls",
    "metadata",
    "label",
}
EXTRACTORS = ("last_assistant", "all_assistant", "transcript")


@dataclass(slots=True)
class Sample:
    """One output to grade, with its context."""

    id: str
    output: str
    input: str | None = None
    ground_truth: str | None = None
    messages: list[dict[str, Any]] | None = None
    tool_calls: list[Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    label: Any = None
    source: str = ""

    def fingerprint(self) -> str:
        """Hash of everything a judge sees of this sample."""
        payload = json.dumps([self.output, self.input, self.ground_truth], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass
class SampleSet:
    """Samples loaded from one source, and the problems met on the way."""

    path: str
    samples: list[Sample]
    problems: list[Problem] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def by_id(self) -> dict[str, Sample]:
        return {s.id: s for s in self.samples}


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return str(content)


def extract_text(messages: list[Any], extractor: str = "last_assistant") -> str:
    """The graded text of a chat transcript."""
    turns = [m for m in messages if isinstance(m, dict)]
    if extractor == "transcript":
        return "\n\n".join(f"{m.get('role', '?')}: {_content_text(m.get('content'))}" for m in turns)
    assistant = [_content_text(m.get("content")) for m in turns if m.get("role") == "assistant"]
    if not assistant:
        raise ValueError("the transcript has no assistant message to grade")
    return "\n\n".join(assistant) if extractor == "all_assistant" else assistant[-1]


def _stringify(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def record_to_sample(record: Any, *, default_id: str, source: str, extractor: str = "last_assistant") -> Sample:
    """Build a Sample from one record; ValueError says what is wrong with it."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a record (mapping with 'id', 'output', ...), got {type(record).__name__}")
    output = record.get("output", record.get("submission"))
    messages = record.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise ValueError("'messages' must be a list of {role, content} turns")
    if output is None and messages:
        output = extract_text(messages, extractor)
    if output is None:
        near = [k for k in record if k not in KNOWN_FIELDS and difflib.get_close_matches(k, ["output", "submission", "messages"], n=1, cutoff=0.75)]
        hint = f" (is {near[0]!r} a misspelling of 'output'?)" if near else ""
        raise ValueError(f"record has no 'output' (or 'submission' / 'messages') to grade{hint}")
    sample_id = record.get("id", default_id)
    if sample_id is None or (isinstance(sample_id, str) and not sample_id.strip()):
        raise ValueError("'id' is empty")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("'metadata' must be a mapping")
    extra = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
    if extra:
        metadata = {**extra, **metadata}
    tool_calls = record.get("tool_calls")
    return Sample(
        id=str(sample_id),
        output=_stringify(output) or "",
        input=_stringify(record.get("input")),
        ground_truth=_stringify(record.get("ground_truth", record.get("expected"))),
        messages=messages,
        tool_calls=tool_calls if isinstance(tool_calls, list) else None,
        metadata=metadata,
        label=record.get("label"),
        source=source,
    )


def _iter_jsonl(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield Problem(str(path), number, exc.colno, f"not valid JSON: {exc.msg}; expected one JSON object per line")
                continue
            try:
                yield record_to_sample(record, default_id=f"{path.stem}-{number}", source=f"{path}:{number}", extractor=extractor)
            except ValueError as exc:
                yield Problem(str(path), number, 1, str(exc))


def _iter_json(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        yield Problem(str(path), exc.lineno, exc.colno, f"not valid JSON: {exc.msg}")
        return
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        yield Problem(str(path), 1, 1, "expected a JSON list of records (or {\"samples\": [...]})")
        return
    for index, record in enumerate(data):
        try:
            yield record_to_sample(record, default_id=f"{path.stem}-{index + 1}", source=f"{path}[{index}]", extractor=extractor)
        except ValueError as exc:
            yield Problem(str(path), None, None, f"record {index}: {exc}")


def _iter_yaml(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    from rubric_studio.core.yamlpos import load_with_positions

    try:
        data, positions, problems = load_with_positions(path.read_text(encoding="utf-8"), str(path))
    except RubricError as exc:
        yield from exc.problems
        return
    yield from problems
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data, prefix = data["samples"], ("samples",)
    if isinstance(data, dict):  # mapping: id -> record or text
        items = [((*prefix, key), {"id": key, **value} if isinstance(value, dict) else {"id": key, "output": value}) for key, value in data.items()]
    elif isinstance(data, list):
        items = [((*prefix, index), record) for index, record in enumerate(data)]
    else:
        yield Problem(str(path), 1, 1, "expected a list of records, a mapping of id -> record, or {samples: [...]}")
        return
    for node_path, record in items:
        line, column = positions.locate(node_path)
        try:
            yield record_to_sample(record, default_id=f"{path.stem}-{node_path[-1]}", source=f"{path}:{line}", extractor=extractor)
        except ValueError as exc:
            yield Problem(str(path), line, column, str(exc))


def _iter_csv(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    with path.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames:
            yield Problem(str(path), 1, 1, "the CSV has no header row; expected columns like id,input,output")
            return
        start = reader.line_num
        for row in reader:
            line = start + 1 if reader.line_num == start else reader.line_num
            start = reader.line_num
            if None in row:
                yield Problem(str(path), line, 1, f"row has {len(reader.fieldnames) + len(row[None])} cells but the header has {len(reader.fieldnames)}")
                continue
            record: dict[str, Any] = {k: v for k, v in row.items() if v != "" or k in ("output", "submission")}
            for key in ("metadata", "messages", "tool_calls", "label"):
                if isinstance(record.get(key), str) and record[key].lstrip()[:1] in ("{", "["):
                    try:
                        record[key] = json.loads(record[key])
                    except json.JSONDecodeError as exc:
                        yield Problem(str(path), line, 1, f"column {key!r} is not valid JSON: {exc.msg}")
                        record = {}
                        break
            if not record:
                continue
            try:
                yield record_to_sample(record, default_id=f"{path.stem}-{line}", source=f"{path}:{line}", extractor=extractor)
            except ValueError as exc:
                yield Problem(str(path), line, 1, str(exc))


def _iter_folder(path: Path) -> Iterator[Sample | Problem]:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            yield Problem(str(file), None, None, f"not UTF-8 text: {exc.reason} at byte {exc.start}")
            continue
        except OSError as exc:
            yield Problem(str(file), None, None, f"cannot read: {exc.strerror}")
            continue
        yield Sample(id=file.stem, output=text, source=str(file))


def iter_samples(path: str | Path, *, extractor: str = "last_assistant") -> Iterator[Sample | Problem]:
    """Stream samples (and problems) from a folder or a records file.

    Raises RubricError when the source is missing or of an unknown kind.
    Duplicate ids are reported and the later record is skipped.
    """
    source = Path(path)
    if extractor not in EXTRACTORS:
        raise RubricError([Problem(str(source), None, None, f"unknown extractor {extractor!r}; expected one of {', '.join(EXTRACTORS)}")])
    if not source.exists():
        raise RubricError([Problem(str(source), None, None, "samples not found: no such file or folder")])
    if source.is_dir():
        inner: Iterator[Sample | Problem] = _iter_folder(source)
    else:
        suffix = source.suffix.lower()
        readers = {".jsonl": _iter_jsonl, ".ndjson": _iter_jsonl, ".json": _iter_json, ".yaml": _iter_yaml, ".yml": _iter_yaml, ".csv": _iter_csv}
        if suffix in TEXT_SUFFIXES:
            inner = iter([Sample(id=source.stem, output=source.read_text(encoding="utf-8", errors="replace"), source=str(source))])
        elif suffix in readers:
            inner = readers[suffix](source, extractor)
        else:
            raise RubricError([Problem(str(source), None, None, f"unknown samples format {suffix or '(no suffix)'!r}; expected a folder of .txt/.md files, or .jsonl, .yaml, .csv")])
    seen: set[str] = set()
    for item in inner:
        if isinstance(item, Sample):
            if item.id in seen:
                where = item.source.rpartition(":")
                line = int(where[2]) if where[2].isdigit() else None
                yield Problem(where[0] if line else item.source or str(source), line, 1 if line else None, f"duplicate sample id {item.id!r}; this record is skipped")
                continue
            seen.add(item.id)
        yield item


def load_samples(path: str | Path, *, extractor: str = "last_assistant") -> SampleSet:
    """All samples of a source. Raises RubricError if none could be loaded."""
    samples: list[Sample] = []
    problems: list[Problem] = []
    for item in iter_samples(path, extractor=extractor):
        (samples if isinstance(item, Sample) else problems).append(item)
    if not samples:
        if not problems:
            problems.append(Problem(str(path), None, None, "no samples found (empty file or folder; expected .txt/.md files or records with an 'output')"))
        raise RubricError(problems)
    return SampleSet(str(path), samples, problems)
