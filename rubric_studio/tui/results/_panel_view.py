"""How the inspector shows a judge panel's cell: the tally, then each member's verdict,
rationale and evidence (the results filter "split panel" and the "most contested first"
order live in :mod:`rubric_studio.session.results_model`)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from rubric_studio.core.results import CriterionResult
from rubric_studio.core.safe_text import terminal_safe

__all__ = ["members_text"]

_MARKS = {"met": ("✓", "green"), "unmet": ("✗", "red"), "error": ("⚠", "yellow")}


def members_text(cell: CriterionResult) -> Text:
    """The panel's tally, then one block per member: mark, judge, score, rationale, quotes."""
    panel = cell.panel or {}
    head = f"\npanel {panel.get('agree', 0)}–{panel.get('disagree', 0)}"
    if panel.get("rule"):
        head += f" ({panel['rule']})"
    if cell.tie:  # counted by judge.ties: unmet, or met on a penalty by default
        head += f", a tie: counted as {cell.status}"
    if panel.get("errors"):
        head += f", {panel['errors']} errored"
    out = Text(head + "\n", style="bold")
    for member in cell.members or []:
        out.append_text(_member(member))
    return out


def _member(member: dict[str, Any]) -> Text:
    mark, style = _MARKS.get(member["status"], ("·", "dim"))
    line = Text.assemble((f"{mark} ", style), (terminal_safe(member["judge"]), "bold"))
    if member.get("raw_score") is not None:
        line.append(f"  {member['raw_score']:g}/10")
    line.append("\n")
    why = member.get("error") or member.get("rationale") or ""
    if why:
        line.append("  " + terminal_safe(why).replace("\n", "\n  ") + "\n")
    for quote in member.get("evidence") or []:
        found = "found" if quote.get("found") else "not found"
        line.append(f"  “{terminal_safe(quote['quote'])}” ({found})\n", style="dim")
    return line
