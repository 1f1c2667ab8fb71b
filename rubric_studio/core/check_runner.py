"""Running a rubric's deterministic checks over samples: each check compiled once by its
registered definition, then applied to every sample, ending in ``error`` with the reason instead of
raising. Code checks run only when the rubric is trusted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rubric_studio.core.checks import CheckFailure, CheckTimeout, Evaluator, TextView, definition_of
from rubric_studio.core.numbers import EPSILON
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.samples import Sample

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Criterion, Rubric

__all__ = ["UNTRUSTED_REASON", "CheckRunner", "compile_check"]

UNTRUSTED_REASON = ("custom code check not run: this rubric is not trusted "
                    "(trust it in the studio, or run with --allow-code)")


def compile_check(criterion: Criterion, base_dir: Path | None = None) -> Evaluator:
    """The evaluator for one check criterion, built by its check type's registered definition."""
    spec = criterion.check
    if spec is None:
        raise TypeError(f"criterion {criterion.id!r} has no deterministic check")
    return definition_of(spec).evaluator(spec, base_dir)


class CheckRunner:
    """Runs a rubric's deterministic checks; compiled once, applied to many samples."""

    def __init__(self, rubric: Rubric, *, allow_code: bool = False, base_dir: Path | None = None):
        self.rubric = rubric
        self.allow_code = allow_code
        if base_dir is None and rubric.path:
            base_dir = Path(rubric.path).resolve().parent
        # (criterion, id, met threshold, evaluator or None when untrusted), computed once.
        self._plan: list[tuple[Criterion, str, float, Evaluator | None]] = []
        #: criterion key → the error of its cells once it timed out on a sample (see :class:`CheckTimeout`).
        self._timed_out: dict[str, str] = {}
        for criterion in rubric.check_criteria:
            assert criterion.check is not None
            trusted = allow_code or not criterion.check.runs_code
            evaluator = compile_check(criterion, base_dir) if trusted else None
            self._plan.append((criterion, criterion.key, criterion.effective_min_score - EPSILON, evaluator))

    @property
    def criteria(self) -> list[Criterion]:
        return [entry[0] for entry in self._plan]

    def run_sample(self, sample: Sample, only: set[str] | None = None) -> dict[str, CriterionResult]:
        """Results of every check criterion (or those in ``only``) for one sample."""
        view = TextView(sample)
        results: dict[str, CriterionResult] = {}
        met, unmet = Status.MET, Status.UNMET
        for _criterion, key, bar, evaluate in self._plan:
            if only is not None and key not in only:
                continue
            if evaluate is None:
                results[key] = CriterionResult(key, Status.UNJUDGED, rationale=UNTRUSTED_REASON, source="check")
                continue
            skipped = self._timed_out.get(key)
            if skipped is not None:
                results[key] = CriterionResult(key, Status.ERROR, source="check", error=skipped)
                continue
            try:
                score, why, evidence = evaluate(view)
            except CheckTimeout as exc:
                self._timed_out[key] = (f"not run: this check ran out of time on sample {sample.id!r} "
                                        f"({exc}); it is skipped for the other samples until it changes")
                results[key] = CriterionResult(key, Status.ERROR, source="check", error=str(exc))
                continue
            except CheckFailure as exc:
                results[key] = CriterionResult(key, Status.ERROR, source="check", error=str(exc))
                continue
            except Exception as exc:  # a bug in a check must not take down the run
                results[key] = CriterionResult(
                    key, Status.ERROR, source="check", error=f"check failed: {type(exc).__name__}: {exc}"
                )
                continue
            results[key] = CriterionResult(key, met if score >= bar else unmet, score, None, why, evidence, "check")
        return results
