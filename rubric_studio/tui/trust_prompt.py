"""Trusting a rubric in the studio: the prompt, the "Trust this rubric" command, the store.

When the rubric has trust-gated settings not yet trusted (:mod:`rubric_studio.core.trust`:
python/command checks, a judge base URL or provider the user did not choose, a prompt file
outside the rubric's folder), the studio asks once per set of such settings with a small
dialog listing each setting and its value. *Trust* remembers exactly those values in the
trust store (and for this session, should the store not be writable), rebuilds the judge
and re-grades; *Not now* leaves them unused — judge cells stay unjudged with the reason,
and "Trust this rubric" in the command palette asks again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from rubric_studio.core.safe_text import terminal_safe
from rubric_studio.core.trust import Gate
from rubric_studio.tui.dialogs import ConfirmScreen

if TYPE_CHECKING:
    from rubric_studio.tui.host import StudioHost

SHOWN = 12  # settings listed in the prompt; the rest are counted


class TrustScreen(ConfirmScreen):
    """Trust / Not now, listing every setting that trusting turns on (Not now has the focus)."""

    def __init__(self, rubric_name: str, gates: list[Gate]) -> None:
        body = Text("Written by someone else? These settings take effect only if you trust this rubric:\n\n")
        for gate in gates[:SHOWN]:
            body.append("• ")
            body.append(terminal_safe(gate.setting if gate.is_judge else gate.describe()), style="bold")
            if gate.is_judge:
                body.append(f" {terminal_safe(gate.value)}")
            body.append(f" — {terminal_safe(gate.why)}\n", style="dim")
        if len(gates) > SHOWN:
            body.append(f"… and {len(gates) - SHOWN} more (rubric-studio validate lists them all)\n", style="italic")
        body.append("\nTrusting remembers exactly these values for this file: editing criteria never asks again; "
                    "a new value does.")
        super().__init__(f"Trust {rubric_name}?", body, yes="Trust", no="Not now")
        self.gates = gates


class TrustFlow:
    """Asking the user to trust the rubric's untrusted settings (the session keeps what is trusted)."""

    def __init__(self, app: StudioHost) -> None:
        self.app = app
        self._asked: set[frozenset[tuple[str, str]]] = set()
        self._open = False

    def pending(self) -> list[Gate]:
        """The current rubric's trust-gated settings that are not trusted."""
        return self.app.session.trust.pending()

    def offer(self, *, again: bool = False) -> None:
        """Ask about the untrusted settings, once per set of them (``again``: ask even so)."""
        gates = self.pending()
        asked = frozenset(gate.key for gate in gates)
        if not gates or self._open or (asked in self._asked and not again):
            return
        self._asked.add(asked)
        self._open = True
        self.app.push_screen(TrustScreen(self.app.session.rubric_path.name, gates),
                             lambda yes: self._answered(bool(yes), gates))

    def _answered(self, yes: bool, gates: list[Gate]) -> None:
        self._open = False
        if yes:
            self.trust(gates)

    def trust(self, gates: list[Gate]) -> None:
        """Trust ``gates`` (remembered in the store), rebuild the judge and re-grade."""
        app = self.app
        problem = app.session.trust.grant(gates)
        if problem is not None:
            app.notify(f"Trusted for this session only: cannot write the trust store ({problem})", severity="warning")
        else:
            app.notify(f"Trusted {app.session.rubric_path.name}: " + "; ".join(gate.describe() for gate in gates))
        app.rebuild_grader()
