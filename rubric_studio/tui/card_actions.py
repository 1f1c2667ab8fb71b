"""The rubric card in the studio: its state in the status bar, and *Write the rubric card* (palette).

The card is written from the results on screen (:func:`rubric_studio.session.card.write_card`: the
session's latest report against the labels shown; no judge call), in a worker thread since pricing
the cached replies reads the reply cache. The status bar then says ``card: fresh``; after an edit
is saved, ``card: stale (tone changed)``; after a label, ``card: stale (labels changed since the
card: 13 → 14 labelled)``. A card written elsewhere (``rubric-studio card``) shows as it lands:
the watcher reports the card file and :func:`card_changed` redraws the bar.
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
    """(state, text) of the card of the rubric the studio holds, against the samples and labels it shows."""
    session = app.session
    samples = session.samples if session.samples_loaded else None
    return status(app).of(session.rubric, samples, session.labels)


def card_changed(app: Any) -> None:
    """The card file changed on disk (written by ``rubric-studio card``, another studio, an editor):
    show its state now."""
    status(app).forget()
    app.refresh_bars()


def _summary(card: dict[str, Any]) -> str:
    kappa = card["kappa"]
    if kappa["value"] is None:
        text = f"κ can't tell — {kappa['cant_tell']}"
    else:
        lo, hi = kappa["ci"]
        text = f"κ {kappa['value']:.2f} [{lo:.2f}, {hi:.2f}] (n={kappa['n']})"
    rates = card.get("pass_rate") or {}
    corrected = rates.get("corrected") or {}
    if rates.get("raw") is not None and corrected.get("value") is not None:
        lo, hi = corrected["ci"]
        text += f"; pass rate {rates['raw']:.0%} raw, {corrected['value']:.0%} [{lo:.0%}, {hi:.0%}] corrected"
    return text


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
