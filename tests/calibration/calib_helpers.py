"""Hand-made graded samples for the calibration tests."""

from __future__ import annotations

from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict


def result(sample_id: str, verdict: str, cells: dict[str, str] | None = None) -> SampleResult:
    """A graded sample with a given verdict and cell statuses (met → score 1, unmet → 0)."""
    criteria = [
        CriterionResult(cid, Status(status), score={"met": 1.0, "unmet": 0.0}.get(status))
        for cid, status in (cells or {}).items()
    ]
    return SampleResult(sample_id, None, Verdict(verdict), criteria)
