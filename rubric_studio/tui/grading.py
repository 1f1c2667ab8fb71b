"""Grading in the studio: the judge built off the UI thread, runs started, their events shown.

The session plans and runs each grade (:meth:`~rubric_studio.session.studio.StudioSession.start_run`,
:meth:`~rubric_studio.session.studio.StudioSession.grade`); :class:`GradingFlow` starts it in a
worker (``group="grade"``, exclusive: a new run cancels the one in flight) that turns each engine
event into a message of :mod:`rubric_studio.tui.messages` tagged with its run number, and takes
those messages back on the UI thread: the session drops the ones of a superseded run (its command
returns None/False) and nothing is drawn for them. What a run changes reaches the panes through
the app's shared values (``problems``, ``graded``, ``report``).

The judge is resolved (its SDK imported) in a worker of its own (``group="grader"``) whenever the
rubric's judge settings change; the new grader re-grades once it is ready.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING

from rubric_studio.session.studio import grader_key
from rubric_studio.tui.closing import tolerate_shutdown
from rubric_studio.tui.messages import (
    GradeFailed,
    GradeFinished,
    GradeProgress,
    GraderReady,
    GradeStarted,
    SamplesGraded,
)
from rubric_studio.tui.results import ResultsMatrix

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.session.studio import GradingTicket
    from rubric_studio.tui.host import StudioHost


class GradingFlow:
    """Builds the judge, starts runs and shows what they bring; one per app."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        #: The judge of the rubric opened waits until the first screen is drawn (:meth:`build_deferred_grader`).
        self._grader_deferred = False

    # -- starting ------------------------------------------------------------------------
    def apply_saved_rubric(self, text: str | None = None, *, initial: bool = False) -> bool:
        """Parse the rubric as saved (or ``text``); re-grade if valid, else show why and mark
        the results stale. True when a re-grade started."""
        app = self.app
        applied = app.session.apply_rubric_text(text)
        app.problems = app.session.problems
        if applied.columns_changed and app.is_mounted:
            app.query_one(ResultsMatrix).reset()
        if not applied.valid:
            return False
        if applied.needs_grader:
            if initial:  # resolving the judge would compete with the first screen: it waits for it
                self._grader_deferred = True
            else:
                self.build_grader(app.session.rubric)
            return False
        return False if initial else self.regrade()

    def build_deferred_grader(self) -> None:
        """Build the judge of the rubric opened once the first screen is drawn (the files flow calls
        this), unless a later rubric's judge is already being built."""
        if self._grader_deferred and self.app.session.rubric is not None:
            self.build_grader(self.app.session.rubric)

    def rebuild_grader(self) -> None:
        """Build the judge again (after the rubric was trusted); the new grader re-grades when ready."""
        session = self.app.session
        if session.rubric is not None:
            session.grader_key = grader_key(session.rubric)
            self.build_grader(session.rubric)

    def regrade(self, repeat: int | None = None) -> bool:
        """Start a grading run (True if started); ``repeat`` K makes it a consistency run."""
        ticket = self.app.session.start_run(repeat)
        if ticket is not None:
            self.app.run_worker(functools.partial(self._grade, ticket), name="_grade", group="grade",
                                exclusive=True, exit_on_error=False)
        return ticket is not None

    def regrade_retrying_errors(self) -> None:
        """Re-grade now, retrying cells that ended in error."""
        if self.app.session.grader is not None:
            self.app.session.grader.forget_errors()
        self.regrade()

    def consistency_run(self, k: int) -> bool:
        """Re-grade judging every judged cell ``k`` times (the results say so until the next run)."""
        started = self.regrade(repeat=k)
        if started:
            self.app.notify(f"Judging every judged cell {k} times…", title="Consistency run", timeout=4)
            self.app.refresh_bars()
        return started

    # -- the workers -----------------------------------------------------------------------
    def build_grader(self, rubric: Rubric) -> None:
        """Resolve the judge (imports its SDK) off the UI thread; :class:`GraderReady` brings it."""
        self._grader_deferred = False
        self.app.run_worker(functools.partial(self._build_grader, rubric), name="_build_grader", group="grader",
                            exclusive=True, exit_on_error=False)

    async def _build_grader(self, rubric: Rubric) -> None:
        self.app.post_message(GraderReady(*await asyncio.to_thread(self.app.session.build_grader, rubric)))

    async def _grade(self, ticket: GradingTicket) -> None:
        try:
            await self.app.session.grade(ticket, lambda event: self.post_engine_event(ticket.run, event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must show as a message, not a traceback
            self.app.post_message(GradeFailed(ticket.run, f"{type(exc).__name__}: {exc}"))

    def post_engine_event(self, run: int, event: object) -> None:
        """Turn one engine event of run ``run`` into its message (called by the grading worker)."""
        from rubric_studio.engine.events import Progress, RunFinished, RunStarted, SamplesUpdated

        post = self.app.post_message
        if isinstance(event, SamplesUpdated):
            post(SamplesGraded(run, event.samples, event.final))
        elif isinstance(event, Progress):
            post(GradeProgress(run, event.done, event.total, event.in_flight))
        elif isinstance(event, RunStarted):
            post(GradeStarted(run, event.total_requests, event.to_send, event.stale_cells, event.plan))
        elif isinstance(event, RunFinished):
            post(GradeFinished(run, event.report))

    # -- their messages, on the UI thread ---------------------------------------------------
    @tolerate_shutdown
    def grader_ready(self, message: GraderReady) -> None:
        app = self.app
        old = app.session.grader_ready(message.grader, message.judge_label, message.judge_note)
        if old is not None:
            app.run_worker(old.aclose(), group="close", exit_on_error=False)
        app.live.show_judge_note()
        self.regrade()

    @tolerate_shutdown
    def started(self, message: GradeStarted) -> None:
        session = self.app.session
        if session.run_started(message.run):
            session.progress = (0, message.to_send, 0)
            self.app.problems = session.problems  # the grading problem of the run before goes

    @tolerate_shutdown
    def rows_graded(self, message: SamplesGraded) -> None:
        app = self.app
        changed = app.session.rows_graded(message.run, message.samples)
        if changed is None:
            return
        app.graded = changed
        app.ensure_editor_soon()  # the first results are on screen: the editor comes next
        app.outside_edits.verdicts_shown()

    @tolerate_shutdown
    def progress(self, message: GradeProgress) -> None:
        if self.app.session.run_progress(message.run, message.done, message.total, message.in_flight):
            self.app.refresh_bars()

    @tolerate_shutdown
    def finished(self, message: GradeFinished) -> None:
        app = self.app
        outcome = app.session.run_finished(message.run, message.report)
        if outcome is None:
            return
        app.report = app.session.report
        app.calibration.graded(outcome)
        if outcome.judge_stopped:  # said once here; the cells carry it for the inspector
            app.notify(outcome.judge_stopped, title="Judging stopped", severity="warning", timeout=12)
        for warning in outcome.warnings:
            app.notify(warning, title="Judge", severity="warning", timeout=12)
        for line, every_cell in outcome.member_failures:  # the others' pooled verdicts would hide it
            app.notify(line, title="Judge panel", severity="error" if every_cell else "warning", timeout=12)
        if len(app.screen_stack) == 1:  # never on top of another prompt; the next run asks
            app.trust_flow.offer()

    @tolerate_shutdown
    def failed(self, message: GradeFailed) -> None:
        if self.app.session.run_failed(message.run, message.error):
            self.app.call_later(self.app.outside_edits.reload_document)
            self.app.problems = self.app.session.problems
