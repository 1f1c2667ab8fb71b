"""rubric-studio: write, test and calibrate rubrics for LLM judges.

The public Python API lives here and is imported lazily, so that
``rubric-studio --help`` stays fast::

    from rubric_studio import load_rubric, load_samples, score_text

    rubric = load_rubric("support_reply.yaml")
    result = score_text(rubric, "Thanks for reaching out ...", input="Where is my refund?")
    print(result.total, result.passed)  # total is None while a judged criterion is unjudged

    report = rubric_studio.grade(rubric, ["first output", "second output"])  # judges + checks
    rubric_studio.agreement(rubric, report, {"1": "pass", "2": "fail"}).overall.kappa

``grade`` also runs inside a running event loop (a Jupyter cell); ``await grade_async(...)``
where you can await.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "load_rubric": "core.loading",
    "parse_rubric": "core.loading",
    "RubricError": "core.problems",
    "Problem": "core.problems",
    "Rubric": "core.rubric",
    "Criterion": "core.rubric",
    "load_samples": "core.samples",
    "Sample": "core.samples",
    "load_labels": "core.labels",
    "ScoreResult": "core.results",
    "CriterionResult": "core.results",
    "SampleResult": "core.results",
    "score_text": "core.grading",
    "grade_async": "engine.api",
    "grade": "engine.api",
    "Report": "engine.report",
    "as_samples": "core.samples",
    "agreement": "_api",
    "fit": "_api",
    "improve": "_api",
    "compare_judges": "_api",
    "JudgeComparison": "_api",
    "export": "_api",
    "import_rubric": "interop",
    "FORMATS": "interop",
}

# Written out, grouped by topic, because the docs' API page reads it from the source (without
# running it); tests/test_lazy_surfaces.py keeps it equal to _EXPORTS and __version__.
__all__ = [  # noqa: RUF022 - grouped by topic
    "load_rubric", "parse_rubric", "Rubric", "Criterion", "RubricError", "Problem",
    "load_samples", "Sample", "load_labels",
    "ScoreResult", "CriterionResult", "SampleResult",
    "score_text", "grade", "grade_async", "Report", "as_samples",
    "agreement", "fit", "improve", "compare_judges", "JudgeComparison",
    "export", "import_rubric", "FORMATS", "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from rubric_studio._api import JudgeComparison, agreement, compare_judges, export, fit, improve
    from rubric_studio.core.grading import score_text
    from rubric_studio.core.labels import load_labels
    from rubric_studio.core.loading import load_rubric, parse_rubric
    from rubric_studio.core.problems import Problem, RubricError
    from rubric_studio.core.results import CriterionResult, SampleResult, ScoreResult
    from rubric_studio.core.rubric import Criterion, Rubric
    from rubric_studio.core.samples import Sample, as_samples, load_samples
    from rubric_studio.engine.api import grade, grade_async
    from rubric_studio.engine.report import Report
    from rubric_studio.interop import FORMATS, import_rubric


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
