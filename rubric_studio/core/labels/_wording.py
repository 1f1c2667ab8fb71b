"""Which wording of a criterion a label answered: criteria drift made visible.

People refine a criterion while they label (criteria drift: the act of grading changes what one
means by it), so a label given under yesterday's outcome may not answer today's. Each criterion
label records the **wording fingerprint** of the criterion it answered, beside its met / unmet
(``given_under: {tone: 3f2a9c1b}`` in the sidecar); when the criterion changes, its fingerprint
changes, and the labels that recorded the old one read as *given under an older wording* until
someone labels the cell again.

The fingerprint is the first 8 hex digits of the SHA-256 of what the labeller is asked: the
criterion's kind, its outcome with runs of whitespace made one space (re-wrapping a line changes
nothing), whether it is a contradiction criterion (met then means "does not contradict"), and an
analytic criterion's score bands. Weights, ``required``, ``min_score``, tags and examples are not
part of it: they change how a label counts, not what it answered. A deterministic check has no
wording; its fingerprint is that of its type and parameters.

A label with no fingerprint (written before fingerprints, imported, typed by hand) is
*unrecorded*: counted apart, never as older.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: Hex digits kept of the SHA-256 (32 bits: two wordings of one criterion collide once in 4 billion).
FINGERPRINT_LENGTH = 8
#: The longest fingerprint read from a file (a hand-made one may be longer than ours).
MAX_FINGERPRINT = 64
#: What the studio and the web page show beside a label given under an older wording.
OLDER_MARK = "↺"
OLDER_TEXT = "given under an older wording"
#: A consensus cell whose annotators answered different wordings (at least one of them older).
SEVERAL = "(several)"

#: What :func:`wording_state` says of a cell.
CURRENT_WORDING, OLDER_WORDING, UNRECORDED_WORDING = "current", "older", "unrecorded"


def _words(text: str | None) -> str:
    return " ".join((text or "").split())


def wording_fingerprint(criterion: Any) -> str:
    """The wording fingerprint of a :class:`~rubric_studio.core.rubric.Criterion` (see the module docstring)."""
    parts: list[str] = [str(criterion.kind)]
    if criterion.check is not None:
        check = criterion.check
        params = check.model_dump(mode="json", exclude={"type", "timeout"}, exclude_none=True, by_alias=True)
        parts.append(json.dumps({"type": check.type, **params}, sort_keys=True, ensure_ascii=False, default=str))
    else:
        parts.append(_words(criterion.outcome))
        if criterion.operator == "contradiction":
            parts.append("contradiction")
        for low, text in (criterion.score_ranges or {}).items():
            parts.append(f"{low}: {_words(text)}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def rubric_fingerprints(criteria: Iterable[Any]) -> dict[str, str]:
    """Criterion id -> wording fingerprint, for every criterion given (a rubric's ``criteria``)."""
    return {criterion.key: wording_fingerprint(criterion) for criterion in criteria}


def check_fingerprint(value: Any, where: str) -> str:
    """A fingerprint read from a file or a request; ValueError says what is wrong."""
    if not isinstance(value, str) or len(value) > MAX_FINGERPRINT or not (value.isascii() and value.isalnum()):
        raise ValueError(f"{where} must be a wording fingerprint (letters and digits, as rubric-studio "
                         f"writes it), got {value!r}")
    return value


def wording_state(label: Any, criterion_id: str, fingerprint: str | None) -> str | None:
    """Whether ``label``'s cell of the criterion answered its current wording (``fingerprint``):
    :data:`CURRENT_WORDING`, :data:`OLDER_WORDING` or :data:`UNRECORDED_WORDING`; None when the label has no such cell."""
    if label is None or criterion_id not in label.criteria:
        return None
    given = label.given_under.get(criterion_id)
    if given is None:
        return UNRECORDED_WORDING
    return CURRENT_WORDING if given == fingerprint else OLDER_WORDING


def older_cells(label: Any, fingerprints: Mapping[str, str]) -> list[str]:
    """The criteria (of ``fingerprints``) whose cell in ``label`` was given under an older wording."""
    if label is None:
        return []
    return [cid for cid in label.criteria if cid in fingerprints
            and wording_state(label, cid, fingerprints[cid]) == OLDER_WORDING]


def consensus_wording(given: list[str | None]) -> str | None:
    """The fingerprint of a consensus cell from those of the labels it pools: theirs when every label
    that recorded one recorded the same and none lacks one; :data:`SEVERAL` when two differ (one of
    them is older whatever the wording now); None when some recorded none (unrecorded, not older)."""
    recorded = {g for g in given if g is not None}
    if len(recorded) > 1:
        return SEVERAL
    if not recorded or None in given:
        return None
    return next(iter(recorded))
