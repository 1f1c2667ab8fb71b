"""The run history of a rubric on disk: its versions, kept beside the judge cache.

Each rubric (by its resolved path) has one JSON-lines file in ``history/`` next to the
judge cache (``$RUBRIC_STUDIO_CACHE`` or ``--cache-path``'s folder, else the user cache
folder; see :func:`rubric_studio.engine.cache.default_cache_path`). Every recorded or
updated :class:`~rubric_studio.engine.versions._versions.Version` is one line: number, timestamp,
kind, the fingerprints it was graded against (and, since annotators, who had labelled and who
made the label edit: absent in older files, which load as before), the rubric text, verdicts, cells, scores,
the labels snapshot and the agreement figures. A version updated in place is appended
again under its number; the last line of a number wins.

Writing: one ``O_APPEND`` write per line (other writers' lines never interleave; a line
torn by a crash is skipped on reading and the next append starts on a fresh line). When
the file holds more than 1.5 × ``max_versions`` lines or ``max_bytes`` bytes it is
compacted — the last ``max_versions`` versions, within ``max_bytes`` — and replaced
atomically (:func:`rubric_studio.core.atomic.write_text_safely`), never over a line
another writer appended meanwhile.

Reading is defensive: a line that is too long, not JSON, of another rubric or of an
unknown shape is skipped with a warning (:attr:`RunHistory.warnings`); a file that cannot
be read is an empty history with a warning. The history never makes the studio or the
command line fail.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from rubric_studio.core.atomic import (
    ABSENT,
    ChangedOnDisk,
    DiskState,
    locked,
    read_bytes,
    regular_target,
    write_text_safely,
)
from rubric_studio.engine.versions._versions import Version, VersionHistory

FORMAT = 1
FOLDER = "history"
MAX_VERSIONS = 200
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_WARNINGS = 5
_LATEST_TIME = 1e11  # seconds since the epoch: year 5138


def history_folder(cache_path: str | Path | None = None) -> Path:
    """The folder of run-history files: ``history/`` beside the judge cache file."""
    from rubric_studio.engine.cache import default_cache_path

    cache = Path(cache_path).expanduser() if cache_path is not None else default_cache_path()
    return cache.parent / FOLDER


def rubric_key(rubric_path: str | Path) -> str:
    """The rubric's resolved path: what a history file is keyed by."""
    path = Path(rubric_path).expanduser()
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path.absolute())


def history_path(rubric_path: str | Path, cache_path: str | Path | None = None) -> Path:
    """The history file of a rubric: ``<stem>-<hash of its resolved path>.jsonl``."""
    key = rubric_key(rubric_path)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(key).stem)[:40].strip(".-") or "rubric"
    return history_folder(cache_path) / f"{stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsonl"


