"""Persistent judge-reply cache (SQLite).

The key is :meth:`JudgeRequest.cache_key` — a hash of the provider request as sent
(provider, base URL, model, the parameters the provider takes, exact messages, reply schema)
and the repeat index — so an unchanged request is never paid for twice. Only replies that
parsed and validated are stored, each with where it came from (``origin``: one call for this
criterion, or a batch call of several criteria and the body that call sent). The default
file lives in ``$RUBRIC_STUDIO_CACHE`` or the user cache folder
(``$XDG_CACHE_HOME/rubric-studio/judge-cache.sqlite``).

A cache that cannot be opened (full disk, not a folder, not a database) raises
:class:`CacheUnavailable` with one line to show; a write that fails (full disk) turns
writing off, says so once through ``on_failure`` and grading goes on without it. Entries
written under an older key scheme are never looked up again; they do no harm.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
)
"""
#: Bodies of batch calls, stored once and named by their hash in ``replies.origin``.
_SENT_SCHEMA = "CREATE TABLE IF NOT EXISTS sent_requests (hash TEXT PRIMARY KEY, body TEXT NOT NULL)"
_WRITE_ERRORS = (OSError, sqlite3.Error)


class CacheUnavailable(Exception):
    """The cache file cannot be opened; the message says why, where, and that grading goes on without it."""


def _full(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (getattr(exc, "errno", None) == errno.ENOSPC or code == getattr(sqlite3, "SQLITE_FULL", 13)
            or "disk is full" in str(exc))  # fmt: skip


def cache_problem(action: str, exc: BaseException, path: Path) -> str:
    """One line: ``judge cache not <action>: <why> (<path>) — grading without the cache``."""
    if _full(exc):
        why = "disk full"
    elif isinstance(exc, FileExistsError | NotADirectoryError):
        why = f"{path.parent} is not a folder"
    elif isinstance(exc, OSError):
        why = exc.strerror or type(exc).__name__
    else:
        why = str(exc) or type(exc).__name__
    return f"judge cache not {action}: {why} ({path}) — grading without the cache"


def default_cache_path() -> Path:
    explicit = os.environ.get("RUBRIC_STUDIO_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rubric-studio" / "judge-cache.sqlite"


@dataclass(frozen=True)
class CachedReply:
    text: str
    input_tokens: int
    output_tokens: int
    #: Where the verdict came from: {"mode": "single"|"batch", "criteria": [ids], "sent": hash}; None when
    #: not recorded.
    origin: dict[str, Any] | None = None


@dataclass(frozen=True)
class CacheStats:
    path: str
    entries: int
    bytes: int
    models: dict[str, int]


class ReplyCache:
    """A small thread-safe SQLite key-value store of valid judge replies."""

    #: A bound on the file's pages (None: the disk's room). Reaching it is a full disk.
    max_pages: int | None = None

    def __init__(self, path: str | Path | None = None, on_failure: Callable[[str], Any] | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        #: Why writing stopped (said once through ``on_failure``), or None.
        self.failure: str | None = None
        self._on_failure = on_failure
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10)
        except _WRITE_ERRORS as exc:
            raise CacheUnavailable(cache_problem("opened", exc, self.path)) from None
        try:
            self._prepare()
        except _WRITE_ERRORS as exc:
            self._db.close()
            raise CacheUnavailable(cache_problem("opened", exc, self.path)) from None

    def _prepare(self) -> None:
        with self._lock:
            if self.max_pages is not None:
                self._db.execute(f"PRAGMA max_page_count={int(self.max_pages)}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.execute(_SENT_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(replies)")}
            if "origin" not in columns:  # a cache written before verdicts recorded their origin
                self._db.execute("ALTER TABLE replies ADD COLUMN origin TEXT")
            self._db.commit()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens, origin FROM replies WHERE key = ?", (key,)
            ).fetchone()
        if not row:
            return None
        return CachedReply(row[0], row[1], row[2], _origin(row[3]))

    def sent_request(self, digest: str) -> dict[str, Any] | None:
        """The body of the batch call stored under ``digest`` (an origin's ``sent``), or None."""
        with self._lock:
            row = self._db.execute("SELECT body FROM sent_requests WHERE hash = ?", (digest,)).fetchone()
        try:
            body = json.loads(row[0]) if row else None
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def put(
        self, key: str, provider: str, model: str, text: str, input_tokens: int = 0, output_tokens: int = 0,
        *, origin: dict[str, Any] | None = None, sent: dict[str, Any] | None = None,
    ) -> None:
        """Store a valid reply (and the batch body ``sent``, once). A failing write (full disk)
        stops writing for good and is reported once; it never raises."""
        if self.failure is not None:
            return
        origin = dict(origin or {})
        try:
            with self._lock:
                if sent is not None:
                    blob = json.dumps(sent, sort_keys=True, ensure_ascii=False)
                    origin["sent"] = hashlib.sha256(blob.encode()).hexdigest()
                    self._db.execute("INSERT OR IGNORE INTO sent_requests VALUES (?, ?)", (origin["sent"], blob))
                self._db.execute(
                    "INSERT OR REPLACE INTO replies (key, provider, model, text, input_tokens, output_tokens, created,"
                    " origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, provider, model, text, input_tokens, output_tokens, time.time(),
                     json.dumps(origin) if origin else None),
                )  # fmt: skip
                self._db.commit()
        except _WRITE_ERRORS as exc:
            self._stop_writing(exc)

    def _stop_writing(self, exc: BaseException) -> None:
        self.failure = cache_problem("written", exc, self.path)
        with self._lock:
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass
        if self._on_failure is not None:
            self._on_failure(self.failure)

    def stats(self) -> CacheStats:
        with self._lock:
            entries = self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]
            models = dict(
                self._db.execute("SELECT provider || ':' || model, COUNT(*) FROM replies GROUP BY 1 ORDER BY 2 DESC")
            )
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(str(self.path), entries, size, models)

    def clear(self) -> int:
        with self._lock:
            removed = self._db.execute("DELETE FROM replies").rowcount
            self._db.commit()
            self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _origin(raw: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw else None
    except ValueError:  # an entry this version did not write
        return None
    return value if isinstance(value, dict) else None
