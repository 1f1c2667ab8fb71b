"""How the studio draws its session: banner, judge note, run header, status bar, hint, inspector,
and which pane takes the width.

:class:`SessionView` is a mixin of :class:`~rubric_studio.tui.app.StudioApp`: each method reads
the session (``self.session``) and updates one widget; none changes the session. Message
handlers call the ones their change affects.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.widgets import Static, TabbedContent

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.studio import JUDGE_HELP
from rubric_studio.tui.results import Inspector, ResultsMatrix, ResultsPane, cell_text
from rubric_studio.tui.statusbar import RunHeader, RunState, StatusBar, StatusState

if TYPE_CHECKING:
    from rubric_studio.session.studio import StudioSession

NO_SAMPLES_HELP = (
    "No samples yet. Put the outputs to grade beside the rubric as {stem}.samples.jsonl "
    '(one {{"id": ..., "output": ...}} per line), {stem}.samples.yaml / .csv, or a samples/ folder '
    "of .txt/.md files — the studio picks them up when they appear — or pass them: "
    "rubric-studio {name} SAMPLES"
)
BANNER_LINES = 3


def banner_text(session: StudioSession) -> tuple[Text, bool] | None:
    """The problems banner (at most three problems, errors first) and whether it shows errors."""
    problems = session.problems
    if not problems:
        return None
    errors = [p for p in problems if p.severity == "error"]
    shown = (errors or problems)[:BANNER_LINES]
    out = Text()
    for index, problem in enumerate(shown):
        if index:
            out.append("\n")
        out.append("✗ " if problem.severity == "error" else "! ", style="bold")
        out.append(terminal_safe(problem.location()), style="bold")
        out.append(f": {terminal_safe(problem.message, multiline=True)}")
    more = len(errors or problems) - len(shown)
    if more > 0:
        out.append(f"\n  … and {more} more", style="italic")
    if errors and session.model.results:
        out.append("\n  the last good results stay below, marked stale", style="italic")
    return out, bool(errors)


class SessionView:
    """Widget refreshes of the studio app (mixed into StudioApp)."""

    session: StudioSession
    selection: tuple[str | None, str | None]

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The focused pane is marked (studio.tcss); the results take the width while they have
        focus, the editor takes it back with focus. (A click on a cell is resolved where it was
        pressed, so the table may widen under it.)"""
        panes = {node.id for node in event.widget.ancestors_with_self}
        if panes & {"left", "right"}:
            main = self.screen_stack[0].query_one("#main")  # type: ignore[attr-defined]
            main.set_class("right" in panes, "-results-focused")

    def show_problems(self) -> None:
        """The banner, bars and inspector after the problems changed; the table, whose rows are
        drawn as stale while a file is invalid."""
        if not self.is_mounted:  # type: ignore[attr-defined]
            return
        self._show_banner()
        self.query_one(ResultsMatrix).refresh()  # type: ignore[attr-defined]
        self.refresh_bars()
        self.refresh_inspector()

    def say_history_warnings(self) -> None:
        """A damaged run-history file was read around: say so once, the studio goes on."""
        warnings = self.session.versions.history.warnings
        if warnings:
            more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
            self.notify(warnings[0] + more, title="Run history", severity="warning", timeout=20)  # type: ignore[attr-defined]

    def _show_banner(self) -> None:
        banner = self.query_one("#banner", Static)  # type: ignore[attr-defined]
        shown = banner_text(self.session)
        banner.display = shown is not None
        if shown is not None:
            banner.update(shown[0])
            banner.set_class(shown[1], "-error")
            banner.set_class(not shown[1], "-warning")

    def _show_judge_note(self) -> None:
        session = self.session
        note = self.query_one("#judge-note", Static)  # type: ignore[attr-defined]
        needs = session.rubric is not None and bool(session.rubric.judge_criteria)
        if session.judge_note and needs:
            note.update(Text.assemble(("unjudged: ", "bold"), terminal_safe(session.judge_note, multiline=True)))
            note.tooltip = JUDGE_HELP
        note.display = bool(session.judge_note and needs)
        self.refresh_bars()

    def _show_empty(self) -> None:
        session = self.session
        empty = self.query_one("#empty", Static)  # type: ignore[attr-defined]
        pane = self.query_one(ResultsPane)  # type: ignore[attr-defined]
        if session.samples_loaded and not session.samples:
            path = session.rubric_path
            empty.update(NO_SAMPLES_HELP.format(stem=path.stem, name=path.name))
        elif not session.samples_loaded:
            empty.update("The samples could not be loaded (see above); the studio reloads them when the file changes."
                         if session.samples_error else "loading samples…")
        showing = session.samples_loaded and bool(session.samples)
        empty.display = not showing
        pane.display = showing

    def refresh_bars(self) -> None:
        if not self.is_mounted:  # type: ignore[attr-defined]
            return
        session = self.session
        matrix = self.query_one(ResultsMatrix)  # type: ignore[attr-defined]
        tally = session.versions.tally()
        done, total, in_flight = session.progress
        self.query_one(RunHeader).show(RunState(  # type: ignore[attr-defined]
            rubric=session.rubric.name if session.rubric is not None else session.rubric_path.name,
            counts=session.model.counts() if session.samples else None,
            running=session.running, done=done, total=total, in_flight=in_flight,
            flips=tally, has_baseline=bool(session.model.baseline), compared_with=session.versions.compared_with,
            stale=session.model.stale, filter_kind=matrix.filter_kind, filter_label=matrix.filter_label,
            search=matrix.search, sort_by=matrix.sort_by,
            reverse=matrix.reverse, consistency=session.consistency_k, version_line=session.versions.version_line,
        ))
        grader = session.grader
        config = getattr(grader, "config", None)
        self.query_one(StatusBar).show(StatusState(  # type: ignore[attr-defined]
            judge=session.judge_label, judge_ready=getattr(grader, "judge", None) is not None,
            in_flight=in_flight, concurrency=getattr(grader, "concurrency_now", None) or getattr(config, "concurrency", None),
            concurrency_text=getattr(grader, "concurrency_text", None),
            run_calls=done if session.running else 0, usage=grader.session_usage if grader is not None else None,
            dirty=session.document.dirty, file=session.rubric_path.name,
        ))

    def refresh_hint(self) -> None:
        hint = self.query_one("#cell-hint", Static)  # type: ignore[attr-defined]
        hint.update(self._hint_text())

    def _hint_text(self) -> Text | str:
        session = self.session
        sample_id, criterion_id = self.selection
        if sample_id is None:
            return ""
        result = session.model.results.get(sample_id)
        if criterion_id is None or session.rubric is None:
            notes = "; ".join(result.notes) if result is not None else ""
            return Text.assemble((terminal_safe(sample_id), "bold"), "  ", (terminal_safe(notes), "dim"),
                                 ("  enter: inspect · p / x: label pass / fail", "dim italic"))
        try:
            criterion = session.rubric.criterion(criterion_id)
        except KeyError:
            return ""
        cell = result.cell(criterion_id) if result is not None else None
        text, _ = cell_text(criterion, cell)
        why = (cell.error or cell.rationale or "").strip() if cell is not None else ""
        first = why.splitlines()[0] if why else ""
        return Text.assemble((terminal_safe(criterion_id), "bold"), " ", (text, ""), "  ", (terminal_safe(first), "dim"))

    def refresh_inspector(self) -> None:
        if not self.is_mounted or self.query_one("#tabs", TabbedContent).active != "inspector":  # type: ignore[attr-defined]
            return
        session = self.session
        sample_id, criterion_id = self.selection
        criterion = None
        if criterion_id and session.rubric is not None:
            with contextlib.suppress(KeyError):
                criterion = session.rubric.criterion(criterion_id)
        self.query_one(Inspector).show(  # type: ignore[attr-defined]
            session.samples_by_id.get(sample_id) if sample_id else None,
            session.model.results.get(sample_id) if sample_id else None,
            criterion,
            session.labels.get(sample_id) if sample_id else None,
            criteria=session.rubric.criteria if session.rubric is not None else [],
            stale=session.model.stale,
        )
