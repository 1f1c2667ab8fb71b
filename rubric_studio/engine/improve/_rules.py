"""Deterministic rules that separate a criterion's human labels (``improve`` kind ``check``).

When a person's met/unmet labels follow a rule — a phrase present or absent, a length
bound — a ``keywords`` or ``length`` check decides the criterion for free, every time,
instead of a judge that flips. The search looks only at the fitting part of the labels
(the holdout judges the rule afterwards), tries single words and two-word phrases that
occur in the labelled texts and word-count bounds between them, and keeps the rule that
agrees with the most labels (ties: a keyword over a length, a phrase that must be present over
one that must not — a criterion says what a good answer has — then the shortest, most general). A rule is proposed only when it agrees
with at least :data:`MIN_ACCURACY` of the fitting labels: a rule that is merely better
than a bad judge is not a rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_ACCURACY = 0.9
MAX_PHRASES = 400
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
_STOP = frozenset({
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "be", "it", "this", "that",
    "with", "as", "at", "by", "from", "your", "you", "we", "our", "i", "me", "my", "us", "not", "no",
})  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """A check spec (``{"type": ...}``), what it says in words, and how many fitting labels it matches."""

    check: dict[str, Any]
    text: str
    agree: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.agree / self.total if self.total else 0.0


def _phrases(text: str) -> set[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    found = {w for w in words if len(w) >= 3 and w not in _STOP}
    found |= {f"{a} {b}" for a, b in zip(words, words[1:], strict=False) if a not in _STOP or b not in _STOP}
    return found


def _keyword_rules(texts: Mapping[str, str], human: Mapping[str, bool]) -> list[Rule]:
    lowered = {sid: text.lower() for sid, text in texts.items()}
    counts: dict[str, int] = {}
    for sid in human:
        for phrase in _phrases(texts[sid]):
            counts[phrase] = counts.get(phrase, 0) + 1
    common = sorted(counts, key=lambda p: (-counts[p], p))[:MAX_PHRASES]
    rules = []
    for phrase in common:
        present = {sid: phrase in lowered[sid] for sid in human}
        agree_if_required = sum(present[sid] == met for sid, met in human.items())
        agree_if_forbidden = len(human) - agree_if_required
        if agree_if_required >= agree_if_forbidden:
            rules.append(Rule({"type": "keywords", "required": [phrase]}, f"mentions {phrase!r}",
                              agree_if_required, len(human)))
        else:
            rules.append(Rule({"type": "keywords", "forbidden": [phrase]}, f"never mentions {phrase!r}",
                              agree_if_forbidden, len(human)))
    return rules


def _length_rules(texts: Mapping[str, str], human: Mapping[str, bool]) -> list[Rule]:
    words = {sid: len(texts[sid].split()) for sid in human}
    bounds = sorted(set(words.values()))
    rules = []
    for bound in bounds:
        at_most = sum((words[sid] <= bound) == met for sid, met in human.items())
        at_least = sum((words[sid] >= bound) == met for sid, met in human.items())
        rules.append(Rule({"type": "length", "max_words": max(bound, 1)}, f"at most {bound} words", at_most,
                          len(human)))
        rules.append(Rule({"type": "length", "min_words": max(bound, 1)}, f"at least {bound} words", at_least,
                          len(human)))
    return rules


def best_rule(texts: Mapping[str, str], human: Mapping[str, bool]) -> Rule | None:
    """The rule agreeing with most of ``human`` (sample id → met) over ``texts``, or None when no
    rule reaches :data:`MIN_ACCURACY` or the labels are all of one class (any rule "fits" then)."""
    if len(human) < 2 or len(set(human.values())) < 2:
        return None
    candidates: Sequence[Rule] = [*_keyword_rules(texts, human), *_length_rules(texts, human)]
    if not candidates:
        return None
    best = max(candidates, key=lambda r: (r.agree, r.check["type"] == "keywords", "required" in r.check,
                                          -len(r.text)))
    return best if best.accuracy >= MIN_ACCURACY else None
