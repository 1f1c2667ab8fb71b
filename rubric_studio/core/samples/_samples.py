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

import difflib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric_studio.core.files import read_samples_file
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.samples._csv import iter_csv_records
from rubric_studio.core.textstream import iter_lines, iter_record_lines, open_regular_file
from rubric_studio.core.values import (
    ValueProblem,
    check_plain_value,
    lone_surrogate_escape_column,
    long_number_column,
    parse_int,
)

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
_DECODER = json.JSONDecoder(parse_int=parse_int)
LINK_HINT = ("; pass --allow-code to trust the files this samples folder links to for this run, "
             "or copy the file into the folder")
NO_SAMPLES = "no samples found (empty file or folder; expected .txt/.md files or records with an 'output')"


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
    return json.dumps(value, ensure_ascii=False, default=str)


def record_to_sample(record: Any, *, default_id: str, source: str, extractor: str = "last_assistant") -> Sample:
    """Build a Sample from one record; ValueError says what is wrong with it.

    The record is checked first (:func:`~rubric_studio.core.values.check_plain_value`): a lone
    surrogate, an integer too long to print or nesting past the limit makes it one bad record
    (a :class:`~rubric_studio.core.values.ValueProblem`) instead of an error far downstream.
    """
    if not isinstance(record, dict):
        raise ValueError(f"expected a record (mapping with 'id', 'output', ...), got {type(record).__name__}")
    check_plain_value(record)
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
    if isinstance(sample_id, dict | list):
        raise ValueError(f"'id' must be text or a number, got a {'list' if isinstance(sample_id, list) else 'mapping'}")
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


def _parse_json(text: str, file: str, first_line: int = 1, *, expected: str = "") -> Any:
    """The JSON value in ``text``, or a Problem saying where and why it cannot be read.

    Integers too long to convert become :class:`~rubric_studio.core.values.LongNumber`
    (reported with their record, not as a failure of the whole text).
    """
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        hint = f"; expected {expected}" if expected else ""
        return Problem(file, first_line + exc.lineno - 1, exc.colno, f"not valid JSON: {exc.msg}{hint}")
    except RecursionError:
        return Problem(file, first_line, 1, "JSON nested too deeply to read")


def _sample_or_problem(record: Any, where: tuple[str, int | None, int | None], *, default_id: str, source: str,
                       extractor: str, raw: str | None = None, prefix: str = "") -> Sample | Problem:
    """The sample built from ``record``, or one Problem at ``where`` (file, line, column)."""
    file, line, column = where
    try:
        return record_to_sample(record, default_id=default_id, source=source, extractor=extractor)
    except ValueProblem as exc:
        if raw is not None:  # point at the offending text in a one-line record
            found = {"surrogate": lone_surrogate_escape_column, "integer": long_number_column}.get(exc.kind)
            column = (found(raw) if found else None) or column
        return Problem(file, line, column, f"{prefix}{exc}")
    except ValueError as exc:
        return Problem(file, line, column, f"{prefix}{exc}")


