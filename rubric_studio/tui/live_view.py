"""What the studio shows of its session, beside the editor: the live pane.

The run header, problems banner, judge note, the note shown instead of an empty table, the
results table and its hint line, the inspector and the status bar. :class:`LiveView` draws
them from the session and from the app's shared values (``problems``, ``graded``,
``selection``, ``report``, ``labels``): the app's watchers of those values call the matching
method here, which redraws every pane that shows the value. It also follows the results
cursor (the selection, the editor's list following it), the tabs and which side has focus.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.css.query import NoMatches
from textual.widgets import Static, TabbedContent

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.studio import JUDGE_HELP
from rubric_studio.tui import card_actions
from rubric_studio.tui.closing import tolerate_shutdown, widgets_gone
from rubric_studio.tui.restyle import set_class_restyling
from rubric_studio.tui.results import Inspector, ResultsMatrix, ResultsPane, cell_text
from rubric_studio.tui.statusbar import RunHeader, RunState, StatusBar, StatusState

if TYPE_CHECKING:
    from rubric_studio.core.labels import Label
    from rubric_studio.session.studio import StudioSession
    from rubric_studio.tui.host import StudioHost

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


class LiveView:
    """Draws the session in the studio's panes; one per app."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app

    # -- the shared values: each redraws the panes that show it ----------------------
    @tolerate_shutdown
    def problems_changed(self) -> None:
        if not self.app.is_mounted:
            return
        self.show_banner()
        self.app.query_one(ResultsMatrix).refresh()
        self.refresh_bars()
        self.refresh_inspector()

    @tolerate_shutdown
    def rows_graded(self, changed: Sequence[str]) -> None:
        self.app.query_one(ResultsMatrix).rows_changed(changed)
        self.refresh_bars()
        if self.app.selection[0] in set(changed):
            self.refresh_inspector()
            self.refresh_hint()

    def selection_changed(self) -> None:
        self.refresh_hint()
        self.refresh_inspector()

    @tolerate_shutdown
    def report_changed(self) -> None:
        if not self.app.is_mounted:
            return
        self.app.query_one(ResultsMatrix).refresh()
        self.refresh_bars()
        self.refresh_inspector()
        self.app.calibration.publish()

    @tolerate_shutdown
    def labels_changed(self, old: Mapping[str, Label], new: Mapping[str, Label]) -> None:
        app = self.app
        if not app.is_mounted:
            return
        matrix = app.query_one(ResultsMatrix)
        if app.session.model.show_own:  # the human column shows one person's labels: any write may change it
            matrix.reset()
        else:
            matrix.rows_changed([key for key in old.keys() | new.keys() if old.get(key) != new.get(key)])
        self.refresh_bars()
        self.refresh_hint()
        self.refresh_inspector()
        app.calibration.publish()

    # -- the panes ----------------------------------------------------------------------
    def show_banner(self) -> None:
        banner = self.app.query_one("#banner", Static)
        shown = banner_text(self.app.session)
        banner.display = shown is not None
        if shown is not None:
            banner.update(shown[0])
            banner.set_class(shown[1], "-error")
            banner.set_class(not shown[1], "-warning")

    def show_judge_note(self) -> None:
        session = self.app.session
        note = self.app.query_one("#judge-note", Static)
        needs = session.rubric is not None and bool(session.rubric.judge_criteria)
        if session.judge_note and needs:
            note.update(Text.assemble(("unjudged: ", "bold"), terminal_safe(session.judge_note, multiline=True)))
            note.tooltip = JUDGE_HELP
        note.display = bool(session.judge_note and needs)
        self.refresh_bars()

    def show_empty(self) -> None:
        """The note shown instead of the table while there are no samples to show."""
        session = self.app.session
        empty = self.app.query_one("#empty", Static)
        pane = self.app.query_one(ResultsPane)
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
        """The run header above the table and the status bar below everything."""
        app = self.app
        if not app.is_mounted:
            return
        session = app.session
        matrix = app.query_one(ResultsMatrix)
        tally = session.versions.tally()
        done, total, in_flight = session.progress
        app.query_one(RunHeader).show(RunState(
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
        card_state, card_text = card_actions.card_status(app)
        app.query_one(StatusBar).show(StatusState(
            judge=session.judge_label, judge_ready=getattr(grader, "judge", None) is not None,
            in_flight=in_flight, concurrency=getattr(grader, "concurrency_now", None) or getattr(config, "concurrency", None),
            concurrency_text=getattr(grader, "concurrency_text", None),
            run_calls=done if session.running else 0, usage=grader.session_usage if grader is not None else None,
            dirty=session.document.dirty, file=session.rubric_path.name, card_state=card_state, card=card_text,
        ))

    def refresh_hint(self) -> None:
        self.app.query_one("#cell-hint", Static).update(self.hint_text())

    def hint_text(self) -> Text | str:
        """The line under the table: the cell under the cursor, or the sample and its keys."""
        session = self.app.session
        sample_id, criterion_id = self.app.selection
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
        """The inspector shows the selected cell (drawn only while its tab is shown)."""
        app = self.app
        if not app.is_mounted or app.query_one("#tabs", TabbedContent).active != "inspector":
            return
        session = app.session
        sample_id, criterion_id = app.selection
        criterion = None
        if criterion_id and session.rubric is not None:
            with contextlib.suppress(KeyError):
                criterion = session.rubric.criterion(criterion_id)
        sample = session.samples_by_id.get(sample_id) if sample_id else None
        app.query_one(Inspector).show(
            sample,
            session.model.results.get(sample_id) if sample_id else None,
            criterion,
            session.labels.get(sample_id) if sample_id else None,
            criteria=session.rubric.criteria if session.rubric is not None else [],
            stale=session.model.stale,
            probes=app.probe_findings.of(sample, criterion_id),
        )

    # -- the results cursor and the tabs ----------------------------------------------
    @tolerate_shutdown
    def cursor_moved(self, message: ResultsMatrix.Highlighted) -> None:
        """The results cursor moved: it is the selection, and the editor's list follows its column."""
        if isinstance(message, ResultsMatrix.Selected):
            return
        app = self.app
        previous = app.selection[1]
        app.selection = (message.sample_id, message.criterion_id)
        if message.following:
            # The cursor followed the editor's list, which may have moved on since (keys a few ms
            # apart): answering with this column would send the list back and lose those keys.
            return
        if message.criterion_id and message.criterion_id != previous and app.editor is not None:
            app.editor.select_criterion(message.criterion_id)

    @tolerate_shutdown
    def cell_chosen(self, message: ResultsMatrix.Selected) -> None:
        """Enter on a cell: the inspector shows it."""
        self.app.query_one("#tabs", TabbedContent).active = "inspector"
        self.app.selection = (message.sample_id, message.criterion_id)

    @tolerate_shutdown
    def editor_selected(self, criterion_id: str | None) -> None:
        """The editor's list moved to a criterion: the results cursor follows to its column."""
        if criterion_id:
            self.app.query_one(ResultsMatrix).select_criterion(criterion_id, following=True)

    def select_sample(self, sample_id: str, criterion_id: str | None = None) -> None:
        """Put the results cursor on ``sample_id`` (showing it even if filtered out)."""
        matrix = self.app.query_one(ResultsMatrix)
        matrix.reveal_sample(sample_id)  # clears a filter or search that hides it
        if criterion_id is not None and matrix.current[1] != criterion_id:
            matrix.select_criterion(criterion_id)

    def tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.tabbed_content.id == "tabs":
            self.refresh_inspector()
            # a click on the Results tab leaves focus on the tab bar, where the table's keys
            # (f, p, x, ...) do nothing: give it to the table
            if message.pane.id == "results" and self.app.focused is message.tabbed_content.query_one("Tabs"):
                self.app.call_after_refresh(self._focus_matrix)

    def _focus_matrix(self) -> None:
        with contextlib.suppress(NoMatches):
            self.app.query_one(ResultsMatrix).focus()

    def mark_focused_pane(self) -> None:
        """The pane that holds the focus is marked (studio.tcss), neither when nothing has it (the
        Inspector tab shown); the results take the width while they have focus, the editor takes
        it back with focus. (A click on a cell is resolved where it was pressed, so the table may
        widen under it.) Only the nodes the marks change are restyled (:mod:`.restyle`)."""
        if widgets_gone(self.app):  # a blur as the studio closes
            return
        screen = self.app.screen_stack[0]
        focused = screen.focused
        panes = {node.id for node in focused.ancestors_with_self} & {"left", "right"} if focused else set()
        if panes:
            set_class_restyling(screen.query_one("#main"), "right" in panes, "-results-focused")
        for pane in ("left", "right"):
            set_class_restyling(screen.query_one(f"#{pane}"), pane in panes, "-focused")
