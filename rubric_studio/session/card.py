"""The rubric card in the studio: its state for the status bar, and writing it from the results shown.

:class:`CardStatus` reads ``<stem>.card.yaml`` only when the rubric or the file changed (the bars
refresh on every progress tick). :func:`card_refusal` says why a card cannot be written now (nothing
graded, grading running, unsaved edits: a card describes the rubric on disk). :func:`write_card`
builds it from the session's latest report and labels — no call is sent — and writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rubric_studio.core.card import card_path_for, card_state


class CardStatus:
    """The card's state (``fresh`` | ``stale`` | ``none`` | ``unreadable``) and its status text, cached."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._value: tuple[str, str] = ("none", "card: none")

    def of(self, rubric: Any) -> tuple[str, str]:
        if rubric is None or rubric.path is None:
            return "none", "card: none"
        path = card_path_for(rubric.path)
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            stamp = None
        key = (id(rubric), str(path), stamp)
        if key != self._key:
            self._key, self._value = key, card_state(rubric)
        return self._value

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
    card = card_from_report(rubric, report, dict(session.labels), by_annotator=session.by_annotator, cached=cached,
                            count_usage=not priced_after)
    path = card_path_for(rubric.path)
    write_text_safely(path, card_yaml(card))
    return path, card


def _has_cache(grader: Any) -> bool:
    members = getattr(grader, "members", None)
    if members:
        return all(getattr(member, "cache", None) is not None for _, member in members)
    return getattr(grader, "cache", None) is not None
