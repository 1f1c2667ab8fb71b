"""Grading one text with a rubric's deterministic checks, without a judge.

:func:`score_text` runs the checks (:mod:`~rubric_studio.core.check_runner`) on one text and
aggregates the cells as every run does (:mod:`~rubric_studio.core.scoring`). It sits above
the rubric model, the checks and scoring, so none of those needs to import the others back.
"""

from __future__ import annotations

from rubric_studio.core.check_runner import CheckRunner
from rubric_studio.core.results import CriterionResult, ScoreResult, Status
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.core.scoring import score_sample

__all__ = ["score_text"]


def score_text(
    rubric: Rubric,
    text: str,
    *,
    input: str | None = None,
    ground_truth: str | None = None,
    allow_code: bool = False,
) -> ScoreResult:
    """Run ``rubric``'s deterministic checks on one text; judge criteria stay ``unjudged``.

    Returns:
        A :class:`~rubric_studio.core.results.ScoreResult` with ``total`` (None while a judged
        criterion is unjudged), ``passed``, ``verdict`` and per-criterion ``details``.
    Raises:
        Nothing for a failing check (its error is in the result); an untrusted ``python`` or
        ``command`` check is reported as not run unless ``allow_code``.
    """
    sample = Sample(id="text", output=text, input=input, ground_truth=ground_truth)
    runner = CheckRunner(rubric, allow_code=allow_code)
    results = runner.run_sample(sample)
    for criterion in rubric.judge_criteria:
        results[criterion.key] = CriterionResult(
            criterion.key, Status.UNJUDGED, source="none", rationale="judge criteria are not graded by score_text()"
        )
    return ScoreResult.from_outcome(score_sample(rubric, results))
