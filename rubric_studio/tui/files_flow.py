"""The studio's files: samples and labels read off the UI thread, every file in use watched.

:class:`FilesFlow` reads the samples and the labels sidecar in a worker thread
(:class:`~rubric_studio.tui.messages.SamplesLoaded`, :class:`~rubric_studio.tui.messages.LabelsLoaded`)
so the first frame waits for neither, and hands what was read to the session. The watch worker
(``group="watch"``, :mod:`rubric_studio.tui.watch`) posts
:class:`~rubric_studio.tui.messages.FilesChanged`; a changed rubric goes to
:mod:`~rubric_studio.tui.outside_edits`, a changed card redraws the status bar, changed samples or
labels are read again — except our own label write, whose labels are already in memory. Once
nobody labelled here for a while, this session's labels journal is folded into the sidecar.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import TYPE_CHECKING

from rubric_studio.tui import card_actions
from rubric_studio.tui.closing import tolerate_shutdown
from rubric_studio.tui.messages import FilesChanged, LabelsLoaded, SamplesLoaded
from rubric_studio.tui.results import ResultsMatrix, ResultsPane

if TYPE_CHECKING:
    from pathlib import Path

    from rubric_studio.tui.host import StudioHost

#: The labels journal is folded into the sidecar once nobody labelled here for this long ...
LABELS_IDLE_SECONDS = 30.0
#: ... looked at this often.
LABELS_FOLD_CHECK_SECONDS = 10.0
#: Refreshes waited for the results table to be on screen before starting what it does not show anyway.
FIRST_SCREEN_WAITS = 20


class FilesFlow:
    """Reads and watches the files of one studio; ``watching=False`` reads them once."""

    def __init__(self, app: StudioHost, *, watching: bool = True) -> None:
        self.app = app
        self.watching = watching
        self._watch_stop: asyncio.Event | None = None
        self._watched_samples: Path | None = None
        self._first_screen_done = False
        self._first_screen_waits = 0

    def start(self) -> None:
        """Read the samples and labels, then (once they are drawn) start watching and resolve the judge;
        fold labels from time to time (call it once the app is mounted)."""
        app = self.app
        self._watched_samples = app.session.samples_path
        self._load(initial=True, kinds={"samples", "labels"})
        app.set_interval(LABELS_FOLD_CHECK_SECONDS, self._fold_labels)

    def _when_drawn(self) -> None:
        """Call :meth:`_after_first_screen` once the frame showing what was just read is drawn.

        A layout is asked for now: a callback after the next refresh would otherwise run as soon as
        the screen is idle, before the table's own refresh has reached it; and it asks again while
        the table, shown, has no place on the screen yet (a refresh put off by a batch update), a
        few times at most (a terminal too small for it).
        """
        self.app.screen.refresh(layout=True)
        self.app.call_after_refresh(self._after_first_screen, True)

    @tolerate_shutdown
    def _after_first_screen(self, drawn_only: bool = False) -> None:
        """What the first screen does not show starts once it is drawn, so it does not compete with it."""
        if self._first_screen_done:
            return
        pane = self.app.query_one(ResultsPane)
        if drawn_only and pane.display and not pane.region.area and self._first_screen_waits < FIRST_SCREEN_WAITS:
            self._first_screen_waits += 1
            self._when_drawn()
            return
        self._first_screen_done = True
        self.app.grading.build_deferred_grader()
        if self.watching:
            self._watch()

    def stop(self) -> None:
        """Stop watching (the app is closing)."""
        if self._watch_stop is not None:
            self._watch_stop.set()

    # -- the workers: each calls the session and posts a message ---------------------------
    def _load(self, initial: bool, kinds: set[str]) -> None:
        self.app.run_worker(functools.partial(self._load_files, initial, kinds), name="_load_files", group="load",
                            exit_on_error=False)

    async def _load_files(self, initial: bool, kinds: set[str]) -> None:
        """Read samples and/or labels in a thread; post what was read. After the first read the judge
        and the watcher start, once what was read is drawn (:meth:`samples_loaded`), or at once when
        reading failed (not when cancelled: the studio is closing then)."""
        try:
            await self._read_files(initial, kinds)
        except Exception:
            if initial:
                self.app.call_after_refresh(self._after_first_screen)
            raise

    async def _read_files(self, initial: bool, kinds: set[str]) -> None:
        app, session = self.app, self.app.session
        if initial:  # the versions of earlier sessions, before the first run can record one
            await asyncio.to_thread(session.versions.load_past)
            self.say_history_warnings()
        # Labels first: the first run (started by the samples) then records them with its version.
        if "labels" in kinds:
            app.post_message(LabelsLoaded(await asyncio.to_thread(session.read_labels)))
        if "samples" in kinds:
            app.post_message(SamplesLoaded(await asyncio.to_thread(session.read_samples), initial))

    def _fold_labels(self) -> None:
        self.app.run_worker(self._fold_labels_now, name="_fold_labels", group="fold-labels", exclusive=True,
                            exit_on_error=False)

    async def _fold_labels_now(self) -> None:
        """Fold this session's labels into the sidecar once nobody labelled here for a while (the
        sidecar is then what a commit holds); a sidecar being fixed by hand is folded later."""
        from rubric_studio.core.problems import RubricStudioError

        with contextlib.suppress(ValueError, OSError, RubricStudioError):
            await asyncio.to_thread(self.app.session.fold_labels, LABELS_IDLE_SECONDS)

    def _watch(self) -> None:
        self.app.run_worker(self._watch_files, name="_watch", group="watch", exclusive=True, exit_on_error=False)

    async def _watch_files(self) -> None:
        from rubric_studio.tui.watch import WatchTargets, watch_targets

        self.stop()
        stop = asyncio.Event()
        self._watch_stop = stop
        session = self.app.session
        targets = WatchTargets(session.rubric_path, session.samples_path, session.labels_path,
                               discover=not session.samples_given)
        async for kinds in watch_targets(targets, stop):
            self.app.post_message(FilesChanged(kinds))

    def say_history_warnings(self) -> None:
        """A damaged run-history file was read around: say so once, the studio goes on."""
        warnings = self.app.session.versions.history.warnings
        if warnings:
            more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
            self.app.notify(warnings[0] + more, title="Run history", severity="warning", timeout=20)

    # -- what was read, and what changed ---------------------------------------------------
    @tolerate_shutdown
    def samples_loaded(self, message: SamplesLoaded) -> None:
        app = self.app
        session = app.session
        if message.initial:
            self._when_drawn()
        taken = session.take_samples(message.read, initial=message.initial)
        app.problems = session.problems
        app.live.show_empty()
        if not taken:
            if not session.samples_loaded:
                app.ensure_editor_soon()
            return
        app.query_one(ResultsMatrix).reset()
        if not session.samples:
            app.ensure_editor_soon()
        if session.samples_path != self._watched_samples and self.watching and not message.initial:
            self._watch()
        self._watched_samples = session.samples_path
        app.grading.regrade()

    @tolerate_shutdown
    def labels_loaded(self, message: LabelsLoaded) -> None:
        app = self.app
        if not app.session.take_labels(message.read):
            app.problems = app.session.problems
            return
        app.query_one(ResultsMatrix).reset()
        app.problems = app.session.problems
        app.labels = app.session.labels

    async def changed(self, kinds: set[str]) -> None:
        """Files in use changed on disk (``kinds`` as :class:`~rubric_studio.tui.messages.FilesChanged` says)."""
        app = self.app
        if "card" in kinds:
            card_actions.card_changed(app)
        if "rubric" in kinds:
            await app.outside_edits.rubric_changed()
        rest = kinds & {"samples", "labels"}
        if "labels" in rest:
            await app.session.label_writer.settled()  # a write being fsync'd is ours, not someone else's
            if app.session.label_writer.is_own_write():
                rest.discard("labels")  # our own write: the labels in memory are already current
        if rest:
            self._load(initial=False, kinds=rest)
