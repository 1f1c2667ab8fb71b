"""A judge panel written into an export (promptfoo, AgentV): each member its own grader, and the
pooling rule restated as a share of members that must pass.

Both tools score a group of graders by the share of them that pass: promptfoo's ``assert-set``
(a weighted mean of its members, passing at its ``threshold``) and AgentV's ``composite`` with a
``threshold`` aggregator (passing members over members). So a criterion's panel verdict carries
over exactly where only the verdict counts - a required criterion, which gates the sample - and
where the rule already is a mean:

* ``majority`` and checklist ``mean``: met on a strict majority, a share above one half; a tie
  (a share of exactly one half) passes the group where ``judge.ties`` counts it as met (a penalty
  under the default ``against_pass``, whose group is negated: a tie then applies the penalty), so
  the share the group needs is one half or more there;
* ``all``: a share of 1; ``any``: any share above 0;
* analytic ``mean``: the members' mean score against the criterion's min_score.

What neither tool can say is a group scored 1 when it passes and 0 when not: a group's score is
its share. A criterion that adds to the sample's score under ``majority``/``all``/``any`` therefore
counts there by the share of members saying met (as under ``mean``), and analytic ``median`` as
``mean``; :func:`lossy` names what changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from rubric_studio.core.panel import tie_counts_met
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, Criterion, JudgeSettings, PanelAggregate, TieRule

#: The share of members above one half (a strict majority: 2 of 3, 3 of 4; a 2-2 tie fails).
MAJORITY_SHARE = 0.500001
#: A share of one half or more (a 2-2 tie passes; 7 of 15, the nearest share below, does not).
TIE_SHARE = 0.499999
#: Any share above 0 (one member of any panel: a panel has at most 16).
ANY_SHARE = 0.0001


def panel_members(judge: JudgeSettings | None) -> list[JudgeSettings]:
    """The panel's members as whole judge settings: the ``judge:`` block's, with what each member
    sets itself. Empty without a panel."""
    if judge is None or not judge.panel:
        return []
    base = judge.model_dump(exclude={"panel", "aggregate", "model"}, exclude_unset=True)
    return [JudgeSettings.model_validate({**base, **member.model_dump(exclude={"panel", "aggregate"},
                                                                      exclude_unset=True)})
            for member in judge.panel]


def panel_rules(judge: JudgeSettings) -> PanelAggregate:
    """The panel's pooling rules; an analytic median of two members is their mean, and said so."""
    rules = judge.aggregate or PanelAggregate()
    if rules.analytic == "median" and len(judge.panel or []) <= 2:
        rules = rules.model_copy(update={"analytic": "mean"})
    return rules


def member_names(judge: JudgeSettings) -> str:
    return "+".join(member.model or "?" for member in judge.panel or [])


def verdict_share(criterion: Criterion, rules: PanelAggregate, ties: TieRule = DEFAULT_TIE_RULE) -> float | None:
    """The share of members that must say met for the panel's verdict on ``criterion`` to be met
    (checklist rules; a tie is met where ``ties`` counts it so), or None for an analytic criterion
    (its members' mean score decides)."""
    if criterion.kind == "analytic":
        return None
    if rules.checklist in ("all", "any"):
        return 1.0 if rules.checklist == "all" else ANY_SHARE
    return TIE_SHARE if tie_counts_met(criterion, ties) else MAJORITY_SHARE


def tie_words(rules: PanelAggregate, ties: TieRule) -> str:
    """How a tie counts, for an export's description of the pooling ("" where no tie can arise)."""
    if rules.checklist not in ("majority", "mean"):
        return ""
    if ties == DEFAULT_TIE_RULE:
        return "a tie counts against the sample (unmet, or met on a penalty)"
    return f"a tie counts as {ties}"


def lossy(criterion: Criterion, rules: PanelAggregate, target: str, *, gate: bool) -> str | None:
    """What the export of ``criterion``'s panel changes in ``target`` (None when nothing): ``gate``
    says whether the criterion only gates there (its verdict counts, not its score)."""
    if criterion.kind == "analytic":
        if rules.analytic == "median":
            return (f"the panel's median score is written as the members' mean ({target} groups graders by "
                    "mean); a split panel can score and pass differently there")
        return None
    if gate or rules.checklist == "mean":
        return None
    return (f"{target} scores a group of graders by the share that pass, so this criterion adds the share of "
            f"members saying met to the sample's score (as aggregate: mean), not 1 or 0 by checklist "
            f"{rules.checklist}; a split panel can change a sample's verdict there (a required criterion "
            "pools exactly)")


def member_setting_warnings(judge: JudgeSettings, target: str, supported: Iterable[str]) -> list[str]:
    """Settings a member sets itself that ``target`` cannot carry, one warning per member."""
    kept = {"model", *supported}
    out = []
    for index, member in enumerate(judge.panel or [], start=1):
        lost = sorted(name for name in member.model_fields_set if name not in kept)
        if lost:
            out.append(f"judge.panel member {index} ({member.model}): settings not expressible in {target}: "
                       + ", ".join(f"{name}={getattr(member, name)!r}" for name in lost))
    return out