def _iter_jsonl(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    file = str(path)
    with open_regular_file(path) as handle:
        for item in iter_record_lines(handle, file):
            if isinstance(item, Problem):
                yield item
                continue
            number, text = item
            record = _parse_json(text, file, number, expected="one JSON object per line")
            if isinstance(record, Problem):
                yield record
                continue
            yield _sample_or_problem(record, (file, number, 1), default_id=f"{path.stem}-{number}",
                                     source=f"{path}:{number}", extractor=extractor, raw=text)


def _iter_json(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    from rubric_studio.core.samples._json_positions import record_positions

    file = str(path)
    text = read_samples_file(path)
    data = _parse_json(text, file)
    if isinstance(data, Problem):
        yield data
        return
    whole = data
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        yield Problem(file, 1, 1, "expected a JSON list of records (or {\"samples\": [...]})")
        return
    positions = record_positions(text, whole, _DECODER) or []
    for index, record in enumerate(data):
        line, column = positions[index] if index < len(positions) else (None, None)
        yield _sample_or_problem(record, (file, line, column), default_id=f"{path.stem}-{index + 1}",
                                 source=f"{path}[{index}]", extractor=extractor, prefix=f"record {index + 1}: ")


def _yaml_items(data: Any) -> list[tuple[tuple[Any, ...], Any]] | None:
    """(node path, record) pairs of a YAML samples document, or None when its shape is wrong."""
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data, prefix = data["samples"], ("samples",)
    if isinstance(data, dict):  # mapping: id -> record or text
        return [((*prefix, key), {"id": key, **value} if isinstance(value, dict) else {"id": key, "output": value})
                for key, value in data.items()]
    if isinstance(data, list):
        return [((*prefix, index), record) for index, record in enumerate(data)]
    return None


def _iter_yaml(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    from rubric_studio.core.yamlpos import load_with_positions

    file = str(path)
    data, positions, problems = load_with_positions(read_samples_file(path), file)  # bounded: depth, aliases, size
    yield from problems
    items = _yaml_items(data)
    if items is None:
        yield Problem(file, 1, 1, "expected a list of records, a mapping of id -> record, or {samples: [...]}")
        return
    for node_path, record in items:
        line, column = positions.locate(node_path)
        yield _sample_or_problem(record, (file, line, column), default_id=f"{path.stem}-{node_path[-1]}",
                                 source=f"{path}:{line}", extractor=extractor)


def _csv_record(row: dict[str, str], file: str, line: int) -> dict[str, Any] | Problem:
    """A CSV row as a record: empty cells dropped, JSON-looking structured columns parsed."""
    record: dict[str, Any] = {k: v for k, v in row.items() if v != "" or k in ("output", "submission")}
    for key in ("metadata", "messages", "tool_calls", "label"):
        if isinstance(record.get(key), str) and record[key].lstrip()[:1] in ("{", "["):
            value = _parse_json(record[key], file, line)
            if isinstance(value, Problem):
                return Problem(file, line, 1, f"column {key!r}: {value.message}")
            record[key] = value
    return record


def _iter_csv(path: Path, extractor: str) -> Iterator[Sample | Problem]:
    file = str(path)
    with open_regular_file(path) as handle:
        for item in iter_csv_records(file, iter_lines(handle)):
            if isinstance(item, Problem):
                yield item
                continue
            line, row = item
            record = _csv_record(row, file, line)
            if isinstance(record, Problem):
                yield record
                continue
            yield _sample_or_problem(record, (file, line, 1), default_id=f"{path.stem}-{line}",
                                     source=f"{path}:{line}", extractor=extractor)


def _text_sample(file: Path, inside: Path | None = None) -> Sample | Problem:
    """One text file as one sample (id = file stem); with ``inside``, only a file that counts as inside that folder."""
    try:
        return Sample(id=file.stem, output=read_samples_file(file, inside=inside), source=str(file))
    except RubricError as exc:
        problem = exc.problems[0]
        if inside is not None and problem.message.startswith("not read:"):
            problem = Problem(problem.file, problem.line, problem.column, problem.message + LINK_HINT)
        return problem


def _iter_folder(path: Path, follow_links: bool) -> Iterator[Sample | Problem]:
    """The text files of a samples folder; unless ``follow_links``, a file that is a link to (or a
    hard link of) a file elsewhere is refused, so a folder someone else made cannot put, say,
    ``~/.ssh/id_rsa`` into the judge requests."""
    inside = None if follow_links else path.resolve()
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in TEXT_SUFFIXES and not p.is_dir())
    for file in files:
        yield _text_sample(file, inside)


def _reader_for(source: Path, extractor: str, follow_links: bool = False) -> Iterator[Sample | Problem]:
    """The reader of one source; RubricError when it is missing or of an unknown kind."""
    if not source.exists():
        raise RubricError([Problem(str(source), None, None, "samples not found: no such file or folder")])
    if source.is_dir():
        return _iter_folder(source, follow_links)
    suffix = source.suffix.lower()
    readers = {".jsonl": _iter_jsonl, ".ndjson": _iter_jsonl, ".json": _iter_json, ".yaml": _iter_yaml, ".yml": _iter_yaml, ".csv": _iter_csv}
    if suffix in TEXT_SUFFIXES:
        return iter([_text_sample(source)])
    if suffix in readers:
        return readers[suffix](source, extractor)
    raise RubricError([Problem(str(source), None, None, f"unknown samples format {suffix or '(no suffix)'!r}; expected a folder of .txt/.md files, or .jsonl, .yaml, .csv")])


def iter_samples(
    path: str | Path, *, extractor: str = "last_assistant", follow_links: bool = False
) -> Iterator[Sample | Problem]:
    """Stream samples (and problems) from a folder or a records file, in constant memory.

    Raises RubricError when the source is missing, of an unknown kind, not a regular file
    or not readable as a whole (.json / .yaml). Duplicate ids are reported and the later
    record is skipped; a source with nothing in it yields one "no samples found" problem;
    a read failure half-way ends the stream with a problem. In a folder, a file linked from
    elsewhere (symlink or hard link) is a problem unless ``follow_links`` (the user trusts it).
    """
    source = Path(path)
    if extractor not in EXTRACTORS:
        raise RubricError([Problem(str(source), None, None, f"unknown extractor {extractor!r}; expected one of {', '.join(EXTRACTORS)}")])
    inner = _reader_for(source, extractor, follow_links)
    seen: set[str | bytes] = set()
    anything = False
    try:
        for item in inner:
            anything = True
            if isinstance(item, Sample):
                key = _id_key(item.id)
                if key in seen:
                    yield _duplicate_problem(item, str(source))
                    continue
                seen.add(key)
            yield item
    except OSError as exc:
        yield Problem(str(source), None, None, f"cannot read: {exc.strerror or exc}")
        return
    if not anything:
        yield Problem(str(source), None, None, NO_SAMPLES)


def _duplicate_problem(sample: Sample, fallback: str) -> Problem:
    where = sample.source.rpartition(":")
    line = int(where[2]) if where[2].isdigit() else None
    shown = sample.id if len(sample.id) <= 80 else sample.id[:77] + "..."
    return Problem(where[0] if line else sample.source or fallback, line, 1 if line else None,
                   f"duplicate sample id {shown!r}; this record is skipped")


def _id_key(sample_id: str) -> str | bytes:
    """What duplicate detection remembers of an id: long ids by digest, so streaming memory stays small."""
    return sample_id if len(sample_id) <= 64 else hashlib.blake2b(sample_id.encode(), digest_size=16).digest()


def load_samples(path: str | Path, *, extractor: str = "last_assistant", follow_links: bool = False) -> SampleSet:
    """All samples of a source: a folder of ``.txt``/``.md`` files or a ``.jsonl``/``.yaml``/``.csv`` file
    (``follow_links``: see :func:`iter_samples`; ``extractor`` picks the graded text of a transcript).

    Returns:
        A :class:`SampleSet`: the samples, in order, and the problems of records that were skipped.
    Raises:
        RubricError: none could be loaded (each problem positioned).
    """
    samples: list[Sample] = []
    problems: list[Problem] = []
    for item in iter_samples(path, extractor=extractor, follow_links=follow_links):
        (samples if isinstance(item, Sample) else problems).append(item)
    if not samples:
        raise RubricError(problems)
    return SampleSet(str(path), samples, problems)
