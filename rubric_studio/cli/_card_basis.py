"""What a rubric's card rests on as it is now, and what changed since the card: one reading for
``validate`` (which calls a card stale) and ``export`` (which names only a fresh card).

The card's ``rests_on`` names the samples and labels its figures came from; they are read again
from those files (those beside the rubric when it names none), each to ``{n, hash}``, and
compared with :func:`rubric_studio.core.card.staleness` together with the rubric and the judge it
names. A file outside the rubric's folder (or in a hidden or credentials folder below it) is
never read: its part is not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The extractors a card may record for its samples (another value reads them with the default).
_EXTRACTORS = ("last_assistant", "all_assistant", "transcript")


def card_changes(rubric, card: Mapping[str, Any]) -> list[str]:
    """What changed since ``card`` was written — the rubric, the judge it names, the samples and
    labels the card rests on — each named (``tone changed``, ``labels changed since the card: 12 → 15
    labelled``); empty when the card is fresh."""
    from rubric_studio.core.card import staleness

    return staleness(card, rubric, rests_on_now(rubric, card))


def rests_on_now(rubric, card: Mapping[str, Any]) -> dict[str, Any]:
    """The samples and labels the card rests on, as they are now: read from the files it names
    (those beside the rubric when it names none), each ``{n, hash}`` or ``{cant_read: why}``.
    A file outside the rubric's folder (or in a hidden or credentials folder below it) is not read."""
    from rubric_studio.core.card import samples_basis
    from rubric_studio.core.discovery import find_samples_for
    from rubric_studio.core.labels import labels_path_for
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.samples import load_samples

    rests = card.get("rests_on") if isinstance(card.get("rests_on"), dict) else {}
    then_samples, then_labels = (rests.get(key) if isinstance(rests.get(key), dict) else None
                                 for key in ("samples", "labels"))
    if then_samples is None and then_labels is None:
        return {}
    then_samples, then_labels = then_samples or {}, then_labels or {}
    samples_path = _inside(rubric, then_samples, find_samples_for(rubric.path))
    if samples_path is None:
        return {}
    named = then_samples.get("path") or samples_path.name
    if not samples_path.exists():
        return {"samples": {"cant_read": f"{named} is gone"}}
    extract = then_samples.get("extract") if then_samples.get("extract") in _EXTRACTORS else "last_assistant"
    try:
        samples = load_samples(samples_path, extractor=extract).samples
    except (RubricError, OSError, ValueError):
        return {"samples": {"cant_read": f"{named} cannot be read (grade it to see why)"}}
    now: dict = {"samples": samples_basis(samples)} if then_samples else {}
    labels_path = _inside(rubric, then_labels, labels_path_for(rubric.path))
    if labels_path is not None:
        now["labels"] = _labels_now(rubric, labels_path, then_labels.get("path") or labels_path.name, samples)
    return now


def _inside(rubric, entry: dict, default: Path | None) -> Path | None:
    """The file a card's ``rests_on`` entry names (``default`` when it names none), or None when it
    is not inside the rubric's folder (nor in a hidden or credentials folder below it)."""
    from rubric_studio.core.card import recorded_path
    from rubric_studio.core.folders import outside_reason

    text = entry.get("path")
    path = recorded_path(text, rubric.path) if isinstance(text, str) and text else default
    try:
        folder = Path(rubric.path).resolve().parent
        return None if path is None or outside_reason(path.resolve(), folder) is not None else path
    except (OSError, ValueError):  # a path no file can have (a NUL in a hand-edited card)
        return None


def _labels_now(rubric, labels_path: Path, named: str, samples: list) -> dict:
    """``{n, hash}`` of the labels as ``card`` reads them (the samples' own labels overlaid by the
    sidecar's consensus), or ``{cant_read: why}``."""
    from rubric_studio.cli.calibrate import read_labels
    from rubric_studio.core.card import labels_basis
    from rubric_studio.core.labels import labels_from_samples
    from rubric_studio.core.problems import RubricError

    try:
        if labels_path.exists():
            labels, problems, _ = read_labels(str(rubric.path), str(labels_path), samples)
        else:  # a sidecar that is gone leaves the labels the samples carry
            labels, problems = labels_from_samples(samples), []
    except (RubricError, OSError, ValueError):
        return {"cant_read": f"{named} cannot be read"}
    if not labels and any(p.severity == "error" for p in problems):
        return {"cant_read": f"{named} cannot be read"}
    return labels_basis(labels, [s.id for s in samples])
