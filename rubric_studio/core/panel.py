"""Judge panels: several judges grade the same cells and their verdicts are pooled into one.

After "Replacing Judges with Juries" (PoLL, 2024): a few smaller judges from different
families, pooled, often agree with people better than one large judge, and a panel that
splits is a cell worth a person's look.

Pooling rules (``judge.aggregate``), over the members that gave a verdict:

* checklist (met/unmet) criteria — ``majority`` (default): met when more than half say met.
  ``all``: met when every member says met. ``any``: met when one does. ``mean``: the cell's
  score is the share of members saying met (2 of 3 → 0.667, so the sample score gets partial
  credit) and it is met on a strict majority. Under ``majority`` and ``mean`` an even split (2–2
  in a panel of four, or 1–1 once a member errored) is a **tie**, counted as ``judge.ties`` says:
  ``against_pass`` (default) counts it as the verdict that does not help the sample pass —
  **unmet** on an ordinary criterion, **met** on a penalty (a negative weight, where met means
  the bad thing is there, so an unmet tie would spare the sample its penalty); ``unmet`` or
  ``met`` count it so whatever the weight. Under ``mean`` the tie decides the cell's met/unmet
  (what a required criterion gates on); its score stays the share, 0.5.
* analytic (0-10) criteria — ``median`` (default) or ``mean`` of the members' raw scores;
  met as a single judge's score would be (score/10 ≥ min_score, with the same tolerance of
  float noise, so a pooled 7.5 meets 0.75). The median is the default because with three or
  more members one outlying score cannot overrule the others: members 9, 9, 1 pool to 9
  (met), where the mean, 6.333, lets the one member fail a cell the two others agree on.
  With two members the median is their mean; with four, the mean of the middle two.
  The pooled score is kept exact (no rounding): 7, 8 → 7.5 → 0.75, never 0.74999.

``tie`` marks a checklist cell whose members split evenly under ``majority`` or ``mean``
(1–1, 2–2): the tie rule, not a majority, decided it. The JSON report carries ``tie`` on every
panel cell (and ``panel.ties``, the rule, on a tie), the marks say ``✗ 1–1 tie`` (``✓ 1–1 tie`` on
a penalty counted as met) and the rationale says how the tie was counted ("a tie, counted as met
(penalty)"). Under the default rule a two-member ``majority`` panel therefore says met on an
ordinary criterion only when both members do, and on a penalty when either does; ``validate``
warns about an even-sized ``majority`` panel.

A member that errored is left out of the pool and counted in ``panel.errors``; the cell is
marked but never shown as a fail. Only when every member errored is the cell an error.
While any member is still pending the cell is pending.

A panel is written ``A+B+C`` (``judge.panel`` in the rubric, ``--judge A,B,C`` or
``--judge A+B+C`` on the command line, ``calibrate --judges A,A+B+C``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import DEFAULT_TIE_RULE, MAX_PANEL, Criterion, PanelAggregate, TieRule
from rubric_studio.core.scoring import cell_status

__all__ = ["DEFAULT_RULES", "check_judge_spec", "checked_judges", "contest", "even_majority_warning", "is_split",
           "panel_label", "pool_cell", "split_judges", "tie_counts_met"]

DEFAULT_RULES = PanelAggregate()
_JUDGED = (Status.MET, Status.UNMET)


def split_judges(text: str, where: str = "--judge") -> list[str]:
    """The members of ``A,B,C`` or ``A+B+C`` (one judge: a list of one); ValueError for an empty
    entry of a list (``A,,B``), which would otherwise make a smaller panel than the one written,
    and for more members than a rubric's panel may have."""
    separator = "," if "," in text else "+"
    parts = [part.strip() for part in text.split(separator)]
    if len(parts) > MAX_PANEL:
        raise ValueError(f"{where}: {len(parts)} judges in {_shorten(text)!r}; a panel has at most {MAX_PANEL}")
    if len(parts) > 1 and not all(parts):
        raise ValueError(f"{where}: an empty entry in {text!r}; expected provider:model,provider:model,...")
    return [part for part in parts if part]


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def check_judge_spec(spec: str, where: str) -> None:
    """ValueError unless ``spec`` is ``provider:model`` with a registered provider; ``where`` names
    the flag or argument it came from. The one check of a judge written by hand (``judge=``,
    ``--judge A,B,C``, ``--judges``)."""
    from rubric_studio.core.providers import names, unknown

    provider, sep, model = spec.partition(":")
    if not sep or not provider.strip() or not model.strip():
        example = f"openai:{spec.strip()}" if spec.strip() and not sep else "openai:gpt-4o-mini"
        raise ValueError(f"{where}: {spec!r} is not provider:model; write provider:model, e.g. {example} "
                         f"(providers: {', '.join(names())})")
    problem = unknown(provider)
    if problem is not None:
        raise ValueError(f"{where}: {spec!r}: {problem}")


