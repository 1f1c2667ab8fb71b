"""Run ``improve``: grade the labelled samples, make candidates, evaluate each, rank them.

Every evaluation is a normal :meth:`Grader.run` of the candidate rubric on the labelled
samples, so only the cells a candidate changes are judged (the rest is memo or cache),
and ``calls`` per candidate are the judge calls it really cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rubric_studio.core.labels import Label
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.improve._candidates import (
    REWORD_SCHEMA,
    REWORD_SYSTEM,
    check_candidate,
    example_candidate,
    read_rewordings,
    reword_candidates,
    reword_prompt,
)
from rubric_studio.engine.improve._improve import (
    HOLDOUT,
    Candidate,
    ImproveReport,
    cell_delta,
    cell_labels,
    cell_verdicts,
    rubric_verdicts,
    stratified_split,
    verdict_labels,
    worst_criterion,
)

KINDS = ("reword", "examples", "check", "required", "scoring", "panel")
MAX_CONTRAST = 2


async def improve(
    rubric: Rubric,
    samples: Sequence[Sample],
    labels: Mapping[str, Label],
    *,
    grader: Any,
    assistant: Any = None,
    criterion_id: str | None = None,
    seed: int = 0,
    holdout: float = HOLDOUT,
    kinds: Sequence[str] = KINDS,
) -> ImproveReport:
    """Candidates for ``criterion_id`` (default: the judge criterion with most disagreeing labelled
    cells), best first. ``assistant`` (:class:`~rubric_studio.engine.assistant.Assistant`) writes
    rewordings; without one there are none. Raises KeyError for an unknown criterion id."""
    labelled = [s for s in samples if s.id in labels]
    baseline = await grader.run(rubric, labelled)
    report = ImproveReport(criterion_id, rubric.content_hash(), seed=seed)
    report.calls = baseline.usage.judge_calls
    if baseline.judge_note:
        report.warnings.append(f"judge criteria not graded: {baseline.judge_note}")
    _warn_errored(report, rubric, baseline)
    if criterion_id is None:
        criterion_id = report.criterion = worst_criterion(rubric, baseline.samples, labels)
    if criterion_id is not None:
        criterion = rubric.criterion(criterion_id)
        await _criterion_candidates(report, rubric, criterion, labelled, labels, baseline, grader, assistant,
                                    holdout, kinds)
    elif not baseline.judge_note:
        report.warnings.append("no judge criterion disagrees with a labelled cell; suggestions come from the "
                               "sample verdicts")
    if "required" in kinds:
        await _required_candidates(report, rubric, labelled, labels, baseline, grader, holdout)
    if "scoring" in kinds:
        await _scoring_candidate(report, rubric, labelled, labels, baseline, grader, seed, holdout)
    report.candidates.sort(key=lambda c: c.rank_key(), reverse=True)
    if assistant is not None:
        report.calls += assistant.usage.judge_calls
    return report


def _warn_errored(report: ImproveReport, rubric: Rubric, baseline: Any) -> None:
    """Say so when judged cells of labelled samples errored: they cannot agree or disagree with a
    label, so a criterion whose cells all errored shows no disagreement — the judge is the problem."""
    errors = [cell for sample in baseline.samples for cell in sample.criteria
              if str(cell.status) == "error" and rubric.criterion(cell.id).is_judged]
    if errors:
        total = sum(1 for sample in baseline.samples for cell in sample.criteria
                    if rubric.criterion(cell.id).is_judged)
        first = (errors[0].error or "").split("\n")[0][:160]
        report.warnings.append(f"{len(errors)} of {total} judged cells of the labelled samples ended in error "
                               f"(e.g. {first}); they are left out of every comparison - fix the judge first")


async def _criterion_candidates(report: ImproveReport, rubric: Rubric, criterion: Any, labelled: list[Sample],
                                labels: Mapping[str, Label], baseline: Any, grader: Any, assistant: Any,
                                holdout: float, kinds: Sequence[str]) -> None:
    samples = {s.id: s for s in labelled}
    human = {sid: met for sid, met in cell_labels(labels, criterion.key).items() if sid in samples}
    if not human:
        report.warnings.append(f"no labelled cells for {criterion.key}: label met/unmet on it to get suggestions")
        return
    report.fit_ids, report.holdout_ids = stratified_split(human, report.seed, holdout)
    if not report.holdout_ids:
        report.warnings.append(f"only {len(human)} labelled cells for {criterion.key}: no holdout, so no candidate "
                               "can be confirmed; label more samples")
    before = cell_verdicts(baseline.samples, criterion.key)
    wrong = [sid for sid in report.fit_ids if sid in before and before[sid] != human[sid]]
    right = [sid for sid in report.fit_ids if sid in before and before[sid] == human[sid]]
    if not wrong and not right:
        report.warnings.append(f"no fitting label of {criterion.key} has a verdict to compare (its judged cells "
                               "ended in error): nothing to improve from until the judge answers")
    elif not wrong:
        report.warnings.append(f"the judge already agrees with every fitting label of {criterion.key}")
    made: list[Candidate] = []
    if "reword" in kinds and criterion.is_judged and wrong:
        made += await _rewordings(report, rubric, criterion, samples, labels, baseline, human, wrong, right, assistant)
    if "examples" in kinds and criterion.is_judged:
        made += [c for c in [example_candidate(rubric, criterion, samples, labels, wrong)] if c]
    if "check" in kinds and criterion.is_judged:
        made += [c for c in [check_candidate(rubric, criterion, samples, human, report.fit_ids)] if c]
    for candidate in made:
        run = await grader.run(candidate.rubric, labelled)
        after = cell_verdicts(run.samples, criterion.key)
        candidate.calls = run.usage.judge_calls
        report.calls += run.usage.judge_calls
        errors = [s.id for s in run.samples if (c := s.cell(criterion.key)) is not None and str(c.status) == "error"]
        if errors:
            candidate.error = f"{len(errors)} cell(s) errored while evaluating: {', '.join(errors[:5])}"
        candidate.fit = cell_delta(before, after, human, report.fit_ids)
        candidate.holdout = cell_delta(before, after, human, report.holdout_ids)
        report.candidates.append(candidate)
    if "panel" in kinds and criterion.is_judged:
        _panel_candidates(report, rubric, criterion, baseline, before, human)


def _panel_candidates(report: ImproveReport, rubric: Rubric, criterion: Any, baseline: Any,
                      before: dict[str, bool], human: dict[str, bool]) -> None:
    """Drop a panel member far worse than the others (:mod:`._panel`): evaluated from the baseline's
    member cells, so it costs no judge call."""
    from rubric_studio.engine.improve._panel import drop_member_candidates

    for candidate, after in drop_member_candidates(rubric, criterion, baseline.samples, human, report.fit_ids):
        candidate.fit = cell_delta(before, after, human, report.fit_ids)
        candidate.holdout = cell_delta(before, after, human, report.holdout_ids)
        report.candidates.append(candidate)


async def _rewordings(report: ImproveReport, rubric: Rubric, criterion: Any, samples: dict[str, Sample],
                      labels: Mapping[str, Label], baseline: Any, human: dict[str, bool], wrong: list[str],
                      right: list[str], assistant: Any) -> list[Candidate]:
    if assistant is None:
        report.warnings.append("no assistant model: rewordings were not asked for")
        return []
    from rubric_studio.judges.base import JudgeError

    contrast = [sid for sid in right if human[sid]][:MAX_CONTRAST] + [sid for sid in right if not human[sid]][
        :MAX_CONTRAST]
    prompt = reword_prompt(rubric, criterion, samples, labels, baseline.by_id(), human, wrong, contrast)
    validate = read_rewordings(criterion.outcome or "")
    try:
        proposals, dropped = await assistant.ask(REWORD_SYSTEM, prompt, REWORD_SCHEMA, "rewordings", validate)
    except JudgeError as exc:
        for outcome, reason in validate.dropped:  # nothing usable, even after the repair: still say what was
            report.dropped.append({"kind": "reword", "outcome": outcome, "reason": reason})
        report.warnings.append(f"rewordings could not be had from {assistant.label}: {exc.message}")
        return []
    dropped = list(dropped)
    proposals = await _same_meaning(criterion, proposals, dropped, assistant)
    made = reword_candidates(rubric, criterion, proposals, dropped)
    for outcome, reason in dropped:
        report.dropped.append({"kind": "reword", "outcome": outcome, "reason": reason})
        report.warnings.append(f"dropped a proposed rewording {outcome!r}: {reason}")
    return made


async def _same_meaning(criterion: Any, proposals: list[tuple[str, str]], dropped: list[tuple[str, str]],
                        assistant: Any) -> list[tuple[str, str]]:
    """The proposals that still test the criterion's property (:mod:`._meaning`); the rest go to ``dropped``."""
    from rubric_studio.engine.improve._meaning import (
        SAME_SCHEMA,
        SAME_SYSTEM,
        lexical_problem,
        read_same,
        same_prompt,
        why_problem,
    )
    from rubric_studio.judges.base import JudgeError

    current = criterion.outcome or ""
    kept = []
    for outcome, why in proposals:
        problem = lexical_problem(current, outcome) or why_problem(why, current, outcome, criterion.key)
        if problem is None:
            try:
                same, reason = await assistant.ask(SAME_SYSTEM, same_prompt(criterion.key, current, outcome,
                                                                            criterion.weight),
                                                   SAME_SCHEMA, "same_property", read_same)
            except JudgeError as exc:
                same, reason = False, f"could not be checked: {exc.message}"
            if not same:
                problem = f"it does not test the same property as {current!r} ({reason or 'the judge says so'})"
        if problem is None:
            kept.append((outcome, why))
        else:
            dropped.append((outcome, problem))
    return kept