class RunHistory:
    """The versions of one rubric on disk (see the module docstring)."""

    def __init__(self, path: str | Path, rubric_path: str | Path, *, max_versions: int = MAX_VERSIONS,
                 max_bytes: int = MAX_FILE_BYTES, max_line: int = MAX_LINE_BYTES):  # fmt: skip
        self.path = Path(path)
        self.rubric = rubric_key(rubric_path)
        self.max_versions = max(1, max_versions)
        self.max_bytes = max_bytes
        self.max_line = max_line
        self.warnings: list[str] = []
        self._problems = 0
        self._lines: int | None = None  # lines in the file, once read
        self._written: dict[int, str] = {}  # version number -> hash of its last line

    @classmethod
    def for_rubric(cls, rubric_path: str | Path, *, cache_path: str | Path | None = None,
                   max_versions: int = MAX_VERSIONS) -> RunHistory:  # fmt: skip
        return cls(history_path(rubric_path, cache_path), rubric_path, max_versions=max_versions)

    # -- reading ---------------------------------------------------------------------------
    def load(self) -> list[Version]:
        """Every readable version, oldest first (the last ``max_versions``)."""
        found: dict[int, Version] = {}
        for _line, version in self._entries(self._read()[0]):
            found[version.number] = version
        return [found[number] for number in sorted(found)][-self.max_versions :]

    def _read(self) -> tuple[bytes, DiskState | None]:
        """The file's bytes and what they hash to (None: only the end of an oversized file was read)."""
        try:
            target, info = regular_target(self.path)
            if info is None:
                return b"", ABSENT
            if info.st_size <= 2 * self.max_bytes:
                data, state = read_bytes(target)
                return data or b"", state
            return self._read_end(target), None
        except OSError as exc:
            self._warn(f"{self.path}: cannot read the run history ({exc.strerror or exc}); it is left as it is")
            return b"", None

    def _read_end(self, target: Path) -> bytes:
        self._warn(f"{self.path}: the run history is larger than expected; only its end is read")
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return b""
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - self.max_bytes))
            data = handle.read(self.max_bytes)
        return data.partition(b"\n")[2]  # the first line is cut

    def _entries(self, data: bytes) -> list[tuple[bytes, Version]]:
        """(line, version) of every valid line of this rubric, in file order; the rest warned about."""
        out: list[tuple[bytes, Version]] = []
        lines = data.split(b"\n")
        self._lines = sum(1 for line in lines if line.strip())
        for index, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if len(line) > self.max_line:
                self._warn(f"{self.path}:{index}: skipped: a line longer than {self.max_line} bytes")
                continue
            try:
                version = self._decode(json.loads(line, parse_constant=_no_constant))
            except (ValueError, RecursionError) as exc:
                self._warn(f"{self.path}:{index}: skipped: {_first_line(exc)}")
                continue
            if version is not None:
                out.append((line, version))
                self._written[version.number] = _hash(line)
        return out

    def _decode(self, data: Any) -> Version | None:
        """The version a line holds (None for another rubric's); ValueError says what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("format") != FORMAT:
            raise ValueError(f"unknown format {_brief(data.get('format'))} (expected {FORMAT})")
        if data.get("rubric") != self.rubric:
            self._warn(f"{self.path}: skipped a version of another rubric ({_brief(data.get('rubric'))})")
            return None
        number, timestamp = data.get("number"), data.get("timestamp")
        if type(number) is not int or not 1 <= number <= 10**9:
            raise ValueError("number: expected a positive integer")
        if type(timestamp) not in (int, float) or not 0 <= timestamp <= _LATEST_TIME:
            raise ValueError("timestamp: expected seconds since 1970")
        return Version(
            number, float(timestamp), _text(data, "text_hash", required=True),
            _mapping(data.get("verdicts"), "verdicts", _is_str), _cells(data.get("cells")),
            _mapping(data.get("scores"), "scores", _is_score), kind=_text(data, "kind", required=True),
            samples_fingerprint=_text(data, "samples_fingerprint"), labels_fingerprint=_text(data, "labels_fingerprint"),
            judge_key=_text(data, "judge_key"), labels=_labels(data.get("labels")),
            text=_text(data, "text", limit=self.max_line), rubric_path=self.rubric,
            stored_figures=_figures(data.get("agreement")),
            annotators_key=_text(data, "annotators_key"), labelled_by=_text(data, "labelled_by"),
        )  # fmt: skip

    # -- writing ---------------------------------------------------------------------------
    def append(self, version: Version) -> bool:
        """Append ``version`` (new or updated); False (and a warning) when it could not be written."""
        line = self._encode(version)
        if line is None:
            return False
        if self._written.get(version.number) == _hash(line):
            return True  # re-graded to the same results: nothing new to keep
        try:
            size = self._append_line(line)
        except OSError as exc:
            self._warn(f"{self.path}: cannot record v{version.number} in the run history ({exc.strerror or exc})")
            return False
        self._written[version.number] = _hash(line)
        if self._lines is not None:
            self._lines += 1
        if size > self.max_bytes or (self._lines or 0) > self.max_versions * 3 // 2:
            self.compact()
        return True

    def _encode(self, version: Version) -> bytes | None:
        record = {
            "format": FORMAT, "rubric": self.rubric, "number": version.number, "timestamp": version.timestamp,
            "kind": version.kind, "text_hash": version.text_hash, "samples_fingerprint": version.samples_fingerprint,
            "labels_fingerprint": version.labels_fingerprint, "judge_key": version.judge_key, "text": version.text,
            "verdicts": version.verdicts, "scores": version.scores, "agreement": version.figures(),
            "cells": version.cells, "labels": version.labels,
            "annotators_key": version.annotators_key, "labelled_by": version.labelled_by,
        }  # fmt: skip
        for dropped in ((), ("cells",), ("cells", "labels")):  # a huge sample set: keep what fits
            slim = {key: (None if key in dropped else value) for key, value in record.items()}
            try:
                line = json.dumps(slim, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            except (TypeError, ValueError) as exc:
                self._warn(f"{self.path}: cannot record v{version.number}: {exc}")
                return None
            if len(line) <= self.max_line:
                return line
        self._warn(f"{self.path}: v{version.number} is too large for the run history; not recorded")
        return None

    def _append_line(self, line: bytes) -> int:
        """Append one line with a single write; the file's size after it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):  # never between a compaction's read and its rename; refuses a planted link
            return self._append_locked(line)

    def _append_locked(self, line: bytes) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"{self.path} is not a regular file")
            if info.st_nlink > 1:
                raise OSError(f"{self.path} has {info.st_nlink} names (hard links): an append would change "
                              "a file elsewhere; not recorded")
            torn = info.st_size > 0 and os.pread(fd, 1, info.st_size - 1) != b"\n"
            data = (b"\n" if torn else b"") + line + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            return info.st_size + len(data)
        finally:
            os.close(fd)

    def compact(self) -> bool:
        """Rewrite the file with only the last version of each number, the last ``max_versions``,
        within ``max_bytes``; atomically and never over a line appended meanwhile. True when written."""
        for _attempt in range(2):
            with locked(self.path):
                compacted = self._compact_locked()
            if compacted is not None:
                return compacted
        return False

    def _compact_locked(self) -> bool | None:
        """One try of :meth:`compact` under the file's lock (None: a writer without it appended; again)."""
        data, state = self._read()
        latest: dict[int, bytes] = {}
        for line, version in self._entries(data):
            latest[version.number] = line
        kept = [latest[number] for number in sorted(latest)][-self.max_versions :]
        while len(kept) > 1 and sum(len(line) + 1 for line in kept) > self.max_bytes * 3 // 4:
            kept.pop(0)
        try:
            write_text_safely(self.path, b"".join(line + b"\n" for line in kept).decode(), expect=state)
        except ChangedOnDisk:
            return None  # another writer appended: read again
        except (OSError, UnicodeDecodeError) as exc:
            self._warn(f"{self.path}: cannot compact the run history ({_first_line(exc)})")
            return False
        self._lines = len(kept)
        return True

    def _warn(self, message: str) -> None:
        self._problems += 1
        if self._problems <= MAX_WARNINGS:
            self.warnings.append(message)
        elif self._problems == MAX_WARNINGS + 1:
            self.warnings.append(f"{self.path}: more problems in the run history not shown")


