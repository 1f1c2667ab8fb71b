"""Calibration commands of a studio session: fitting threshold and weights, consistency runs.

* **Fit.** :meth:`Calibration.fit_refusal` says why a fit cannot start now (nothing graded, no
  labels, unsaved edits, a run still going), :meth:`Calibration.compute_fit` fits the latest
  report to the labels (blocking: run it in a thread) and :meth:`Calibration.apply_fit` writes
  the result into the rubric document as one undoable edit. A fit asked for while a save is
  still being graded is remembered (:attr:`Calibration.fit_pending`) and offered once that
  text is graded.
* **Consistency.** :meth:`Calibration.consistency_refusal` says why "judge K times" cannot run;
  :func:`parse_k` validates K; :func:`flip_summary` describes a finished consistency run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rubric_studio.core.document import EditError

if TYPE_CHECKING:
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.core.labels import Label
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.engine.fit import FitResult
    from rubric_studio.engine.grader import Grader
    from rubric_studio.engine.report import Report

DEFAULT_K = 3
MAX_K = 10


@dataclass(frozen=True)
class Refusal:
    """Why a command cannot run now, said to the user; ``severity`` as for a notification."""

    message: str
    severity: str = "warning"


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


class CalibrationContext(Protocol):
    """What fitting and consistency runs read of a session: its rubric (document and parsed),
    samples, labels, judge and latest report."""

    @property
    def document(self) -> RubricDocument: ...

    @property
    def rubric(self) -> Rubric | None: ...

    @property
    def samples(self) -> list[Sample]: ...

    @property
    def labels(self) -> dict[str, Label]: ...

    @property
    def grader(self) -> Grader | None: ...

    @property
    def report(self) -> Report | None: ...

    @property
    def running(self) -> bool: ...


class Calibration:
    """Fit and consistency checks of one session."""

    def __init__(self, session: CalibrationContext) -> None:
        self.session = session
        #: The rubric text whose graded results should be fitted once graded (a fit asked mid-save).
        self.fit_pending: str | None = None

    # -- fit ----------------------------------------------------------------------------
    def fit_refusal(self) -> Refusal | None:
        """Why a fit cannot be computed right now (None: it can). Does not look at unsaved edits."""
        session = self.session
        if session.rubric is None or session.report is None:
            return Refusal("Nothing graded yet: the fit needs graded samples and labels.")
        if session.running or session.report.rubric_hash != session.rubric.content_hash():
            self.fit_pending = session.document.text
            return Refusal("Grading is still running: the fit opens when it finishes.", "information")
        if not any(label.verdict for label in session.labels.values()):
            return Refusal("No labelled samples yet: label a few pass / fail (p / x) first.")
        return None

    def compute_fit(self) -> FitResult:
        """Fit threshold and weights of the graded rubric to the labels (blocking)."""
        from rubric_studio.engine.fit import fit

        session = self.session
        assert session.rubric is not None and session.report is not None
        return fit(session.rubric, list(session.report.samples), dict(session.labels))

    def fit_is_current(self, result: FitResult) -> bool:
        rubric = self.session.rubric
        return rubric is not None and rubric.content_hash() == result.rubric_hash

    def apply_fit(self, result: FitResult) -> str:
        """Write ``result`` into the document as one undoable edit; its summary.

        Raises :class:`ValueError` when the rubric changed since the fit or the edit fails.
        """
        from rubric_studio.engine.improve import write_fit

        if not self.fit_is_current(result):
            raise ValueError("the rubric changed since the fit; press F to fit again")
        document = self.session.document
        try:
            with document.transaction():
                return write_fit(document, result)
        except (EditError, IndexError) as exc:
            raise ValueError(f"could not apply the fit: {exc}") from None

    def take_pending_fit(self) -> bool:
        """After a run: True when a fit was asked for exactly the rubric text now graded."""
        pending, session = self.fit_pending, self.session
        if pending is None or session.rubric is None:
            return False
        if session.rubric._source_text == pending:
            self.fit_pending = None
            return True
        if session.document.text != pending:
            self.fit_pending = None  # the user moved on: forget the request
        return False

    # -- consistency ----------------------------------------------------------------------
    def consistency_refusal(self) -> Refusal | None:
        session = self.session
        rubric, grader = session.rubric, session.grader
        if rubric is None or grader is None:
            return Refusal("Not ready: the rubric or the judge is still loading.")
        if not rubric.judge_criteria:
            return Refusal("This rubric has no judged criteria: deterministic checks never flip.", "information")
        if grader.judge is None:
            return Refusal(f"Judge K times needs a judge. {grader.no_judge_reason}")
        return None

    def consistency_cells(self) -> int:
        rubric = self.session.rubric
        return len(self.session.samples) * len(rubric.judge_criteria) if rubric is not None else 0

    def consistency_judges(self) -> int:
        """How many judges answer each cell: a panel's members, else one."""
        members = getattr(self.session.grader, "members", None)
        return len(members) if members else 1

    def consistency_calls(self, k: int) -> int:
        """New judge calls of a run judging every cell ``k`` times: every judge of a panel judges
        each cell ``k − 1`` more times (each first judgement is reused)."""
        return self.consistency_cells() * self.consistency_judges() * max(0, k - 1)