async def _scoring_candidate(report: ImproveReport, rubric: Rubric, labelled: list[Sample],
                             labels: Mapping[str, Label], baseline: Any, grader: Any, seed: int,
                             holdout: float) -> None:
    """Weights and threshold fitted to the sample verdicts (:func:`rubric_studio.engine.fit._fit.fit`)."""
    from rubric_studio.engine.fit import fit

    human = verdict_labels(labels)
    if not human:
        return
    result = fit(rubric, baseline.samples, labels, seed=seed, holdout=holdout)
    if not result.changed:
        return
    fitted = result.fitted_rubric(rubric)
    run = await grader.run(fitted, labelled)
    before, after = rubric_verdicts(baseline.samples), rubric_verdicts(run.samples)
    change: dict[str, Any] = {"pass_threshold": result.threshold,
                              "weights": {k: w for k, (_, w) in result.changed_weights.items()}}
    parts = [f"pass_threshold {rubric.pass_threshold:g} → {result.threshold:g}"] if result.threshold != \
        rubric.pass_threshold else []
    parts += [f"{k}.weight {a:g} → {b:g}" for k, (a, b) in result.changed_weights.items()]
    candidate = Candidate("scoring", change, "fit scoring to the sample verdicts: " + ", ".join(parts), fitted,
                          calls=run.usage.judge_calls)
    candidate.fit = cell_delta(before, after, human, result.train_ids)
    candidate.holdout = cell_delta(before, after, human, result.holdout_ids)
    candidate.fit_result = result
    report.calls += run.usage.judge_calls
    report.candidates.append(candidate)


async def _required_candidates(report: ImproveReport, rubric: Rubric, labelled: list[Sample],
                               labels: Mapping[str, Label], baseline: Any, grader: Any, holdout: float) -> None:
    """Blame the criteria that side with the sample verdicts; flip ``required`` on those blamed in the
    fitting part, and evaluate each on the sample verdicts (no judge call: only scoring changes)."""
    from rubric_studio.engine.improve._verdicts import blame, required_candidates

    present = {s.id for s in labelled}
    human = {sid: met for sid, met in verdict_labels(labels).items() if sid in present}
    if not human:
        return
    report.blame = [b.to_dict() for b in blame(rubric, baseline.samples, human, sorted(human))]
    fit_ids, held_ids = stratified_split(human, report.seed, holdout)
    before = rubric_verdicts(baseline.samples)
    for candidate in required_candidates(rubric, blame(rubric, baseline.samples, human, fit_ids)):
        run = await grader.run(candidate.rubric, labelled)
        after = rubric_verdicts(run.samples)
        candidate.calls = run.usage.judge_calls
        report.calls += run.usage.judge_calls
        candidate.fit = cell_delta(before, after, human, fit_ids)
        candidate.holdout = cell_delta(before, after, human, held_ids)
        report.candidates.append(candidate)
