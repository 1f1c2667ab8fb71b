"""Grading for a judge switch: the current judge as ``calibrate`` grades it, the candidate as
``calibrate --judges`` grades one entry (its own endpoint from ``--judge-base-url``).

Both go through the persistent cache, so a judge already run costs no calls. The current judge
grades every sample given (as plain ``calibrate``); the candidate the labelled ones, or every
sample when asked (its corrected pass rate then rests on the unlabelled ones too). Each run's
cost counts the replies it took from the cache at their recorded tokens
(:func:`~rubric_studio.engine.judge_compare.cached_cost`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.judge_compare import JudgeRun


class CannotGrade(ValueError):
    """A judge that can never work as written (nothing was sent for it), or the candidate would go
    to its provider's cloud endpoint while endpoints were named for it."""


def judge_name(grader: Any) -> str | None:
    """The judge a grader will use, as the user writes it: ``openai:gpt-6-luna``, ``A+B`` for a panel."""
    if getattr(grader, "members", None):
        return str(grader.label)
    config = getattr(grader, "config", None)
    return None if config is None else f"{config.alias or config.provider}:{config.model}"


@dataclass
class SwitchRuns:
    """Both judges' runs and what their graders asked to be said once (warnings)."""

    current: JudgeRun
    candidate: JudgeRun
    #: Which samples the candidate graded: ``labelled`` or ``all``.
    candidate_graded: str = "labelled"
    warnings: list[str] = field(default_factory=list)


async def _run(grader: Any, rubric: Rubric, samples: Sequence[Sample], name: str, warnings: list[str]) -> JudgeRun:
    """Grade ``samples``; the run, priced with what its cached replies cost when bought."""
    from rubric_studio.engine.api import unusable_judge
    from rubric_studio.engine.judge_compare import cached_cost

    try:
        if (unusable := unusable_judge(grader)) is not None:
            raise CannotGrade(f"{name}: {unusable}")
        cached = cached_cost(grader, rubric, samples)
        report = await grader.run(rubric, list(samples))
    finally:
        warnings.extend(f"{name}: {line}" for line in grader.take_warnings())
        await grader.aclose()
    return JudgeRun(name, report, cached)


def _no_judge(grader: Any) -> str | None:
    """Why a grader (or a member of its panel) has no judge to send to, or None."""
    members = getattr(grader, "members", None)
    if members:
        return next((f"{label}: {why}" for label, member in members if (why := _no_judge(member))), None)
    return None if getattr(grader, "judge", None) is not None else getattr(grader, "no_judge_reason", "no judge")


async def _checked(grader: Any, who: str) -> Any:
    """``grader``, or :class:`CannotGrade` (the grader closed) when it has no judge to send to."""
    why = _no_judge(grader)
    if why is None:
        return grader
    await grader.aclose()
    raise CannotGrade(f"{who} cannot grade: {why}")


async def grade_both(rubric: Rubric, samples: Sequence[Sample], labelled: Sequence[Sample], candidate: str,
                     options: Mapping[str, Any], base_urls: Mapping[str, str], *, all_samples: bool = False
                     ) -> SwitchRuns:
    """The current judge (the rubric's, or ``options["judge"]``) on ``samples`` and ``candidate``
    on ``labelled`` (or on ``samples`` with ``all_samples``); :class:`CannotGrade` before any call
    when either judge cannot work as written or the candidate is the current judge."""
    from rubric_studio.engine.api import make_grader
    from rubric_studio.engine.judge_compare import cloud_fallback, entry_grader

    if base_urls and (refusal := await cloud_fallback(rubric, [candidate], options, base_urls)) is not None:
        raise CannotGrade(refusal.replace("--judges entry", "--switch-to"))
    current_grader = await _checked(make_grader(rubric, **options), "the current judge")
    current = judge_name(current_grader) or "the current judge"
    if current == candidate:
        await current_grader.aclose()
        raise CannotGrade(f"--switch-to {candidate} is the judge already in use; name another judge")
    try:
        candidate_grader = await _checked(entry_grader(rubric, candidate, options, base_urls), "--switch-to")
    except CannotGrade:
        await current_grader.aclose()
        raise
    warnings: list[str] = []
    try:
        current_run = await _run(current_grader, rubric, samples, current, warnings)
    except BaseException:
        await candidate_grader.aclose()
        raise
    candidate_grader.one_invocation()
    chosen = samples if all_samples else labelled
    candidate_run = await _run(candidate_grader, rubric, chosen, candidate, warnings)
    return SwitchRuns(current_run, candidate_run, "all" if all_samples else "labelled", warnings)
