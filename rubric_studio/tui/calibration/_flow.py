"""Calibration flows of the studio: versions, fitting, consistency runs (K judgements per cell).

* **Versions.** Every completed grade of a new rubric text is a
  :class:`~rubric_studio.engine.versions._versions.Version` in :attr:`CalibrationFlow.history`
  (re-grades of the same text update it). The Agreement panel gets the diff of the
  latest two against the current labels; a grade after a save also notifies its
  summary ("v3 → v4: fixed 3 disagreements, broke 1 ...") and the run header shows it
  when there is room. ``V`` compares any two versions.
* **Fit** (``F``). :func:`~rubric_studio.engine.fit._fit.fit` runs in a worker thread on the
  latest report and the labels, :class:`~rubric_studio.tui.calibration._view.FitScreen`
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
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import SystemCommand

from rubric_studio.tui.messages import ActionFailed, FitReady

if TYPE_CHECKING:
    from rubric_studio.engine.fit import FitResult
    from rubric_studio.session.calibration import Refusal
    from rubric_studio.session.versions import RunOutcome
    from rubric_studio.tui.host import StudioHost


class CalibrationFlow:
    """Versions, fit and consistency of one studio: asks the user, the session does the work."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        self._humans_asked = 0

    def _refused(self, refusal: Refusal | None) -> bool:
        if refusal is not None:
            self.app.notify(refusal.message, severity=refusal.severity, timeout=4)
        return refusal is not None

    # -- versions and the Agreement panel ------------------------------------------------
    def graded(self, outcome: RunOutcome) -> None:
        """A run finished (the app's report watcher has published it): say what the new version
        changed, open a fit asked for."""
        app = self.app
        if outcome.version_line:
            app.notify(outcome.version_line, title="New version", timeout=8)
        if outcome.consistency_line:
            app.notify(outcome.consistency_line, title="Consistency run",
                       severity="warning" if outcome.consistency_flipped else "information", timeout=10)
        if outcome.fit_now:
            self.start_fit()

    def publish(self) -> None:
        """Hand agreement, the latest version diff and any flip rates to the Agreement panel."""
        app = self.app
        session = app.session
        panel = next(iter(app.query("#agreement-view")), None) if app.is_mounted else None
        if panel is None:  # not mounted yet: it is handed the figures once it is (StudioApp.ensure_agreement)
            return
        report, report_now = session.report, session.versions.agreement_now()
        if report is None or report_now is None:
            return
        show = getattr(panel, "show", None)
        if show is not None:
            flip_rates = report.flip_rates() if report.repeat > 1 else None
            show(report_now, session.versions.latest_diff, flip_rates, repeat=report.repeat, humans=panel.humans)
            self._publish_humans(panel)

    def _publish_humans(self, panel: Any) -> None:
        """Agreement among the annotators, computed in a thread (a thousand annotators take a while)
        and shown when done; a newer request makes an older one's figures moot."""
        from rubric_studio.tui.calibration._annotators import humans_later

        work = humans_later(self.app.session)
        if work is None:
            return
        self._humans_asked += 1
        asked = self._humans_asked

        def compute() -> None:
            humans = work()
            if asked == self._humans_asked:
                try:
                    self.app.call_from_thread(panel.show_humans, humans)
                except RuntimeError:  # the app closed meanwhile
                    pass

        self.app.run_worker(compute, thread=True, group="humans", exit_on_error=False)

    def show_versions(self) -> None:
        from rubric_studio.tui.calibration._dialogs import VersionsScreen

        session = self.app.session
        if not session.versions.history.versions:
            self.app.notify("No versions yet: the first grade of the rubric records one.", timeout=3)
            return
        self.app.push_screen(VersionsScreen(session.versions.history, dict(session.labels)))

    # -- fit -------------------------------------------------------------------------------
    def start_fit(self) -> None:
        """``F``: fit threshold and weights to the labels (asks first if there are unsaved edits)."""
        app = self.app
        session = app.session
        if session.document.dirty and session.report is not None:
            from rubric_studio.tui.dialogs import ConfirmScreen

            def chosen(save: bool | None) -> None:
                if save:
                    session.calibration.fit_pending = session.document.text
                    app.action_save()

            app.push_screen(ConfirmScreen(
                "Unsaved edits",
                "The fit is computed from the graded results of the saved rubric, and applied as an edit of it. "
                "Save your edits first? The fit opens once they are graded.",
                yes="Save and fit", no="Cancel",
            ), chosen)
            return
        if self._refused(session.calibration.fit_refusal()):
            return

        def work() -> None:
            try:
                result = session.calibration.compute_fit()
            except Exception as exc:  # a bug must be a notification, not a traceback
                app.post_message(ActionFailed("fit", f"{type(exc).__name__}: {exc}"))
                return
            app.post_message(FitReady(result))

        app.run_worker(work, thread=True, group="fit", exclusive=True, exit_on_error=False)

    def fit_ready(self, result: FitResult) -> None:
        from rubric_studio.tui.calibration._dialogs import FitScreen

        app = self.app
        if not app.session.calibration.fit_is_current(result):
            app.notify("The rubric changed while fitting; press F again.", severity="warning")
            return

        async def chosen(accept: bool | None) -> None:
            if accept:
                await self.apply(result)

        app.push_screen(FitScreen(result), chosen)

    async def apply(self, result: FitResult) -> bool:
        """Apply a fit as one ordinary edit of the rubric (undoable), then save it (re-grade)."""
        from rubric_studio.tui.improve import finish_edit

        app = self.app
        if app.editor is not None:
            await app.editor.flush()
        dirty = app.session.document.dirty
        try:
            summary = app.session.calibration.apply_fit(result)
        except ValueError as exc:
            app.notify(f"Could not apply the fit: {exc}", severity="error", title="Fit")
            return False
        finish_edit(app, dirty, summary, "Fit applied")
        return True

    # -- consistency -------------------------------------------------------------------------
    def ask_consistency(self) -> None:
        """``K``: ask for K, then judge every judged cell K times."""
        from rubric_studio.session.calibration import DEFAULT_K, parse_k
        from rubric_studio.tui.dialogs import AskScreen

        app = self.app
        calibration = app.session.calibration
        if self._refused(calibration.consistency_refusal()):
            return
        cells, judges = calibration.consistency_cells(), calibration.consistency_judges()
        per_cell = f"{cells} cells × {judges} panel members" if judges > 1 else f"{cells} cells"
        prompt = Text.assemble(
            "Each judged cell is asked K times; a cell whose K verdicts differ ", ("flips", "bold"), ".\n",
            (f"About {calibration.consistency_calls(DEFAULT_K)} new judge calls at K = {DEFAULT_K}: {per_cell} "
             "× (K − 1); each first judgement is reused. "
             "The cell shows the majority (median for scores). The next save grades normally again.", "dim"),
        )

        def chosen(text: str | None) -> None:
            if text:
                app.consistency_run(int(text))

        app.push_screen(AskScreen("Judge K times (consistency)", prompt, str(DEFAULT_K), placeholder="K",
                                  validate=parse_k), chosen)


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    flow = app.calibration
    yield SystemCommand("Fit threshold and weights to labels",
                        "pass_threshold and weights that agree best with your labels, holdout shown (F)",
                        flow.start_fit)
    yield SystemCommand("Compare versions", "What changed in verdicts and agreement between two saves (V)",
                        flow.show_versions)
    yield SystemCommand("Judge K times (consistency)",
                        "Judge every cell K times: flip rates flag ambiguous criteria (K)", flow.ask_consistency)
