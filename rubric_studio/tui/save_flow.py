"""Saving the rubric from the studio, and what happens when the file on disk moved on.

The document saves with a compare-and-swap (:meth:`RubricDocument.save
<rubric_studio.core.document._document.RubricDocument.save>`): it writes only over the version it
last read. Every way the studio writes the rubric — ctrl+s (editor or app), "Save and
quit", a fit applied and saved — comes here when that version is gone, and so does the
watcher when it sees an outside change while the editor holds unsaved edits. The studio
then shows :class:`~rubric_studio.tui.conflict.ConflictScreen` and writes only what the
person chooses: merge (three-way, base = the version the edits started from), overwrite
exactly the disk version they were shown, load the disk version (undoable), or nothing.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rubric_studio.core.atomic import ChangedOnDisk, DiskState
from rubric_studio.core.document import Merge
from rubric_studio.core.problems import RubricError

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost

MERGE_NOTICE_EVERY = 10.0  # seconds between two "merged an outside edit" notices


@dataclass(frozen=True)
class _Question:
    """What the person was shown: the disk's text and state, the merge, and why we asked."""

    disk: str | None
    state: DiskState
    merged: Merge | None
    saving: bool
    then: Callable[[], object] | None


class SaveFlow:
    """Writes the studio's rubric and asks whenever the file on disk is not the version edited."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        self.asking = False
        #: A disk text the person chose not to load (the watcher does not ask again for it;
        #: saving still does).
        self.declined: str | None = None
        self._merge_said = -MERGE_NOTICE_EVERY

    # -- writing ---------------------------------------------------------------------------
    def save(self, *, replacing: DiskState | None = None, then: Callable[[], object] | None = None) -> bool:
        """Write the document (over ``replacing`` when the person chose to overwrite that version).

        A change on disk asks instead of writing; ``then`` runs once a write succeeded.
        """
        app = self.app
        try:
            app.session.document.save(replacing=replacing)
        except ChangedOnDisk as exc:
            self.refused(exc, then)
            return False
        except OSError as exc:
            app.notify(f"Could not save {app.session.rubric_path}: {exc}", severity="error", title="Save failed")
            return False
        self.declined = None
        if app.editor is not None:
            app.editor.saved()  # posts EditorPane.Saved: the app re-grades
        else:
            app.apply_saved_rubric()
        if then is not None:
            then()
        return True

    def refused(self, error: ChangedOnDisk, then: Callable[[], object] | None = None) -> None:
        """A save found the file changed since it was read (nothing written): ask what to do."""
        app, document = self.app, self.app.session.document
        if error.text is not None and not document.dirty:  # no edits to lose: just take the disk version
            document.take_disk(error.text, error.state)
            app.refresh_editor()
            app.apply_saved_rubric()
            app.notify(f"{app.session.rubric_path.name} changed on disk: loaded it (you had no edits to save).")
            return
        self._ask(error.text, error.state, saving=True, then=then, reverts=getattr(error, "outside", None))

    def changed_on_disk(self, disk: str, state: DiskState) -> None:
        """The watcher saw the file change while the editor holds unsaved edits."""
        if disk != self.declined:
            self._ask(disk, state, saving=False)

    def merged_outside_edit(self) -> None:
        """Say (once in a while, not for every write of a program saving in a loop) that an
        outside edit was merged around the user's unsaved edits."""
        now = time.monotonic()
        if now - self._merge_said < MERGE_NOTICE_EVERY:
            return
        self._merge_said = now
        self.app.notify(f"{self.app.session.rubric_path.name} changed on disk in lines you had not edited: "
                        "merged into your unsaved edits (ctrl+z stops at it).", title="Merged outside edit",
                        timeout=5)

    def kept_typing(self, disk: str, why: str) -> None:
        """An outside edit that cannot join the user's typing (``why``: " in the outcome field, which
        you are editing"): nothing is merged into the typing and no dialog takes the keys; the
        user's text stays, and saving asks."""
        if disk == self.declined:
            return
        self.declined = disk
        self.app.notify(f"{self.app.session.rubric_path.name} changed on disk{why}: your text is kept. "
                        "Saving asks before replacing the disk version.",
                        title="Changed on disk", severity="warning", timeout=10)

    # -- asking ----------------------------------------------------------------------------
    def _ask(self, disk: str | None, state: DiskState, *, saving: bool,
             then: Callable[[], object] | None = None, reverts: str | None = None) -> None:
        from rubric_studio.tui.conflict import ConflictScreen

        app = self.app
        if self.asking:
            if saving:
                app.notify("Answer the question about the file on disk first; nothing was saved.",
                           severity="warning")
            return
        self.asking = True
        document = app.session.document
        # Undoing an outside edit is a change of its own: merging would simply undo it again.
        merged = document.merge_disk(disk) if disk is not None and reverts is None else None
        question = _Question(disk, state, merged, saving, then)
        screen = ConflictScreen(app.session.rubric_path.name, document.text, disk, merged=merged, saving=saving,
                                reverts=reverts)
        app.push_screen(screen, functools.partial(self._answered, question))

    def _answered(self, question: _Question, choice: str | None) -> None:
        from rubric_studio.tui.conflict import LOAD, MERGE, OVERWRITE

        self.asking = False
        app = self.app
        if choice == LOAD:
            self._load()
        elif choice == MERGE and question.disk is not None and question.merged is not None and question.merged.clean:
            app.session.document.take_disk(question.disk, question.state, question.merged.text)
            app.refresh_editor()
            if question.saving:
                self.save(then=question.then)  # over exactly the version merged with (else it asks again)
            else:
                app.apply_saved_rubric()
                app.notify("Merged the change on disk into your edits (not saved yet; ctrl+z undoes the merge).")
        elif choice == OVERWRITE and question.saving:
            self.save(replacing=question.state, then=question.then)
        elif question.saving:
            app.notify("Not saved: the file on disk is left as it is.", severity="warning")
        else:
            self.declined = question.disk
            app.notify("Kept your edits. The file on disk differs; saving will ask before replacing it.",
                       severity="warning")

    def _load(self) -> None:
        app = self.app
        self.declined = None
        try:
            app.session.document.reload_from_disk()  # undoable: the edits are one ctrl+z away
        except RubricError as exc:
            app.notify(f"Could not load the version on disk: {exc}", severity="error")
            return
        app.refresh_editor()
        app.apply_saved_rubric()
        app.notify("Loaded the version on disk; undo (ctrl+z in the editor) brings your edits back.")
