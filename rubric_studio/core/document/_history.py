"""The text of a rubric document and its undo/redo history.

Every edit commits a whole new text; the text before is kept as one undo step. Edits of the
same field (the same *coalesce key*, e.g. typing in one field) closer together than the
document's ``coalesce_seconds`` are one step, and :meth:`EditHistory.transaction` groups
several edits into one step that an exception rolls back.

An edit made outside (the file changed on disk and the document took it in) is an *undo
boundary*: the first undo that would cross it stops there and says so
(:class:`UndoStop`); the next one crosses it, and from then on the text is a revert of a change
that is still on disk (:attr:`EditHistory.reverted_outside`), which a save must not write
without asking.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["EditHistory", "HistorySettings", "UndoStop"]


@dataclass(frozen=True)
class UndoStop:
    """An undo that stopped at an outside edit instead of undoing it (the next undo does)."""

    outside: str  # what the outside edit was, e.g. "the outside edit of 12:03:14"


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
        #: For each undo step (same index as ``_undo``), the outside edit it would undo, or None.
        self._undo_outside: list[str | None] = []
        self._redo_outside: list[str | None] = []
        self._stopped_at: int | None = None  # the undo depth at which an undo stopped (armed)
        #: Outside edits undone (and not redone) that the text now reverts.
        self.reverted: list[str] = []
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

    @property
    def reverted_outside(self) -> str | None:
        """The latest outside edit the text reverts (undone past and not redone), or None."""
        return self.reverted[-1] if self.reverted else None

    def commit(self, new_text: str, coalesce: Any = None, *, outside: str | None = None) -> bool:
        """Make ``new_text`` the text; False when it is the text already.

        ``outside`` names an outside edit taken in: its step is an undo boundary (never
        coalesced). Within a transaction the step is recorded when the transaction ends.
        """
        if new_text == self.text:
            return False
        if self._batch_depth:
            self.text = new_text
            return True
        now = time.monotonic()
        self._stopped_at = None
        if outside is not None or not (
            coalesce is not None
            and coalesce == self._last_key
            and self._undo
            and now - self._last_time <= self._settings.coalesce_seconds
        ):
            self._undo.append(self.text)
            self._undo_outside.append(outside)
            limit = self._settings.history_limit
            if len(self._undo) > limit:
                del self._undo[: len(self._undo) - limit]
                del self._undo_outside[: len(self._undo_outside) - limit]
        self._redo.clear()
        self._redo_outside.clear()
        if outside is not None:
            self.reverted.clear()  # the text is based on the disk version again
            coalesce = None
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

    def undo(self) -> bool | UndoStop:
        """Go one step back: True, False (nothing to undo), or :class:`UndoStop` when the step
        undoes an outside edit and this is the first undo to reach it (nothing changed)."""
        if not self._undo:
            return False
        outside = self._undo_outside[-1]
        if outside is not None and self._stopped_at != len(self._undo):
            self._stopped_at = len(self._undo)
            return UndoStop(outside)
        self._stopped_at = None
        self._redo.append(self.text)
        self._redo_outside.append(self._undo_outside.pop())
        self.text = self._undo.pop()
        if outside is not None:
            self.reverted.append(outside)
        self._last_key = None
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        self._stopped_at = None
        outside = self._redo_outside.pop()
        self._undo.append(self.text)
        self._undo_outside.append(outside)
        self.text = self._redo.pop()
        if outside is not None and outside in self.reverted:
            self.reverted.remove(outside)
        self._last_key = None
        return True

    def based_on_disk(self) -> None:
        """The text was just written to disk (or chosen over it): it reverts nothing on disk any more."""
        self.reverted.clear()
        self._stopped_at = None

    def break_coalescing(self) -> None:
        """Make the next edit its own undo step."""
        self._last_key = None
