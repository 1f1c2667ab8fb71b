"""What a version's judge and annotators were, as short keys, and what changed between two of them.

Two causes of a changed graded state are not edits of the rubric, the samples or one judge:

* **panel change** — a judge panel's members were added, dropped or changed (a member's model
  or settings), or its aggregation rule changed; going from one judge to a panel (or back) is a
  panel change too. A single judge replaced by another is still a "judge change". The panel's
  key (:func:`grader_key_of`) lists each member's own key, so a diff can say *which* member came
  or went (:func:`judge_changes`). The order of members does not matter: pooling does not
  depend on it.
* **annotator change** — the set of people whose labels make up the consensus changed: a new
  annotator's labels joined (a second reviewer, an adjudication), someone's labels left, or the
  unnamed labels of an old sidecar were claimed by a named person. The first person to label
  (nobody had before) and the last labels removed are a "labels change". A label edited by someone
  already among the annotators is a "labels change" as before; the version records who made it
  (``labelled_by``) and a labelling run by another person is a version of its own. Switching
  who labels without labelling changes nothing graded and records nothing.

Keys are text (they are written to the run history, one field each); a key too long for the
history is replaced by a digest, whose diff then only says that something changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["annotator_changes", "annotators_key_of", "grader_key_of", "is_panel_key", "judge_changes", "judge_key_of"]

PANEL_PREFIX = "panel["
_MEMBERS = " + "
_MAX_KEY = 900  # the run history keeps a key of at most 1000 characters


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def judge_key_of(config: Any, repeat: int = 1) -> str:
    """A short key of the judge (``provider:model`` and a hash of what changes its replies);
    ``"none"`` without a judge. ``repeat`` > 1 (K judgements per cell) is part of it."""
    if config is None or not hasattr(config, "identity"):
        return "none"
    key = f"{config.label}#{_digest(config.identity())[:8]}"
    return key if repeat <= 1 else f"{key}×{repeat}"


def _member_key(label: str, config: Any) -> str:
    identity = config.identity() if config is not None and hasattr(config, "identity") else None
    return f"{label}#{_digest(identity)[:8]}"


def is_panel_key(key: str | None) -> bool:
    """Whether a judge key is a panel's (see :func:`grader_key_of`)."""
    return bool(key) and key.startswith(PANEL_PREFIX)  # type: ignore[union-attr]


def grader_key_of(grader: Any) -> str | None:
    """The judge key of a grader: a single judge's ``provider:model#hash`` (as
    :func:`~rubric_studio.engine.versions._versions.judge_key_of`), or for a panel
    ``panel[majority/median] A#hash + B#hash`` (members sorted, the aggregation rules in brackets)."""
    if grader is None:
        return None
    members = getattr(grader, "members", None)
    if not members:
        return judge_key_of(getattr(grader, "config", None))
    from rubric_studio.core.panel import DEFAULT_RULES

    rules = getattr(grader, "rules", None) or DEFAULT_RULES
    rule_text = f"{rules.checklist}/{rules.analytic}"
    keys = sorted(_member_key(label, getattr(member, "config", None)) for label, member in members)
    key = f"{PANEL_PREFIX}{rule_text}] " + _MEMBERS.join(keys)
    repeat = getattr(grader, "repeat", 1)
    key = key if not isinstance(repeat, int) or repeat <= 1 else f"{key} ×{repeat}"
    return key if len(key) <= _MAX_KEY else f"{PANEL_PREFIX}{rule_text}] {len(keys)} members #{_digest(keys)}"


def _panel_parts(key: str) -> tuple[str, dict[str, str]] | None:
    """(rules, member label -> member key) of a panel key; None when it is not one or is a digest."""
    rules, _, rest = key[len(PANEL_PREFIX):].partition("] ")
    rest = rest.rsplit(" ×", 1)[0]
    if " members #" in rest:
        return None
    members = {}
    for member in rest.split(_MEMBERS):
        members[member.rpartition("#")[0] or member] = member
    return rules, members


def judge_changes(before: str | None, after: str | None) -> list[str]:
    """What changed from one judge key to another, in words ("added anthropic:claude-haiku-4-5",
    "aggregation majority/median → all/median"); empty when the keys are equal or either is unknown."""
    if before == after or before is None or after is None:
        return []
    if not is_panel_key(before) and not is_panel_key(after):
        return [f"judge {_name(before)} → {_name(after)}"]
    if not is_panel_key(before) or not is_panel_key(after):
        single, panel = (before, after) if is_panel_key(after) else (after, before)
        parts = _panel_parts(panel)
        size = f"a panel of {len(parts[1])}" if parts else "a panel"
        return [f"one judge {_name(single)} → {size}" if panel is after else f"{size} → one judge {_name(single)}"]
    a, b = _panel_parts(before), _panel_parts(after)
    if a is None or b is None:
        return ["panel members changed"]
    lines = [f"added {label}" for label in b[1] if label not in a[1]]
    lines += [f"dropped {label}" for label in a[1] if label not in b[1]]
    lines += [f"changed {label} (its settings)" for label in a[1] if label in b[1] and a[1][label] != b[1][label]]
    if a[0] != b[0]:
        lines.append(f"aggregation {a[0]} → {b[0]}")
    if not lines:
        lines.append("panel repeat changed")
    return lines


def _name(key: str) -> str:
    return key.rpartition("#")[0] or key


def annotators_key_of(by_annotator: Mapping[str, Mapping[str, Any]]) -> str:
    """The annotators who gave any label (sample id -> annotator -> label), sorted, comma-separated
    ("" when nobody has labelled)."""
    names = sorted({name for labels in by_annotator.values() for name, label in labels.items()
                    if label is not None and not getattr(label, "is_empty", False)})  # fmt: skip
    key = ",".join(names)
    return key if len(key) <= _MAX_KEY else f"{len(names)} annotators #{_digest(names)}"


def _names(key: str) -> list[str] | None:
    if " annotators #" in key:
        return None
    return [name for name in key.split(",") if name]


def annotator_changes(before: str | None, after: str | None) -> list[str]:
    """Whose labels joined or left the consensus ("bob's labels joined"); empty when unknown or equal."""
    if before == after or not before or not after:
        return []  # equal, unknown, or the first person to label (a labels change, not an annotator change)
    a, b = _names(before), _names(after)
    if a is None or b is None:
        return ["the annotators changed"]
    return [f"{name}'s labels joined" for name in b if name not in a] + [
        f"{name}'s labels left" for name in a if name not in b
    ]


def causes(before: Any, after: Any) -> list[str]:
    """The judge, panel and annotator changes from version ``before`` to ``after``, in words."""
    lines = [f"panel: {line}" if is_panel_key(before.judge_key) or is_panel_key(after.judge_key) else line
             for line in judge_changes(before.judge_key, after.judge_key)]  # fmt: skip
    lines += [f"annotators: {line}" for line in annotator_changes(before.annotators_key, after.annotators_key)]
    if getattr(after, "labelled_by", None) and after.labels_fingerprint != before.labels_fingerprint:
        lines.append(f"labelled by {after.labelled_by}")
    return lines

