"""Persistent judge-reply cache (SQLite).

The key is :meth:`JudgeRequest.cache_key` — a hash of provider, model, base URL,
parameters, exact messages, reply schema and repeat index — so an unchanged
request is never paid for twice. Only replies that parsed and validated are
stored. The default file lives in ``$RUBRIC_STUDIO_CACHE`` or the user cache
folder (``$XDG_CACHE_HOME/rubric-studio/judge-cache.sqlite``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class CacheStats:
    path: str
    entries: int
    bytes: int
    models: dict[str, int]


class ReplyCache:
    """A small thread-safe SQLite key-value store of valid judge replies."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens FROM replies WHERE key = ?", (key,)
            ).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, provider: str, model: str, text: str, input_tokens: int = 0, output_tokens: int = 0) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, provider, model, text, input_tokens, output_tokens, time.time()),
            )
            self._db.commit()

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
