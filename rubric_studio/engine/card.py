"""The rubric card of a finished grading run (:mod:`rubric_studio.core.card` builds and words it).

The figures are ``calibrate``'s: :func:`rubric_studio.core.agreement.agreement` against the labels,
:func:`rubric_studio.core.human_agreement.human_agreement` for the annotators, the run's flip rates
with repeats, :func:`rubric_studio.core.pass_rate.pass_rates` for the pass rate raw and corrected.
The cost per 100 samples is what grading them once costs: the run's bill plus what the cached
replies cost when bought (as ``calibrate --judges`` prices them), divided by the repeats (each
repeat sends the same request), each sample's share weighted by its judge tokens; the repeat calls
are counted apart, beside the flip rate they buy. ``rests_on`` records the samples, labels and
judge settings the figures rest on, so ``validate`` can tell when they moved.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def card_from_report(rubric, report, labels: dict, *, by_annotator: Any = None, cached: float | None = 0.0,
                     probes: dict[str, Any] | None = None, date: str | None = None,
                     count_usage: bool = True, samples: Sequence[Any] | None = None,
                     sources: Mapping[str, Any] | None = None, judge: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The card of a finished grading run (``report``) against ``labels`` (the consensus) and
    ``by_annotator`` (every annotator's labels, by sample); ``cached``: what the replies served from
    the cache cost when bought (None: unknown price). ``count_usage=False``: ``cached`` is the whole
    bill (it was priced after the run, so it holds the replies this run bought too).

    ``samples``: the graded samples (their content is hashed into ``rests_on.samples``; without
    them the card records no samples basis); ``sources``: where they and the labels were read
    (``samples_path``, ``labels_path``, ``extract``); ``judge``: the command line's judge options that
    can move a verdict (``judge``, ``batch``, ``reuse_batch``: :func:`rubric_studio.core.card.judge_basis`).
    """
    from rubric_studio.core.agreement import agreement
    from rubric_studio.core.card import (
        build_card,
        consistency_section,
        cost_figure,
        grading_once,
        probe_section,
    )
    from rubric_studio.core.human_agreement import human_agreement
    from rubric_studio.core.pass_rate import pass_rates

    data = agreement(report.samples, labels, rubric).to_dict()
    humans = human_agreement(by_annotator or {}, report.samples, [c.key for c in rubric.criteria])
    warnings = list(data["warnings"])
    if report.judge_note:
        warnings.append(f"judge criteria not graded: {report.judge_note}")
    if report.errored_cells:
        warnings.append(f"{report.errored_cells} cells ended in error; their samples are excluded")
    usage = report.usage
    spent = (usage.cost_usd if usage.cost_known else None) if count_usage else 0.0
    total = None if spent is None or cached is None else spent + cached
    once, repeat_cost = grading_once(total, report.repeat, usage.judge_calls + usage.cache_hits)
    why_no_cost = "no judge graded these samples" if report.judge is None or report.judge_note else None
    cost = cost_figure(once, [_tokens(s) for s in report.samples], why_no_cost)
    consistency = (consistency_section(report.flip_rates(), report.repeat, repeat_cost)
                   if report.repeat > 1 else None)
    return build_card(
        rubric, judge=report.judge, date=date or datetime.date.today().isoformat(), samples=len(report.samples),
        agreement=data, humans=humans, cost=cost, probes=probe_section(probes) if probes else None,
        consistency=consistency, warnings=warnings, pass_rate=pass_rates(report.samples, labels, rubric),
        rests_on=_rests_on(rubric, report, labels, samples, sources or {}, judge or {}),
    )


def _rests_on(rubric, report, labels: Mapping[str, Any], samples: Sequence[Any] | None, sources: Mapping[str, Any],
              judge: Mapping[str, Any]) -> dict[str, Any]:
    """``{samples, labels, judge}``: counts and hashes of the samples and labels (with the files
    they were read from, relative to the rubric's folder) and the judge settings that can move a verdict."""
    from rubric_studio.core.card import judge_basis, judge_name, labels_basis, relative_path, samples_basis

    rests: dict[str, Any] = {}
    ids = [s.id for s in samples] if samples is not None else [s.id for s in report.samples]
    if samples is not None:
        rests["samples"] = samples_basis(samples)
    rests["labels"] = labels_basis(labels, ids)
    for what, key in (("samples", "samples_path"), ("labels", "labels_path")):
        if what in rests and sources.get(key) is not None and rubric.path is not None:
            rests[what]["path"] = relative_path(Path(sources[key]), rubric.path)
    if "samples" in rests and sources.get("extract"):
        rests["samples"]["extract"] = sources["extract"]
    ran = judge_name(report.judge) if report.judge and report.judge.get("provider") != "panel" else None
    rests["judge"] = judge_basis(rubric.judge, judge=judge.get("judge"), ran=ran, batch=bool(judge.get("batch")),
                                 reuse_batch=judge.get("reuse_batch"))
    return rests


def _tokens(sample) -> float:
    """A sample's judge tokens (input + output over its judged cells): its share of the bill."""
    return float(sum(int(cell.detail.get("input_tokens") or 0) + int(cell.detail.get("output_tokens") or 0)
                     for cell in sample.criteria))
