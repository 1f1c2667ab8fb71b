"""The labels journal: every label written while people label, one line appended per label.

Rewriting the sidecar for each label costs what the file holds (seconds at 100,000 labels). A
label is instead one JSON line appended, under the folder's write lock and fsync'd before the
write returns, to ``.rubric-studio/<sidecar name>.journal`` beside the sidecar (the tool's
working folder, ignored by git). Readers read the sidecar and then the journal's lines over it;
:func:`rubric_studio.core.labels.fold_journal` folds the journal into the sidecar (comments
kept, entry by entry) and empties it. The sidecar stays the file people read, edit and commit.

Each line records the sidecar's signature (mtime, size, inode) as it was when the line was
written. A line whose signature differs from the sidecar's now was written before someone
changed the sidecar outside rubric-studio (an editor, a ``git pull``): it is applied only when
that change did not touch the same field — compared against a copy of the sidecar as it was
(``<sidecar name>.base-<signature>``, made by the first line written over each version) — and
otherwise kept aside in ``<sidecar name>.superseded`` (the later change wins, nothing is lost
without a trace). A line cut short by a killed writer (no newline) was never acknowledged: it
is skipped and cut off before the next append.

Writers and the fold hold the folder's lock; readers do not (a read-only checkout can still be
read). A fold may therefore land while a reader reads: between its reading of the sidecar and of
the journal, or between finding a base copy and opening it (the fold removes the copies). A
reader notes what it started from (:func:`read_point`) and reads again when that moved or a copy
it looked for vanished (:mod:`rubric_studio.core.labels._overlay`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rubric_studio.core.atomic import open_working_file, state_folder
from rubric_studio.core.files import file_signature
from rubric_studio.core.labels._labels import Label, LabelChange, parse_label
from rubric_studio.core.labels._wording import check_fingerprint

#: A sidecar's signature: (mtime_ns, size, inode); None when it does not exist.
Signature = tuple[int, int, int] | None
#: The longest journal line read (a label with a long note); a longer one is a problem, skipped.
MAX_LINE = 1 << 20


signature = file_signature


def journal_path(sidecar: str | os.PathLike[str], *, create: bool = False) -> Path:
    """Where ``sidecar``'s journal lives (its folder's working folder; made with ``create``)."""
    return state_folder(sidecar, create=create) / f"{Path(sidecar).name}.journal"


def _base_path(journal: Path, base: Signature) -> Path:
    digest = hashlib.sha256(repr(base).encode()).hexdigest()[:16]
    return journal.with_name(journal.name.removesuffix(".journal") + f".base-{digest}")


def superseded_path(journal: Path) -> Path:
    return journal.with_name(journal.name.removesuffix(".journal") + ".superseded")


@dataclass(frozen=True)
class Entry:
    """One label change in the journal."""

    sample_id: str
    annotator: str
    change: LabelChange
    #: The sidecar's signature when the line was written.
    base: Signature
    #: When it was written (seconds since the epoch).
    time: float = 0.0

    def to_line(self) -> bytes:
        value = self.change.value
        if isinstance(value, Label):
            value = value.to_yaml_data()
        data = {"s": self.sample_id, "a": self.annotator, "f": self.change.field, "c": self.change.criterion,
                "v": value, "b": list(self.base) if self.base else None, "t": round(self.time, 3)}
        if self.change.given_under is not None:  # the wording a cell answered (lines without it still read)
            data["g"] = self.change.given_under
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

    @classmethod
    def from_line(cls, line: bytes) -> Entry:
        """ValueError when the line is not an entry."""
        try:
            data = json.loads(line)
            field, value = data["f"], data["v"]
            if field == "label" and value is not None:
                value = parse_label(value, where="journal")
            base = data.get("b")
            given = data.get("g")
            if given is not None:
                check_fingerprint(given, "journal: g")
            return cls(str(data["s"]), str(data["a"]), LabelChange(field, value, data.get("c"), given),
                       tuple(base) if base else None, float(data.get("t") or 0.0))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a journal entry: {exc}") from None


def _open(path: Path, flags: int) -> int:
    return open_working_file(path, flags, "labels journal or its files")


def append(journal: Path, entries: list[Entry], sidecar: Path) -> int:
    """Append ``entries`` and fsync (the caller holds the folder's lock); the journal's size after.

    The first line written over a version of the sidecar keeps a copy of that version (see the
    module docstring); a line a killed writer left unfinished is cut off first.
    """
    for base in {e.base for e in entries}:
        _keep_base(journal, base, sidecar)
    fd = _open(journal, os.O_RDWR | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a torn line: never acknowledged
            cut = _last_newline(fd, size)
            os.ftruncate(fd, cut)
            size = cut
        data = b"".join(e.to_line() for e in entries)
        if size == 0:  # a new journal: its id, so readers can tell it from the one emptied before it
            data = json.dumps({"journal": uuid.uuid4().hex}).encode() + b"\n" + data
        os.lseek(fd, size, os.SEEK_SET)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
        return size + len(data)
    finally:
        os.close(fd)


def _last_newline(fd: int, size: int) -> int:
    """The offset just after the last newline before ``size`` (0: none)."""
    position = size
    while position > 0:
        start = max(0, position - 65536)
        chunk = os.pread(fd, position - start, start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0


def _keep_base(journal: Path, base: Signature, sidecar: Path) -> None:
    """Keep a copy of the sidecar as it is at ``base`` (once per version), for lines written over it."""
    if base is None:
        return
    copy = _base_path(journal, base)
    if copy.exists():
        return
    tmp = copy.with_name(copy.name + ".tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        fd = _open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with open(sidecar, "rb") as source, os.fdopen(fd, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        if signature(sidecar) != base:  # changed while copied: no copy (its lines then apply as they are)
            os.unlink(tmp)
            return
        os.replace(tmp, copy)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@dataclass
class Tail:
    """What :func:`read` found: the entries, where the next read starts, problems, and which journal
    it was (its first line's id: a journal emptied and begun again is another one)."""

    entries: list[Entry]
    offset: int
    problems: list[str]
    generation: str | None


def _generation(fd: int) -> str | None:
    head = os.pread(fd, 128, 0)
    line = head.split(b"\n", 1)[0]
    try:
        return str(json.loads(line)["journal"])
    except (ValueError, KeyError, TypeError):
        return None


def generation(journal: Path) -> str | None:
    """The id of the journal on disk now (None: empty, absent, or not to be read: the reading
    that follows says why)."""
    try:
        fd = _open(journal, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _generation(fd)
    finally:
        os.close(fd)


def read_point(sidecar: Path, journal: Path) -> tuple[Signature, str | None]:
    """Where a reader starts: the sidecar's signature and the journal's id. A fold that lands
    meanwhile changes one or both (it rewrites the sidecar, or at least empties the journal)."""
    return signature(sidecar), generation(journal)


def read(journal: Path, offset: int = 0) -> Tail:
    """The complete lines from ``offset`` (0: the whole journal); no journal reads as empty."""
    try:
        fd = _open(journal, os.O_RDONLY)
    except FileNotFoundError:
        return Tail([], 0, [], None)
    try:
        size = os.fstat(fd).st_size
        generation = _generation(fd) if size else None
        data = os.pread(fd, size - offset, offset) if size > offset else b""
    finally:
        os.close(fd)
    end = data.rfind(b"\n") + 1
    entries: list[Entry] = []
    problems: list[str] = []
    for line in data[:end].splitlines():
        if not line.strip() or line.startswith(b'{"journal"'):
            continue
        if len(line) > MAX_LINE:
            problems.append(f"{journal}: a line of {len(line)} bytes skipped")
            continue
        try:
            entries.append(Entry.from_line(line))
        except ValueError as exc:
            problems.append(f"{journal}: a line after byte {offset}: {exc}; skipped")
    return Tail(entries, offset + end, problems, generation)


def base_copies(journal: Path) -> Iterator[Path]:
    """The copies of sidecar versions kept for the journal's lines."""
    prefix = journal.name.removesuffix(".journal") + ".base-"
    with contextlib.suppress(OSError):
        for path in journal.parent.iterdir():
            if path.name.startswith(prefix):
                yield path


def base_copy(journal: Path, base: Signature) -> Path | None:
    copy = _base_path(journal, base)
    return copy if copy.exists() else None


def empty(journal: Path) -> None:
    """Empty the journal (after a fold) and drop the copies kept for its lines."""
    with contextlib.suppress(FileNotFoundError):
        fd = _open(journal, os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
    for copy in list(base_copies(journal)):
        with contextlib.suppress(OSError):
            os.unlink(copy)


def keep_superseded(journal: Path, entries: list[Entry], why: str) -> None:
    """Keep lines a later change outside rubric-studio won over, with why, so none is lost unseen."""
    if not entries:
        return
    fd = _open(superseded_path(journal), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        lines = [json.dumps({"superseded": stamp, "why": why}).encode() + b"\n"]
        os.write(fd, b"".join(lines + [e.to_line() for e in entries]))
        os.fsync(fd)
    finally:
        os.close(fd)
