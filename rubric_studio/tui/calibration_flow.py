"""Calibration flows of the studio: versions, fitting, consistency runs (K judgements per cell).

* **Versions.** Every completed grade of a new rubric text is a
  :class:`~rubric_studio.engine.versions.Version` in :attr:`CalibrationFlow.history`
  (re-grades of the same text update it). The Agreement panel gets the diff of the
  latest two against the current labels; a grade after a save also notifies its
  summary ("v3 → v4: fixed 3 disagreements, broke 1 ...") and the run header shows it
  when there is room. ``V`` compares any two versions.
* **Fit** (``F``). :func:`~rubric_studio.engine.fit.fit` runs in a worker thread on the
  latest report and the labels, :class:`~rubric_studio.tui.calibration_view.FitScreen`
  shows it, and Accept applies the threshold and weights as one ordinary editor edit
  (one undo step) which is then saved, so it re-grades and becomes a version. With
  unsaved edits the fit would describe a rubric that is not the one in the editor, so
  the studio asks first: "Save and fit" saves, and the fit opens once that save is graded.
* **Consistency** (``K``). Asks for K, then re-grades with the session grader's
  ``repeat`` set to K for that run only (repeat 0 comes from the memo/cache, repeats
  1..K−1 are new requests with their own cache keys); the next ordinary re-grade goes
  back to the session's repeat and cancels what is still in flight. The run header says
  "×K consistency run" while those results are shown; the Agreement panel lists flip
  rates per criterion, flags criteria that flip as ambiguous wording, with their samples.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.core.agreement import AgreementReport, agreement
from rubric_studio.core.document import EditError
from rubric_studio.engine.fit import FitResult, fit
from rubric_studio.engine.improve_apply import write_fit
from rubric_studio.engine.versions import VersionDiff, VersionHistory
from rubric_studio.tui.calibration_view import FitScreen, VersionsScreen
from rubric_studio.tui.dialogs import AskScreen, ConfirmScreen
from rubric_studio.tui.improve_edits import finish_edit
from rubric_studio.tui.messages import ActionFailed, FitReady

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.report import Report
    from rubric_studio.tui.app import StudioApp

DEFAULT_K = 3
MAX_K = 10


def parse_k(text: str) -> str | None:
    """Why ``text`` is not a usable K, or None."""
    try:
        k = int(text)
    except ValueError:
        return f"expected a whole number from 2 to {MAX_K}, got {text!r}"
    if not 2 <= k <= MAX_K:
        return f"K must be from 2 to {MAX_K}"
    return None


def flip_summary(report: Report) -> tuple[str, bool]:
    """One line about a consistency run's flips, and whether anything flipped."""
    rates = report.flip_rates()
    flipping = sorted(((cid, e) for cid, e in rates.items() if e["flipped"]), key=lambda item: -item[1]["flip_rate"])
    if not flipping:
        return f"×{report.repeat}: no judged criterion flipped — the judge is consistent on these samples.", False
    parts = [f"{cid} {e['flip_rate']:.0%} ({e['flipped']}/{e['cells']})" for cid, e in flipping]
    return f"×{report.repeat}: flip rates {', '.join(parts)} — ambiguous wording? See Agreement (F6).", True


