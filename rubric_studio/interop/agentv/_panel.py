"""A judge panel in an AgentV export: each member its own grader provider, each judged criterion a
group of one grader per member that pools them as the panel's rule does.

AgentV 4.42 (``packages/core/src/evaluation/graders/composite.ts``) has a ``composite`` grader:
its ``threshold`` aggregator scores the share of members that pass and passes at ``threshold``,
leaving out a member whose grader failed (verdict ``skip``), as ``grade`` leaves an errored member
out of the pool; its ``weighted_average`` aggregator scores the members' mean. A ``rubrics``
grader names its judge with ``target:`` (a ``.agentv/targets.yaml`` entry). AgentV 5 replaced
``composite`` with promptfoo's ``assert-set`` (the children's weighted mean against
``threshold``; a child that failed counts with score 0) and names a grader's judge with
``provider:`` (a ``providers`` label). So per judged criterion:

* checklist: the share of members that must pass (:func:`.._panel.verdict_share`: 0.500001 for
  ``majority`` and ``mean``, so a tie fails - 0.499999 where ``judge.ties`` counts a tie as met,
  as the default does on a penalty, whose negated group a tie then fails; 1 for ``all``; 0.0001
  for ``any``) as the group's threshold, and for a required criterion also its ``min_score`` gate;
* analytic ``mean``: the members' mean score (4: ``weighted_average``; 5: the set's mean) against
  the criterion's min_score; ``median`` is written as the mean, warned.

What AgentV cannot say - a group scored 1 or 0 by its verdict - is warned per criterion.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, PanelAggregate, Rubric, TieRule
from rubric_studio.interop._common import Warnings, boundary_safe, num
from rubric_studio.interop._panel import (
    lossy,
    member_setting_warnings,
    panel_members,
    panel_rules,
    verdict_share,
)
from rubric_studio.interop.agentv._judge import JUDGE_MODEL_VARIABLE, provider_entry

#: The judge settings AgentV carries per member (as for a single judge).
CARRIED = ("base_url", "temperature")


@dataclass
class Panel:
    """The members AgentV can express, as provider entries (``label`` names each one's grader
    provider in 5, its target in 4), with the variable each one's model is read from in 4."""

    rules: PanelAggregate
    ties: TieRule = DEFAULT_TIE_RULE
    providers: list[dict[str, Any]] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)


def build_panel(rubric: Rubric, label: str, warn: Warnings) -> Panel | None:
    """The rubric's panel for AgentV, or None (no panel, or no member AgentV can express: warned)."""
    judge = rubric.judge
    if judge is None or not judge.panel:
        return None
    for note in member_setting_warnings(judge, "AgentV", CARRIED):
        warn.add(note)
    panel = Panel(panel_rules(judge), judge.ties)
    for index, member in enumerate(panel_members(judge), start=1):
        variable = f"{JUDGE_MODEL_VARIABLE}_{index}"
        left_out = (f"panel member {index} is left out, and each criterion pools the other members (a verdict "
                    "can differ from grade's)")
        entry = provider_entry(member, f"{label}-{index}", warn, model_variable=variable, left_out=left_out)
        if entry is not None:
            panel.providers.append(entry)
            panel.models.append(member.model or "?")
            panel.variables.append(variable)
    if not panel.providers:
        warn.add("no judge.panel member has an AgentV provider; the criteria are exported without a judge")
        return None
    return panel


def _gates(criterion: Criterion) -> bool:
    """Whether ``criterion`` gates the sample in AgentV (penalties cannot; a 0-10 criterion met at
    any score has nothing to gate)."""
    return criterion.required and criterion.weight > 0 and criterion.effective_min_score > 0


def _pass_mark(criterion: Criterion, rules: PanelAggregate, ties: TieRule) -> float:
    """The group's pass mark: the share of members for a checklist criterion, the min_score for an
    analytic one (against the members' mean score)."""
    share = verdict_share(criterion, rules, ties)
    return share if share is not None else boundary_safe(criterion.effective_min_score)


def _score_note(criterion: Criterion, rules: PanelAggregate, share: float) -> str | None:
    """What AgentV's group score changes for ``criterion`` (None when nothing). A group's score is
    its share of passing members (4) or their mean score (5), whether or not it gates."""
    if criterion.kind == "analytic" or rules.checklist == "mean":
        return lossy(criterion, rules, "AgentV", gate=False)
    if _gates(criterion):
        return (f"AgentV gates this required criterion as the panel does (the sample fails when under {num(share)} "
                "of members pass), but the group also adds the share of members saying met to the sample's "
                f"score, not 1 (checklist {rules.checklist}): a sample the panel passes on a split vote scores "
                "lower there and can miss the pass_threshold")
    return ("AgentV scores a group of graders by the share that pass, so this criterion adds the share of members "
            f"saying met to the sample's score (as aggregate: mean), not 1 or 0 by checklist {rules.checklist}; "
            "a split panel can change a sample's verdict there")


def panel_assertion(criterion: Criterion, item: dict[str, Any], panel: Panel, version: int,
                    warn: Warnings) -> dict[str, Any]:
    """``criterion`` as one AgentV group of a grader per member (``item`` its rubric item): a 4.x
    ``composite`` or a 5.x ``assert-set``."""
    mark = _pass_mark(criterion, panel.rules, panel.ties)
    note = _score_note(criterion, panel.rules, mark)
    if note:
        warn.criterion(criterion.key, note)
    negated = criterion.weight < 0
    names = [f"{criterion.key}@{model}" for model in panel.models]
    labels = [entry["label"] for entry in panel.providers]
    if version == 4:
        entry: dict[str, Any] = {"name": criterion.key, "type": "composite", "weight": num(abs(criterion.weight))}
        members = [{"name": name, "type": "rubrics", "target": label, "criteria": [copy.deepcopy(item)]}
                   for name, label in zip(names, labels, strict=True)]
    else:
        entry = {"metric": criterion.key, "type": "assert-set", "weight": num(abs(criterion.weight)),
                 "threshold": num(mark)}
        members = [{"metric": name, "type": "llm-rubric", "provider": label, "value": [copy.deepcopy(item)]}
                   for name, label in zip(names, labels, strict=True)]
    if _gates(criterion):
        entry["required"] = True
        entry["min_score"] = num(mark)
    if negated:
        entry["negate"] = True
    if version == 4:
        analytic_mean = criterion.kind == "analytic"
        entry["aggregator"] = {"type": "weighted_average"} if analytic_mean else {"type": "threshold",
                                                                                  "threshold": num(mark)}
        entry["assertions"] = members
    else:
        entry["assert"] = members
    return entry


def version_notes(panel: Panel, version: int, warn: Warnings) -> None:
    """What the AgentV version changes for every panel criterion."""
    if version == 5:
        warn.add("AgentV 5's assert-set counts a panel member whose grader failed as a failing member (score 0); "
                 "grade leaves it out of the pool, so a member's error can change a verdict there (AgentV 4's "
                 "composite skips it, as grade does)")