def checked_judges(text: str, where: str) -> list[str]:
    """The judges ``text`` names (one, or a panel ``A,B,C`` / ``A+B+C``), each checked."""
    members = split_judges(text, where)
    for member in members:
        check_judge_spec(member, where)
    return members


def panel_label(members: Sequence[str]) -> str:
    """How a panel is named in reports and comparisons: ``A+B+C``."""
    return "+".join(members)


def tie_counts_met(criterion: Criterion, ties: TieRule = DEFAULT_TIE_RULE) -> bool:
    """Whether a tie on ``criterion`` counts as met under the tie rule ``ties``: under
    ``against_pass`` only on a penalty, where met is the verdict that does not help the sample pass."""
    if ties == "against_pass":
        return criterion.is_penalty
    return ties == "met"


def _tie_effect(ties: TieRule, *, penalties: bool = False) -> str:
    """How a tie is counted, in words, for messages about a panel: under ``against_pass`` the
    penalty half is said only when the rubric has a penalty it applies to."""
    if ties == "against_pass" and penalties:
        return "counted against the sample (unmet, and met on a penalty)"
    return f"counted as {'met' if ties == 'met' else 'unmet'}"


def even_majority_warning(members: int, rules: PanelAggregate | None, ties: TieRule = DEFAULT_TIE_RULE, *,
                          penalties: bool = False) -> str | None:
    """What an even-sized panel pooling checklist criteria by ``majority`` does to a split, or None:
    an even split is a tie, counted as ``ties`` says (``penalties``: the rubric has a met/unmet
    penalty, which ``against_pass`` counts as met on a tie), so with two members every split is one."""
    rules = rules or DEFAULT_RULES
    if members < 2 or members % 2 or rules.checklist != "majority":
        return None
    half = members // 2
    effect = f"a {half}–{half} split is a tie, {_tie_effect(ties, penalties=penalties)}"
    if members == 2:
        if ties == "met":
            effect += ", so every split is met: unmet only when both members say unmet"
        elif ties == "against_pass" and penalties:
            effect += ", so a criterion is met only when both members say met, and a penalty when either does"
        else:
            effect += ", so every split is unmet: met only when both members say met"
    return (f"a panel of {members} members with checklist aggregate majority: {effect}; to choose what a split "
            "means, set judge.aggregate to all (every member must say met), any (one member saying met is "
            "enough) or mean (a split scores the share of members saying met), set judge.ties (against_pass, "
            "unmet or met), or use an odd number of members")


def member_entry(label: str, cell: CriterionResult) -> dict[str, Any]:
    """One member's cell as the JSON report lists it."""
    return {
        "judge": label,
        "status": str(cell.status),
        "score": cell.score,
        "raw_score": cell.raw_score,
        "rationale": cell.rationale,
        "evidence": [e.to_dict() for e in cell.evidence],
        "source": cell.source,
        "error": cell.error,
    }


def pool_cell(
    criterion: Criterion,
    members: Sequence[tuple[str, CriterionResult]],
    rules: PanelAggregate | None = None,
    ties: TieRule = DEFAULT_TIE_RULE,
) -> CriterionResult:
    """The panel's cell for ``criterion`` from each member's (label, cell); a checklist tie counts
    as ``ties`` (``judge.ties``) says."""
    rules = rules or DEFAULT_RULES
    cells = [cell for _, cell in members]
    entries = [member_entry(label, cell) for label, cell in members]
    for waiting in (Status.PENDING, Status.UNJUDGED):
        found = next((cell for cell in cells if cell.status is waiting), None)
        if found is not None:
            return CriterionResult(
                criterion.key,
                waiting,
                source="none",
                rationale=found.rationale,
                members=entries,
                panel={"members": len(cells)},
            )
    judged = [(label, cell) for label, cell in members if cell.status in _JUDGED]
    errors = len(cells) - len(judged)
    if not judged:
        reasons = "; ".join(f"{label}: {cell.error or cell.status}" for label, cell in members)
        return CriterionResult(
            criterion.key,
            Status.ERROR,
            source="judge",
            error=f"every panel member failed ({reasons})",
            members=entries,
            panel={"members": len(cells), "errors": errors},
        )
    if criterion.kind == "analytic":
        result, rule = _pool_analytic(criterion, [cell for _, cell in judged], rules.analytic), rules.analytic
    else:
        result, rule = (
            _pool_checklist(criterion, [cell for _, cell in judged], rules.checklist, ties),
            rules.checklist,
        )
    agree = sum(1 for _, cell in judged if cell.status is result.status)
    result.panel = {
        "rule": rule,
        "members": len(cells),
        "agree": agree,
        "disagree": len(judged) - agree,
        "errors": errors,
        "split": agree != len(judged),
    }
    if result.tie:
        result.panel["ties"] = ties
    result.members = entries
    _explain(result, judged, errors, _tie_text(criterion, ties) if result.tie else None)
    return result


