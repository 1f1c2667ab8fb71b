"""The text of a rubric document and its undo/redo history.

Every edit commits a whole new text; the text before is kept as one undo step. Edits of the
same field (the same *coalesce key*, e.g. typing in one field) closer together than the
document's ``coalesce_seconds`` are one step, and :meth:`EditHistory.transaction` groups
several edits into one step that an exception rolls back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["EditHistory", "HistorySettings"]


class HistorySettings(Protocol):
    """Where the history reads its bounds at each commit (the document: tests and front ends
    may change them on the class)."""

    coalesce_seconds: float
    history_limit: int


class EditHistory:
    """The current text, with the texts undo and redo go back and forth to."""

    def __init__(self, text: str, settings: HistorySettings):
        self.text = text
        self._settings = settings
        self._undo: list[str] = []
        self._redo: list[str] = []
        self._last_key: Any = None
        self._last_time = 0.0
        self._batch_depth = 0
        self._batch_start: str | None = None

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def commit(self, new_text: str, coalesce: Any = None) -> bool:
        """Make ``new_text`` the text; False when it is the text already.

        Within a transaction the step is recorded when the transaction ends.
        """
        if new_text == self.text:
            return False
        if self._batch_depth:
            self.text = new_text
            return True
        now = time.monotonic()
        if not (
            coalesce is not None
            and coalesce == self._last_key
            and self._undo
            and now - self._last_time <= self._settings.coalesce_seconds
        ):
            self._undo.append(self.text)
            limit = self._settings.history_limit
            if len(self._undo) > limit:
                del self._undo[: len(self._undo) - limit]
        self._redo.clear()
        self._last_key = coalesce
        self._last_time = now
        self.text = new_text
        return True

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several edits into one undo step; on an exception the text is restored."""
        if self._batch_depth == 0:
            self._batch_start = self.text
        self._batch_depth += 1
        try:
            yield
        except BaseException:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                assert self._batch_start is not None
                self.text = self._batch_start
                self._batch_start = None
            raise
        self._batch_depth -= 1
        if self._batch_depth == 0:
            start, self._batch_start = self._batch_start, None
            assert start is not None
            if start != self.text:
                final, self.text = self.text, start
                self._last_key = None
                self.commit(final)

    def undo(self) -> bool:
        if not self._undo:
            return False
        self._redo.append(self.text)
        self.text = self._undo.pop()
        self._last_key = None
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        self._undo.append(self.text)
        self.text = self._redo.pop()
        self._last_key = None
        return True

    def break_coalescing(self) -> None:
        """Make the next edit its own undo step."""
        self._last_key = None