class CalibrationFlow:
    """Versions, fit and consistency of one studio (the app calls these from thin methods)."""

    def __init__(self, app: StudioApp) -> None:
        self.app = app
        self.history = VersionHistory()
        self.latest_diff: VersionDiff | None = None
        self._fit_pending: str | None = None  # the rubric text whose graded results should be fitted

    # -- versions and the Agreement panel ------------------------------------------------
    @property
    def version_line(self) -> str | None:
        """The latest version diff in short (for the run header): "v3 → v4: fixed 3, broke 1"."""
        diff = self.latest_diff
        if diff is None:
            return None
        return f"v{diff.a} → v{diff.b}: fixed {len(diff.overall.fixed)}, broke {len(diff.overall.broken)}"

    def graded(self, report: Report, *, consistency: int | None) -> None:
        """A run finished: record a version (not for a consistency run), publish, notify."""
        app = self.app
        rubric = app.rubric
        if rubric is None:
            return
        report_now = agreement(report.samples, app.labels, rubric)
        new_version = False
        if consistency is None:
            before = self.history.latest
            version = self.history.record(rubric, report.samples, report_now)
            new_version = before is not None and version is not before
        self.publish(report_now)
        if new_version and self.latest_diff is not None:
            app.notify(self.latest_diff.summary_line(), title="New rubric version", timeout=8)
        if consistency is not None:
            line, flipped = flip_summary(report)
            app.notify(line, title="Consistency run", severity="warning" if flipped else "information", timeout=10)
        self._maybe_fit_after_save(rubric)

    def publish(self, report_now: AgreementReport | None = None) -> None:
        """Hand agreement, the latest version diff and any flip rates to the Agreement panel."""
        app = self.app
        report, rubric = app.report, app.rubric
        if report is None or rubric is None or not app.is_mounted:
            return
        if report_now is None:
            report_now = agreement(report.samples, app.labels, rubric)
        self.latest_diff = self.history.diff_latest(app.labels)
        panel = app.query_one("#agreement-view")
        show = getattr(panel, "show", None)
        if show is not None:
            flip_rates = report.flip_rates() if report.repeat > 1 else None
            show(report_now, self.latest_diff, flip_rates, repeat=report.repeat)

    def show_versions(self) -> None:
        if not self.history.versions:
            self.app.notify("No versions yet: the first grade of the rubric records one.", timeout=3)
            return
        self.app.push_screen(VersionsScreen(self.history, dict(self.app.labels)))

    # -- fit -------------------------------------------------------------------------------
    def start_fit(self) -> None:
        """``F``: fit threshold and weights to the labels (asks first if there are unsaved edits)."""
        app = self.app
        if app.rubric is None or app.report is None:
            app.notify("Nothing graded yet: the fit needs graded samples and labels.", severity="warning")
            return
        if app.document.dirty:
            def chosen(save: bool | None) -> None:
                if save:
                    self._fit_pending = app.document.text
                    app.action_save()

            app.push_screen(ConfirmScreen(
                "Unsaved edits",
                "The fit is computed from the graded results of the saved rubric, and applied as an edit of it. "
                "Save your edits first? The fit opens once they are graded.",
                yes="Save and fit", no="Cancel",
            ), chosen)
            return
        if app.running or app.report.rubric_hash != app.rubric.content_hash():
            self._fit_pending = app.document.text
            app.notify("Grading is still running: the fit opens when it finishes.", timeout=4)
            return
        rubric, samples, labels = app.rubric, list(app.report.samples), dict(app.labels)
        if not any(label.verdict for label in labels.values()):
            app.notify("No labelled samples yet: label a few pass / fail (p / x) first.", severity="warning")
            return

        def work() -> None:
            try:
                result = fit(rubric, samples, labels)
            except Exception as exc:  # a bug must be a notification, not a traceback
                app.post_message(ActionFailed("fit", f"{type(exc).__name__}: {exc}"))
                return
            app.post_message(FitReady(result))

        app.run_worker(work, thread=True, group="fit", exclusive=True, exit_on_error=False)

    def _maybe_fit_after_save(self, rubric: Rubric) -> None:
        pending = self._fit_pending
        if pending is None:
            return
        if rubric._source_text == pending:
            self._fit_pending = None
            self.start_fit()
        elif self.app.document.text != pending:
            self._fit_pending = None  # the user moved on: forget the request

    def fit_ready(self, result: FitResult) -> None:
        app = self.app
        if app.rubric is None or app.rubric.content_hash() != result.rubric_hash:
            app.notify("The rubric changed while fitting; press F again.", severity="warning")
            return

        async def chosen(accept: bool | None) -> None:
            if accept:
                await self.apply(result)

        app.push_screen(FitScreen(result), chosen)

    async def apply(self, result: FitResult) -> bool:
        """Apply a fit as one ordinary edit of the rubric (undoable), then save it (re-grade)."""
        app = self.app
        document, editor = app.document, app.editor
        if editor is not None:
            await editor.flush()
        if app.rubric is None or app.rubric.content_hash() != result.rubric_hash:
            app.notify("The rubric changed since the fit; press F to fit again.", severity="error")
            return False
        dirty = document.dirty
        try:
            with document.transaction():
                summary = write_fit(document, result)
        except (EditError, IndexError, ValueError) as exc:
            app.notify(f"Could not apply the fit: {exc}", severity="error", title="Fit")
            return False
        finish_edit(app, dirty, summary, "Fit applied")
        return True

    # -- consistency -------------------------------------------------------------------------
    def ask_consistency(self) -> None:
        """``K``: ask for K, then judge every judged cell K times."""
        app = self.app
        rubric, grader = app.rubric, app.grader
        if rubric is None or grader is None:
            app.notify("Not ready: the rubric or the judge is still loading.", severity="warning")
            return
        if not rubric.judge_criteria:
            app.notify("This rubric has no judged criteria: deterministic checks never flip.", timeout=4)
            return
        if grader.judge is None:
            app.notify(f"Judge K times needs a judge. {grader.no_judge_reason}", severity="warning", timeout=8)
            return
        cells = len(app.samples) * len(rubric.judge_criteria)
        prompt = Text.assemble(
            "Each judged cell is asked K times; a cell whose K verdicts differ ", ("flips", "bold"), ".\n",
            (f"About {cells} × (K − 1) new judge calls ({cells} cells; each first judgement is reused). "
             "The cell shows the majority (median for scores). The next save grades normally again.", "dim"),
        )

        def chosen(text: str | None) -> None:
            if text:
                app.consistency_run(int(text))

        app.push_screen(AskScreen("Judge K times (consistency)", prompt, str(DEFAULT_K), placeholder="K",
                                  validate=parse_k), chosen)


def commands(app: StudioApp) -> Iterable[SystemCommand]:
    flow = app.calibration
    yield SystemCommand("Fit threshold and weights to labels",
                        "pass_threshold and weights that agree best with your labels, holdout shown (F)",
                        flow.start_fit)
    yield SystemCommand("Compare versions", "What changed in verdicts and agreement between two saves (V)",
                        flow.show_versions)
    yield SystemCommand("Judge K times (consistency)",
                        "Judge every cell K times: flip rates flag ambiguous criteria (K)", flow.ask_consistency)

