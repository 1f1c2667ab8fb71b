"""The rubric card in the studio: its state for the status bar, and writing it from the results shown.

:class:`CardStatus` reads ``<stem>.card.yaml`` only when the rubric, the samples, the labels or the
file changed (the bars refresh on every progress tick); the card is stale, as ``validate`` says,
when the samples or labels in the studio are not those it rests on. :func:`card_refusal` says why
a card cannot be written now (nothing graded, grading running, unsaved edits: a card describes the
rubric on disk). :func:`write_card`
builds it from the session's latest report and labels — no call is sent — and writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rubric_studio.core.card import card_path_for, card_state, labels_basis, samples_basis


class CardStatus:
    """The card's state (``fresh`` | ``stale`` | ``none`` | ``unreadable``) and its status text, cached."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._held: tuple[Any, ...] = ()
        self._samples_seen: Sequence[Any] | None = None
        self._samples_hashed: dict[str, Any] = {}
        self._value: tuple[str, str] = ("none", "card: none")

    def of(self, rubric: Any, samples: Sequence[Any] | None = None,
           labels: Mapping[str, Any] | None = None) -> tuple[str, str]:
        """The state of ``rubric``'s card; with ``samples`` (loaded) and ``labels``, also whether
        they are still those the card rests on."""
        if rubric is None or rubric.path is None:
            return "none", "card: none"
        path = card_path_for(rubric.path)
        try:
            info = path.stat()
            stamp: tuple[int, ...] | None = (info.st_mtime_ns, info.st_ino, info.st_size)
        except OSError:
            stamp = None
        key = (id(rubric), str(path), stamp, id(samples), id(labels))
        if key != self._key:
            now = None
            if stamp is not None and samples:  # hashed only when there is a card to compare them with
                now = {"samples": self._samples_basis(samples), "labels": labels_basis(labels or {},
                                                                                        [s.id for s in samples])}
            # the objects are kept with the key, so an id is not reused while it is compared
            self._key, self._held, self._value = key, (rubric, samples, labels), card_state(rubric, now)
        return self._value

    def _samples_basis(self, samples: Sequence[Any]) -> dict[str, Any]:
        """The samples' basis, hashed again only when the samples change (a label does not change them;
        about 60 ms for 10,000 samples, where the labels' basis takes about 25)."""
        if self._samples_seen is not samples:
            self._samples_seen, self._samples_hashed = samples, samples_basis(samples)
        return self._samples_hashed

    def forget(self) -> None:
        """Read the card again next time (it was just written)."""
        self._key = None


def card_refusal(session: Any) -> str | None:
    """Why the session cannot write its card now, or None."""
    if session.rubric is None or session.report is None:
        return "Nothing graded yet: the card is written from graded samples."
    if session.running or session.report.rubric_hash != session.rubric.content_hash():
        return "Grading is still running: write the card when it finishes."
    if session.document.dirty:
        return "Save the rubric first (ctrl+s): the card describes the rubric on disk."
    return None


def write_card(session: Any) -> tuple[Path, dict[str, Any]]:
    """Build the card from the session's latest report and labels and write it beside the rubric
    (blocking: it reads the reply cache to price cached replies). OSError when it cannot be written."""
    from rubric_studio.core.atomic import write_text_safely
    from rubric_studio.core.card import card_yaml
    from rubric_studio.engine.card import card_from_report

    rubric, report = session.rubric, session.report
    grader = session.grader
    cached: float | None = 0.0
    priced_after = grader is not None and getattr(grader, "judge", None) is not None and _has_cache(grader)
    if priced_after:  # every reply of the run is in the cache by now: price them all from it
        from rubric_studio.engine.judge_compare import cached_cost

        cached = cached_cost(grader, rubric, session.samples)
    options = session.grader_options
    card = card_from_report(rubric, report, dict(session.labels), by_annotator=session.by_annotator, cached=cached,
                            count_usage=not priced_after, samples=session.samples,
                            sources={"samples_path": session.samples_path, "labels_path": session.labels_path,
                                     "extract": "last_assistant"},  # as the studio reads samples
                            judge={key: options.get(key) for key in ("judge", "batch", "reuse_batch")})
    path = card_path_for(rubric.path)
    write_text_safely(path, card_yaml(card))
    return path, card


def _has_cache(grader: Any) -> bool:
    members = getattr(grader, "members", None)
    if members:
        return all(getattr(member, "cache", None) is not None for _, member in members)
    return getattr(grader, "cache", None) is not None
