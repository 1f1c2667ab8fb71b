"""The "Improve criterion…" screen (``I``): suggested fixes for one criterion, each proven on the
labels before it is shown, and Accept to write one into the rubric.

The criterion is the one selected — the results table's column, the Agreement panel's row, or
the editor's criterion while the editor has focus — else the judge criterion with most
disagreeing labelled cells (the engine picks it). A worker runs
:func:`~rubric_studio.engine.improve._run.improve` on the rubric as the editor holds it, with
a grader built from the studio's own judge options and trust (as for grading; the reply cache
makes the cells already judged free) and the assistant on the same judge model, and posts
:class:`ImproveScreen.Improved` or :class:`ImproveScreen.ImproveFailed`.

Candidates are listed in the engine's order (best on the holdout first), each with its kind,
what it changes, its status marked (``✓ improves holdout``, ``✗ over-fits`` …), ``fixes N,
breaks M`` and kappa before → after on the fitting part and on the holdout, and the judge
calls it cost. None is hidden: one that does not improve the holdout says so. Accept writes
the highlighted one as one undoable edit (:func:`~rubric_studio.tui.improve._edits.accept_candidate`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from rubric_studio.core.problems import RubricError
from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.tui.improve import _edits as improve_edits

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.improve import Candidate, Delta, ImproveReport
    from rubric_studio.tui.host import StudioHost

#: status → (mark, style): what a candidate did on the labels it was not made from.
STATUS_MARKS = {
    "improves holdout": ("✓", "bold green"),
    "over-fits": ("✗", "bold red"),
    "worse on holdout": ("✗", "bold red"),
    "inconclusive": ("?", "yellow"),
    "worse on fitting labels": ("✗", "bold red"),
    "unconfirmed on holdout": ("?", "yellow"),
    "unconfirmed (no holdout)": ("?", "yellow"),
    "no gain": ("·", "dim"),
    "not evaluated": ("⚠", "yellow"),
}
INTRO = ("Each suggestion is re-graded on your labelled cells: a fitting part it was made from, and a holdout "
         "it never saw. ✓ only when the holdout shows the gain (enough cells, exact McNemar p < 0.05). Best first; "
         "none is hidden. Accept writes the highlighted one into the rubric (one undo step); an unconfirmed one "
         "is asked about first.")


def _kappa(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def delta_text(delta: Delta | None) -> str:
    """``fixes 3, breaks 0 · κ 0.20 → 0.80 (n 8)``, or ``–`` when nothing was compared."""
    if delta is None or delta.n == 0:
        return "–"
    return (f"fixes {delta.fixed}, breaks {delta.broke} · κ {_kappa(delta.kappa_before)} → "
            f"{_kappa(delta.kappa_after)} (n {delta.n})")


def candidate_text(number: int, candidate: Candidate) -> Text:
    """One candidate: number, kind, status marked, what it changes, both parts' deltas and its calls."""
    mark, style = STATUS_MARKS.get(candidate.status, ("?", ""))
    text = Text.assemble((f"{number}. ", "bold"), (f"{candidate.kind:<9}", "bold cyan"), (f"{mark} {candidate.status}", style))
    text.append(f"\n   {terminal_safe(candidate.description)}")
    why = candidate.change.get("why") if isinstance(candidate.change, dict) else None
    if why:
        text.append(f"\n   why: {terminal_safe(str(why))}", style="dim")
    unit = "samples" if candidate.kind == "scoring" else "cells"
    text.append(f"\n   fitting {unit}: {delta_text(candidate.fit)}")
    text.append(f"\n   holdout {unit}: {delta_text(candidate.holdout)}")
    if candidate.evidence is not None:
        text.append(f"\n   evidence: {candidate.evidence.text()}", style="dim")
    text.append(f"  ·  {candidate.calls} judge calls", style="dim")
    if candidate.error:
        text.append(f"\n   error: {terminal_safe(candidate.error)}", style="yellow")
    return text


def unconfirmed_text(candidate: Candidate) -> str:
    """Why accepting ``candidate`` is asked first: its status and what the held-out evidence says."""
    evidence = candidate.evidence
    shown = evidence.text() if evidence is not None else "no held-out labels to test it on"
    return (f"This suggestion is {candidate.status!r}: its gain on the labels it was not made from is not shown "
            f"({shown}). Apply it anyway? Labelling more samples can confirm or refute it.")


def report_line(report: ImproveReport) -> str:
    """What was improved, how the labels were split, and what it cost."""
    what = report.criterion or "no judge criterion disagrees with a labelled cell"
    return (f"{what} · split (seed {report.seed}): {len(report.fit_ids)} fitting, {len(report.holdout_ids)} holdout "
            f"labelled cells · {len(report.candidates)} suggestions · {report.calls} judge and assistant calls")