# -- validation of one line ------------------------------------------------------------------
def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _brief(value: Any) -> str:
    return repr(value)[:80]


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_score(value: Any) -> bool:
    return value is None or (type(value) in (int, float) and math.isfinite(value))


def _text(data: dict[str, Any], key: str, *, required: bool = False, limit: int = 1000) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError(f"{key}: expected text")
    return value


def _mapping(value: Any, what: str, valid) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(valid(item) for item in value.values()):
        raise ValueError(f"{what}: expected a mapping of sample ids")
    return value


def _cells(value: Any) -> dict[str, dict[str, str]]:
    cells = _mapping(value, "cells", lambda item: isinstance(item, dict))
    for statuses in cells.values():
        _mapping(statuses, "cells", _is_str)
    return cells


def _labels(value: Any) -> dict[str, dict[str, Any]] | None:
    if value is None:
        return None
    labels = _mapping(value, "labels", lambda item: isinstance(item, dict))
    for label in labels.values():
        if label.get("verdict") not in (None, "pass", "fail"):
            raise ValueError("labels: a verdict is pass or fail")
        label["criteria"] = _mapping(label.get("criteria"), "labels", lambda state: state in ("met", "unmet"))
    return labels


def _figures(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("overall"), dict):
        raise ValueError("agreement: expected overall figures")
    rows = [value["overall"], *_mapping(value.get("criteria"), "agreement", lambda item: isinstance(item, dict)).values()]
    if not all(_is_score(figure) for row in rows for figure in row.values()):
        raise ValueError("agreement: expected numbers")
    return value


def open_history(rubric_path: str | Path, *, cache_path: str | Path | None = None, limit: int = MAX_VERSIONS) -> VersionHistory:
    """A version history backed by the rubric's run-history file (beside the judge cache), its past loaded."""
    history = VersionHistory(limit, RunHistory.for_rubric(rubric_path, cache_path=cache_path, max_versions=limit))
    history.load_past()
    return history