def _pool_checklist(criterion: Criterion, cells: list[CriterionResult], rule: str, ties: TieRule) -> CriterionResult:
    met = sum(1 for cell in cells if cell.status is Status.MET)
    share = met / len(cells)
    tie = rule in ("majority", "mean") and 2 * met == len(cells)
    if rule == "all":
        is_met = met == len(cells)
    elif rule == "any":
        is_met = met > 0
    elif tie:  # majority and mean: an even split is counted by the tie rule
        is_met = tie_counts_met(criterion, ties)
    else:  # majority and mean: a strict majority
        is_met = 2 * met > len(cells)
    status = Status.MET if is_met else Status.UNMET
    score = share if rule == "mean" else (1.0 if is_met else 0.0)
    return CriterionResult(criterion.key, status, score=score, source=_source(cells), tie=tie)


def _pool_analytic(criterion: Criterion, cells: list[CriterionResult], rule: str) -> CriterionResult:
    raws = [cell.raw_score if cell.raw_score is not None else 10 * (cell.score or 0.0) for cell in cells]
    # Exact: the sum of the raw scores over 10 × the count, one rounding only (a raw figure rounded
    # for show and then divided by 10 put 0.74999 where 0.75 belongs, and failed its threshold).
    if rule == "median":
        raw = float(statistics.median(raws))
        score = raw / 10
    else:
        raw = math.fsum(raws) / len(raws)
        score = math.fsum(raws) / (10 * len(raws))
    return CriterionResult(
        criterion.key, cell_status(criterion, score), score=score, raw_score=raw, source=_source(cells)
    )


def _source(cells: list[CriterionResult]) -> str:
    return "cache" if all(cell.source == "cache" for cell in cells) else "judge"


def _tie_text(criterion: Criterion, ties: TieRule) -> str:
    """How the rationale says a tie was counted: "a tie, counted as met (penalty)"; a rule other
    than the default is named ("a tie, counted as unmet (judge.ties: unmet)")."""
    counted = "met" if tie_counts_met(criterion, ties) else "unmet"
    if ties != DEFAULT_TIE_RULE:
        return f"a tie, counted as {counted} (judge.ties: {ties})"
    return f"a tie, counted as {counted}" + (" (penalty)" if criterion.is_penalty else "")


def _explain(result: CriterionResult, judged: list[tuple[str, CriterionResult]], errors: int,
             tie_text: str | None) -> None:
    """Rationale and evidence of the pooled cell: the tally, then what the agreeing members said."""
    assert result.panel is not None
    tally = f"panel {result.panel['agree']}–{result.panel['disagree']} ({result.panel['rule']})"
    if tie_text:
        tally += f"; {tie_text}"
    if errors:
        tally += f"; {errors} member{'s' if errors > 1 else ''} errored, pooled over the rest"
    agreeing = [(label, cell) for label, cell in judged if cell.status is result.status]
    lines = [tally, *(f"{label}: {cell.rationale}" for label, cell in agreeing if cell.rationale)]
    result.rationale = "\n".join(lines)
    seen: set[str] = set()
    for _, cell in agreeing:
        for quote in cell.evidence:
            if quote.quote not in seen:
                seen.add(quote.quote)
                result.evidence.append(quote)


def is_split(cell: CriterionResult | None) -> bool:
    """True when a panel's members did not all give the same verdict."""
    return bool(cell is not None and cell.panel and cell.panel.get("split"))


def contest(cell: CriterionResult | None) -> float:
    """How contested a panel's cell is, 0 (unanimous or no panel) to 1 (an even split)."""
    if cell is None or not cell.panel or not cell.panel.get("agree"):
        return 0.0
    agree, disagree = cell.panel["agree"], cell.panel.get("disagree", 0)
    return 2 * disagree / (agree + disagree)


def split_mark(cell: CriterionResult | None) -> str:
    """`` 2–1`` after a panel cell's mark (agreeing–disagreeing members); "" for other cells."""
    if cell is None or not cell.panel or "agree" not in cell.panel:
        return ""
    return f" {cell.panel['agree']}–{cell.panel['disagree']}"
