"""Does a reworded outcome still test the criterion's property? Checked before it is tried.

Three checks, cheapest first; a rewording that fails one is dropped with the reason:

* **negation** (lexical): the rewording must keep the outcome's polarity — "Does not insult"
  reworded as "Insults the customer" tests the opposite property. Polarity is whether the
  sentence carries a negation word (not, no, never, without, n't, avoids, free of, lacks, absent).
* **why** (lexical): the reason given for the rewording must speak about the criterion — share a
  content word (4+ letters, first 5 letters compared) with the current outcome, the rewording or
  the criterion id; an empty or unrelated "why" is dropped.
* **same property** (one judge call, cached like every assistant reply): "do A and B test the
  same property of a text?", asked of the reworder model; a "no" drops the rewording.
"""

from __future__ import annotations

import re
from typing import Any

_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|without|avoids?|avoiding|lacks?|lacking|absent|free of"
                       r"|refrains?|neither|nor)\b|n't\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_STOP = frozenset({"that", "this", "with", "from", "have", "their", "they", "when", "what", "does", "into", "your",
                   "about", "which", "should", "would", "could", "must", "more", "than", "then", "them", "also",
                   "only", "each", "very", "well", "were", "been", "will", "there", "these", "those", "some",
                   "text", "reply", "response", "states", "mentions", "criterion", "outcome", "wording", "judge"})

SAME_SYSTEM = """\
You compare two statements of a criterion that an LLM judge applies to texts. Say whether they test \
the same property of a text: a text that meets one should, in all ordinary cases, meet the other. A \
clearer, narrower or better-worded statement of the same property counts as the same; a statement \
about another property, or of the opposite polarity, does not. Reply with JSON only."""
SAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"same_property": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["same_property", "reason"],
    "additionalProperties": False,
}


def _stems(text: str) -> set[str]:
    return {w.lower()[:5] for w in _WORD.findall(text.replace("-", " ").replace("_", " ")) if w.lower() not in _STOP}


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def lexical_problem(current: str, candidate: str) -> str | None:
    """Why ``candidate`` cannot be a rewording of ``current`` on its face (polarity), or None."""
    if negated(current) != negated(candidate):
        said = "negates" if negated(candidate) else "drops the negation of"
        return f"it {said} the current outcome ({current!r}): it would test the opposite property"
    return None


def why_problem(why: str, current: str, candidate: str, criterion_id: str) -> str | None:
    """Why the reason given for a rewording does not speak about the criterion, or None."""
    if not why.strip():
        return "it gives no reason"
    if not _stems(why) & (_stems(current) | _stems(candidate) | _stems(criterion_id)):
        return f"its reason ({why[:80]!r}) does not speak about the criterion"
    return None


def same_prompt(criterion_id: str, current: str, candidate: str, weight: float) -> str:
    kind = " (a penalty: met means the bad thing is present)" if weight < 0 else ""
    return (f"Criterion {criterion_id}{kind}.\nA: {current}\nB: {candidate}\n\nDo A and B test the same property? "
            'Reply {"same_property": true|false, "reason": "<one sentence>"}.')


def read_same(data: Any) -> tuple[bool, str]:
    if not isinstance(data, dict) or not isinstance(data.get("same_property"), bool):
        raise ValueError('expected {"same_property": true|false, "reason": "..."}')
    return data["same_property"], " ".join(str(data.get("reason") or "").split())[:200]


def reworder_of(grader: Any) -> tuple[str | None, str | None]:
    """(``provider:model``, base URL) of the model that writes rewordings by default: the judge the
    grader uses (a panel's first member) — never a model the user did not name or configure.
    (None, None) without a judge."""
    config = getattr(grader, "config", None) if getattr(grader, "judge", None) is not None else None
    if config is None:
        return None, None
    return config.label, config.base_url