class ImproveScreen(ModalScreen[None]):
    """Suggestions for one criterion, proven first (see the module docstring)."""

    BINDINGS = [Binding("escape", "close", "Close")]
    AUTO_FOCUS = "#improve-list"

    @dataclass
    class Improved(Message):
        """``improve`` finished: its report (candidates best first)."""

        report: ImproveReport

    @dataclass
    class ImproveFailed(Message):
        """``improve`` could not run: why, in one line."""

        reason: str

    def __init__(self, rubric: Rubric, criterion_id: str | None, note: str, samples: Sequence[Any],
                 labels: Mapping[str, Any], options: Mapping[str, Any], env: Mapping[str, str] | None) -> None:
        super().__init__()
        self.rubric, self.criterion_id, self.note = rubric, criterion_id, note
        self.samples, self.labels, self.options, self.env = list(samples), dict(labels), dict(options), env
        self.report: ImproveReport | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="improve-dialog", classes="calibration-dialog"):
            title = f"Improve {self.criterion_id}" if self.criterion_id else "Improve the criterion with most disagreements"
            yield Static(Text(terminal_safe(title), style="bold"), id="improve-title")
            yield Static(Text(INTRO, style="dim"), id="improve-intro")
            yield Static("", id="improve-status")
            yield OptionList(id="improve-list")
            yield Static("", id="improve-warnings")
            with Horizontal(classes="calibration-buttons"):
                yield Button("Accept", id="improve-accept", variant="primary", disabled=True)
                yield Button("Close", id="improve-close")

    def on_mount(self) -> None:
        labelled = sum(1 for s in self.samples if s.id in self.labels)
        self._status(f"{self.note + ' ' if self.note else ''}Grading {labelled} labelled samples, then each "
                     "suggestion (cells already judged come from the cache)…")
        self.run_improve()

    @work(group="improve", exclusive=True, exit_on_error=False)
    async def run_improve(self) -> None:
        """Call the engine; post Improved or ImproveFailed."""
        from rubric_studio.judges.base import JudgeError

        try:
            report = await improve_in_studio(self.rubric, self.samples, self.labels, self.options, self.env,
                                             self.criterion_id)
        except JudgeError as exc:
            self.post_message(self.ImproveFailed(exc.message))
        except Exception as exc:  # a bug must be a line on the screen, not a traceback
            self.post_message(self.ImproveFailed(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(self.Improved(report))

    def on_improve_screen_improved(self, message: Improved) -> None:
        report = self.report = message.report
        if report.criterion:
            self.query_one("#improve-title", Static).update(Text(terminal_safe(f"Improve {report.criterion}"),
                                                                 style="bold"))
        listing = self.query_one("#improve-list", OptionList)
        listing.clear_options()
        rows: list[Option | None] = []
        for number, candidate in enumerate(report.candidates, 1):
            rows += [Option(candidate_text(number, candidate), id=f"candidate-{number}"), None]  # None: a divider
        listing.add_options(rows[:-1])
        if report.candidates:
            listing.highlighted = 0
        self.query_one("#improve-accept", Button).disabled = not report.candidates
        self._status(report_line(report) + ("" if report.candidates else " — nothing to suggest (see below)."))
        warnings = "\n".join(f"⚠ {terminal_safe(w)}" for w in [*([self.note] if self.note else []), *report.warnings])
        self.query_one("#improve-warnings", Static).update(Text(warnings, style="yellow"))

    def on_improve_screen_improve_failed(self, message: ImproveFailed) -> None:
        self._status(f"Improve failed: {message.reason}")

    # -- accepting ------------------------------------------------------------------------------
    @property
    def highlighted(self) -> Candidate | None:
        index = self.query_one("#improve-list", OptionList).highlighted
        if self.report is None or index is None or not 0 <= index < len(self.report.candidates):
            return None
        return self.report.candidates[index]

    @on(Button.Pressed, "#improve-accept")
    @on(OptionList.OptionSelected, "#improve-list")
    async def accept(self) -> None:
        """Write the highlighted candidate into the rubric; the screen closes once it is in. One whose
        gain on the holdout is not shown is written only after the user says yes to a dialog."""
        candidate = self.highlighted
        if self.report is None or candidate is None:
            return
        if candidate.confirmed:
            await self.write(candidate)
            return
        from rubric_studio.tui.dialogs import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self.write(candidate), group="improve-accept", exit_on_error=False)

        self.app.push_screen(ConfirmScreen("Apply an unconfirmed suggestion?", unconfirmed_text(candidate),
                                           yes="Apply anyway", no="Cancel"), answered)

    async def write(self, candidate: Candidate) -> None:
        """Write ``candidate`` (see :func:`~rubric_studio.tui.improve._edits.accept_candidate`)."""
        if self.report is None:
            return
        error = await improve_edits.accept_candidate(self.app, self.report, candidate)  # type: ignore[arg-type]
        if error:
            self._status(f"Not applied: {error}")
        else:
            self.dismiss(None)

    @on(Button.Pressed, "#improve-close")
    def action_close(self) -> None:
        self.dismiss(None)

    def _status(self, text: str) -> None:
        self.query_one("#improve-status", Static).update(Text(terminal_safe(text, multiline=True)))


async def improve_in_studio(rubric: Rubric, samples: Sequence[Any], labels: Mapping[str, Any],
                            options: Mapping[str, Any], env: Mapping[str, str] | None,
                            criterion_id: str | None) -> ImproveReport:
    """:func:`~rubric_studio.engine.improve._run.improve` with the studio's judge (its options and trust)
    and that judge's model as the assistant; JudgeError(kind="config") when there is no judge."""
    from rubric_studio.engine.assistant import make_assistant
    from rubric_studio.engine.improve import improve
    from rubric_studio.judges.base import JudgeError
    from rubric_studio.session.studio import make_studio_grader

    grader = await asyncio.to_thread(make_studio_grader, rubric, options, env)
    if grader.judge is None:
        await grader.aclose()
        raise JudgeError("config", grader.no_judge_reason)
    grader.one_invocation()  # a judge that stops (bad key, gone) stops every evaluation at once
    assistant, why_not = None, None
    try:
        assistant = await asyncio.to_thread(
            make_assistant, rubric, model=options.get("judge"), base_url=options.get("base_url"), env=env,
            cache_path=options.get("cache_path"), use_cache=bool(options.get("use_cache", True)),
            allow_code=bool(options.get("allow_code")))
    except Exception as exc:  # JudgeError(config) or an SDK refusing the configuration: no rewordings
        why_not = getattr(exc, "message", None) or str(exc)
    try:
        report = await improve(rubric, samples, labels, grader=grader, assistant=assistant, criterion_id=criterion_id)
    finally:
        with contextlib.suppress(Exception):
            await grader.aclose()
        if assistant is not None:
            with contextlib.suppress(Exception):
                await assistant.aclose()
    if why_not:
        report.warnings.append(f"no rewordings: {why_not}")
    return report


# -- opening ----------------------------------------------------------------------------------
def selected_criterion(app: StudioHost) -> str | None:
    """The criterion the user has selected: the Agreement panel's row while it has focus, the results
    table's column, or the editor's criterion while the editor has focus; None when none is."""
    from rubric_studio.tui.results import ResultsMatrix

    focused = app.focused
    panel = next(iter(app.query("#agreement-view")), None)  # None until mounted after the first screen
    if focused is not None and panel is not None and (focused is panel or panel in focused.ancestors):
        for table in panel.query("#agreement-table"):
            with contextlib.suppress(Exception):
                key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
                if key.startswith("criterion:"):
                    return key.split(":", 1)[1]
    matrix = app.query_one(ResultsMatrix)
    if matrix.rows and matrix.current[1] is not None:
        return matrix.current[1]
    editor = app.editor
    if editor is not None and focused is not None and editor in focused.ancestors and editor.selected is not None:
        ids = app.session.document.criterion_ids()
        return ids[editor.selected] if editor.selected < len(ids) else None
    return None


def open_improve(app: StudioHost) -> None:
    """Open the screen for the selected criterion, or say why not (no judge, no labels, a broken rubric)."""
    if isinstance(app.screen, ImproveScreen):
        return
    try:
        rubric = improve_edits.document_rubric(app)
    except RubricError as exc:
        app.notify(f"The rubric does not load: {exc.problems[0].message}. Fix it first.", title="Improve",
                   severity="warning")
        return
    grader = app.session.grader
    if grader is None:
        app.notify("Not ready: the judge is still loading.", title="Improve", severity="warning")
        return
    if grader.judge is None:
        app.notify(f"Improve needs a judge. {grader.no_judge_reason}", title="Improve", severity="warning", timeout=10)
        return
    if not any(label.verdict or label.criteria for label in app.session.labels.values()):
        app.notify("No labels yet: every suggestion is proven on your labels. Mark cells met / unmet (m / u) on "
                   "the criterion, or samples pass / fail (p / x), first.", title="Improve", severity="warning",
                   timeout=10)
        return
    criterion_id, note = selected_criterion(app), ""
    if criterion_id is not None:
        criterion = next((c for c in rubric.criteria if c.key == criterion_id), None)
        if criterion is None or not criterion.is_judged:
            note = f"{criterion_id} is a deterministic check: improving the judge criterion with most disagreements."
            criterion_id = None
    app.push_screen(ImproveScreen(rubric, criterion_id, note, app.session.samples, app.session.labels, app.session.grader_options, app.session.env))


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    yield SystemCommand("Improve criterion…", "Suggested fixes for the selected criterion, proven on your labels (I)",
                        lambda: open_improve(app))
    yield SystemCommand("Add cell as a few-shot example",
                        "The selected cell you labelled against the judge joins its criterion's examples (e)",
                        lambda: app.run_worker(improve_edits.add_cell_example(app), exit_on_error=False))
