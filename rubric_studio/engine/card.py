"""The rubric card of a finished grading run (:mod:`rubric_studio.core.card` builds and words it).

The figures are ``calibrate``'s: :func:`rubric_studio.core.agreement.agreement` against the labels,
:func:`rubric_studio.core.human_agreement.human_agreement` for the annotators, the run's flip rates
with repeats; the cost per 100 samples is the run's bill plus what the cached replies cost when
bought (as ``calibrate --judges`` prices them), each sample's share weighted by its judge tokens.
"""

from __future__ import annotations

import datetime
from typing import Any


def card_from_report(rubric, report, labels: dict, *, by_annotator: Any = None, cached: float | None = 0.0,
                     probes: dict[str, Any] | None = None, date: str | None = None,
                     count_usage: bool = True) -> dict[str, Any]:
    """The card of a finished grading run (``report``) against ``labels`` (the consensus) and
    ``by_annotator`` (every annotator's labels, by sample); ``cached``: what the replies served from
    the cache cost when bought (None: unknown price). ``count_usage=False``: ``cached`` is the whole
    bill (it was priced after the run, so it holds the replies this run bought too)."""
    from rubric_studio.core.agreement import agreement
    from rubric_studio.core.card import build_card, consistency_section, cost_figure, probe_section
    from rubric_studio.core.human_agreement import human_agreement

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
    why_no_cost = "no judge graded these samples" if report.judge is None or report.judge_note else None
    cost = cost_figure(total, [_tokens(s) for s in report.samples], why_no_cost)
    consistency = consistency_section(report.flip_rates(), report.repeat) if report.repeat > 1 else None
    return build_card(
        rubric, judge=report.judge, date=date or datetime.date.today().isoformat(), samples=len(report.samples),
        agreement=data, humans=humans, cost=cost, probes=probe_section(probes) if probes else None,
        consistency=consistency, warnings=warnings,
    )


def _tokens(sample) -> float:
    """A sample's judge tokens (input + output over its judged cells): its share of the bill."""
    return float(sum(int(cell.detail.get("input_tokens") or 0) + int(cell.detail.get("output_tokens") or 0)
                     for cell in sample.criteria))
