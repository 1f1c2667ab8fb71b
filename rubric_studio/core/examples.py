"""Few-shot corrections attached to a judge criterion (``examples:``).

An example is a graded submission the rubric's author stands behind — usually a cell
they labelled against the judge — with the verdict (checklist) or 0–10 score
(analytic) it deserves and a note saying why. The judge request renders a criterion's
examples right after it (:func:`rubric_studio.judges.prompts.criterion_block`), so they
are part of that criterion's requests: editing them re-judges exactly that criterion's
cells, like an edit of its outcome.

``sample`` holds the submission's text (not a sample id), so a rubric stays
self-contained: it grades any sample set and exports to tools that never saw ours.
``id`` optionally records which sample it came from.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from rubric_studio.core.numbers import Number

#: Longest example text kept in a rubric; longer submissions are cut when an example is made.
MAX_EXAMPLE_CHARS = 4000
_VERDICT_ALIASES = {"pass": "met", "fail": "unmet", "passed": "met", "failed": "unmet"}


class CriterionExample(BaseModel):
    """One graded example: ``{sample, verdict | score, note}`` (and optionally the sample ``id``)."""

    model_config = ConfigDict(extra="forbid")

    sample: str = Field(min_length=1, max_length=20 * MAX_EXAMPLE_CHARS)
    verdict: Literal["met", "unmet"] | None = None
    score: Number | None = Field(default=None, ge=0, le=10)
    note: str | None = None
    id: str | None = None

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_aliases(cls, value: Any) -> Any:
        if isinstance(value, str):
            return _VERDICT_ALIASES.get(value.strip().lower(), value.strip().lower())
        return value

    @field_validator("sample")
    @classmethod
    def _sample_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("example sample is empty; paste the submission the example grades")
        return value

    @model_validator(mode="after")
    def _one_decision(self) -> CriterionExample:
        if (self.verdict is None) == (self.score is None):
            which = "both" if self.verdict is not None else "neither"
            raise PydanticCustomError(
                "example_decision",
                "an example needs exactly one of 'verdict' (met/unmet, checklist criteria) or 'score' "
                "(0-10, analytic criteria); it has {which}", {"which": which})
        return self

    def decision_text(self) -> str:
        """How the example's grade reads in a prompt or an export: ``met`` / ``score 7``."""
        if self.verdict is not None:
            return self.verdict
        assert self.score is not None
        return f"score {self.score:g}"


def check_examples_fit(examples: list[CriterionExample], analytic: bool, judged: bool) -> None:
    """Examples belong to judge criteria, with the decision kind the criterion has."""
    if not examples:
        return
    if not judged:
        raise PydanticCustomError("examples_on_check",
                                  "'examples' apply to judge criteria (outcome), not to deterministic checks", {})
    for index, example in enumerate(examples):
        if analytic and example.score is None:
            raise PydanticCustomError("example_kind", "examples[{index}]: this criterion has score_ranges, so an "
                                      "example gives a 'score' from 0 to 10, not a verdict", {"index": index})
        if not analytic and example.verdict is None:
            raise PydanticCustomError("example_kind", "examples[{index}]: this criterion is met/unmet, so an example "
                                      "gives a 'verdict' (met or unmet), not a score", {"index": index})


def make_example(text: str, *, verdict: str | None = None, score: float | None = None, note: str | None = None,
                 sample_id: str | None = None) -> CriterionExample:
    """An example from a labelled cell: the text is cut to :data:`MAX_EXAMPLE_CHARS` (marked)."""
    clipped = text if len(text) <= MAX_EXAMPLE_CHARS else text[:MAX_EXAMPLE_CHARS].rstrip() + " [...]"
    return CriterionExample(sample=clipped, verdict=verdict, score=score, note=(note or None), id=sample_id)
