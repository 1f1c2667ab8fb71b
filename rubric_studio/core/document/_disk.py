"""Saving a rubric document, and taking in an edit made to its file outside the studio.

Saving is a compare-and-swap: the document remembers what the file held when it last read
or wrote it (``disk_state``: size, SHA-256, mtime) and writes only over that version. When
someone changed the file meanwhile, nothing is written and
:class:`~rubric_studio.core.atomic.ChangedOnDisk` carries the disk's text; the front end then
merges it with the unsaved edits (:meth:`DiskSync.merge_disk`, a three-way merge whose base
is the version both started from), loads it (:meth:`DiskSync.take_disk`, undoable), or
overwrites exactly that version (``save(replacing=state)``).
"""

from __future__ import annotations

import time

from rubric_studio.core.atomic import ChangedOnDisk, DiskState, write_text_safely
from rubric_studio.core.document._merge import Merge, merge3
from rubric_studio.core.files import read_user_file_state
from rubric_studio.core.problems import Problem, RubricError

__all__ = ["DiskSync", "RevertsOutsideEdit", "outside_edit_label"]


class RevertsOutsideEdit(ChangedOnDisk):
    """A save would write a text that undoes an outside edit still on disk: nothing was written.

    ``outside`` says which edit (e.g. "the outside edit of 12:03:14"); ``state``/``data`` are
    what the disk holds, as for any :class:`ChangedOnDisk`.
    """

    def __init__(self, path, state: DiskState, data: bytes | None, outside: str) -> None:
        super().__init__(path, state, data)
        self.outside = outside
        self.args = (f"saving would undo {outside}, which is on disk; nothing was written",)


def outside_edit_label(at: float | None = None) -> str:
    """How an outside edit is named to the user: by the time the studio took it in."""
    return "the outside edit of " + time.strftime("%H:%M:%S", time.localtime(at))


class DiskSync:
    """Saving and re-reading for :class:`~rubric_studio.core.document._document.RubricDocument`.

    A mixin: it uses the document's ``path``, ``file``, ``_text``, ``_disk_text``, ``_seen``
    (the :class:`DiskState` of ``_disk_text``), ``_history``, ``_commit`` and ``_roundtrip``.
    """

    def save(self, *, replacing: DiskState | None = None) -> str:
        """Write the text atomically over the version of the file last read; returns the text written.

        The file is re-read just before the write. When it holds anything else (an edit
        made outside, a removal), nothing is written: :class:`ChangedOnDisk` carries what
        is on disk now. ``replacing`` is a state the user saw and chose to overwrite: the
        write then goes over exactly that version (and again over nothing else).
        :class:`~rubric_studio.core.atomic.UnsafeTarget` when the path is not a regular file.
        """
        text = self._text
        outside = self._history.reverted_outside
        if outside is not None and replacing is None:
            disk, state = self.read_disk_state()
            if state.same_content(self._seen):  # else the plain compare-and-swap below refuses
                raise RevertsOutsideEdit(self.path, state, disk.encode(), outside)
        self._seen = write_text_safely(self.path, text, expect=self._seen if replacing is None else replacing)
        self._disk_text = text
        self._history.based_on_disk()
        self._history.break_coalescing()
        return text

    def read_disk_state(self) -> tuple[str, DiskState]:
        """The file's text now (exactly as stored) and its state; RubricError when it cannot be read."""
        text, state = read_user_file_state(self.path, "rubric")
        if text is None:
            raise RubricError([Problem(self.file, None, None, "rubric not found: no such file")])
        return text, state

    def read_disk(self) -> str:
        return self.read_disk_state()[0]

    def disk_changed(self) -> bool:
        """True when the file on disk no longer holds :attr:`disk_text`."""
        try:
            return not self.read_disk_state()[1].same_content(self._seen)
        except RubricError:
            return True

    def merge_disk(self, disk_text: str) -> Merge:
        """Three-way merge of the unsaved edits with ``disk_text`` (base: :attr:`disk_text`).

        Nothing changes here; :meth:`take_disk` with the merged text applies it.
        """
        return merge3(self._disk_text, self._text, disk_text)

    def take_disk(self, disk_text: str, state: DiskState, text: str | None = None, *,
                  outside: str | None = None) -> bool:
        """Base the document on ``disk_text`` (read as ``state``) and show ``text`` (default: ``disk_text``).

        One undo step: the text before is one undo away. ``outside`` names the edit made outside
        the studio that this takes in (default: one named by the time now): its step is an undo
        boundary. True if the text changed.
        """
        self._disk_text = disk_text
        self._seen = state
        self._history.break_coalescing()
        changed = self._commit(disk_text if text is None else text, outside=outside or outside_edit_label())
        self._history.based_on_disk()
        if changed:
            self._roundtrip.restyle(self._text)
        self._history.break_coalescing()
        return changed

    def reload_from_disk(self) -> bool:
        """Take the file's current content (undoable); True if the text changed."""
        text, state = self.read_disk_state()
        return self.take_disk(text, state)
