"""The rubric card in the studio: its state in the status bar, and *Write the rubric card* (palette).

The card is written from the results on screen (:func:`rubric_studio.session.card.write_card`: the
session's latest report against the labels shown; no judge call), in a worker thread since pricing
the cached replies reads the reply cache. The status bar then says ``card: fresh``; after an edit
is saved, ``card: stale (tone changed)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.session.card import CardStatus, card_refusal, write_card

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost

TITLE = "Write the rubric card"


def status(app: Any) -> CardStatus:
    """The app's :class:`CardStatus` (made on first use)."""
    found = getattr(app, "_card_status", None)
    if found is None:
        found = app._card_status = CardStatus()
    return found


def card_status(app: Any) -> tuple[str, str]:
    """(state, text) of the card of the rubric the studio holds."""
    return status(app).of(app.session.rubric)


def _summary(card: dict[str, Any]) -> str:
    kappa = card["kappa"]
    if kappa["value"] is None:
        return f"κ can't tell — {kappa['cant_tell']}"
    lo, hi = kappa["ci"]
    return f"κ {kappa['value']:.2f} [{lo:.2f}, {hi:.2f}] (n={kappa['n']})"


def write(app: StudioHost) -> None:
    """Write the card from the current results (refused with the reason when it cannot be)."""
    refusal = card_refusal(app.session)
    if refusal is not None:
        app.notify(refusal, title=TITLE, severity="warning", timeout=5)
        return

    def job() -> None:
        try:
            path, card = write_card(app.session)
        except OSError as exc:
            app.call_from_thread(app.notify, f"could not write the card: {exc.strerror or exc}", title=TITLE,
                                 severity="error", timeout=8)
            return
        status(app).forget()

        def done() -> None:
            app.notify(terminal_safe(f"wrote {path.name}: {_summary(card)}"), title=TITLE, timeout=8)
            app.refresh_bars()

        app.call_from_thread(done)

    app.run_worker(job, thread=True, group="card", exit_on_error=False)


def commands(app: StudioHost) -> Iterable[SystemCommand]:
    yield SystemCommand(TITLE, "The rubric's evidence beside it (<stem>.card.yaml): kappa with its interval, "
                        "per criterion, cost per 100 — from the results shown (rubric-studio card)",
                        lambda: write(app))
