"""rubric-studio: write, test and calibrate rubrics for LLM judges.

The public Python API lives here and is imported lazily, so that
``rubric-studio --help`` stays fast::

    from rubric_studio import load_rubric, load_samples, score_text

    rubric = load_rubric("support_reply.yaml")
    result = score_text(rubric, "Thanks for reaching out ...", input="Where is my refund?")
    print(result.total, result.passed)  # total is None while a judged criterion is unjudged

    report = await rubric_studio.grade_async(rubric, samples)  # judges + checks
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_rubric": "rubric_studio.core.loading",
    "parse_rubric": "rubric_studio.core.loading",
    "RubricError": "rubric_studio.core.problems",
    "Problem": "rubric_studio.core.problems",
    "Rubric": "rubric_studio.core.rubric",
    "Criterion": "rubric_studio.core.rubric",
    "load_samples": "rubric_studio.core.samples._samples",
    "Sample": "rubric_studio.core.samples._samples",
    "load_labels": "rubric_studio.core.labels._labels",
    "ScoreResult": "rubric_studio.core.results",
    "CriterionResult": "rubric_studio.core.results",
    "SampleResult": "rubric_studio.core.results",
    "score_text": "rubric_studio.core.checks._grade",
    "grade_async": "rubric_studio.engine.api",
    "grade": "rubric_studio.engine.api",
}

__all__ = [  # noqa: RUF022 - grouped by topic
    "load_rubric", "parse_rubric", "Rubric", "Criterion", "RubricError", "Problem",
    "load_samples", "Sample", "load_labels",
    "ScoreResult", "CriterionResult", "SampleResult",
    "score_text", "grade", "grade_async", "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from rubric_studio.core.checks import score_text
    from rubric_studio.core.labels._labels import load_labels
    from rubric_studio.core.loading import load_rubric, parse_rubric
    from rubric_studio.core.problems import Problem, RubricError
    from rubric_studio.core.results import CriterionResult, SampleResult, ScoreResult
    from rubric_studio.core.rubric import Criterion, Rubric
    from rubric_studio.core.samples._samples import Sample, load_samples
    from rubric_studio.engine.api import grade, grade_async


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rubric_studio' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
