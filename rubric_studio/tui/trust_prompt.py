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
from rubric_studio.core.trust import NO_TRUST, Gate, Trust
from rubric_studio.tui.dialogs import ConfirmScreen

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.tui.app import StudioApp

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
    """What the studio trusts of its rubric this session, and asking the user for more."""

    def __init__(self, app: StudioApp) -> None:
        self.app = app
        #: Values trusted in this session (also in the store, unless it could not be written).
        self.session: Trust = NO_TRUST
        self._asked: set[frozenset[tuple[str, str]]] = set()
        self._open = False

    def pending(self) -> list[Gate]:
        """The current rubric's trust-gated settings that are not trusted."""
        app = self.app
        if app.rubric is None:
            return []
        from rubric_studio.engine.api import untrusted_settings

        options = app.grader_options
        return untrusted_settings(app.rubric, judge=options.get("judge"), base_url=options.get("base_url"),
                                  allow_code=bool(options.get("allow_code")), trust=self.session, env=app.env)

    def code_trusted(self, rubric: Rubric) -> bool:
        """Whether ``rubric``'s code checks may run (all of them trusted), for a grader kept across edits."""
        from rubric_studio.core.trust import code_gates
        from rubric_studio.engine.api import code_trusted, effective_trust

        options = self.app.grader_options
        if not code_gates(rubric):  # nothing to run: no need to read the trust store on every re-grade
            return bool(options.get("allow_code"))
        return code_trusted(rubric, effective_trust(rubric, bool(options.get("allow_code")), self.session))

    def offer(self, *, again: bool = False) -> None:
        """Ask about the untrusted settings, once per set of them (``again``: ask even so)."""
        gates = self.pending()
        asked = frozenset(gate.key for gate in gates)
        if not gates or self._open or (asked in self._asked and not again):
            return
        self._asked.add(asked)
        self._open = True
        self.app.push_screen(TrustScreen(self.app.rubric_path.name, gates),
                             lambda yes: self._answered(bool(yes), gates))

    def _answered(self, yes: bool, gates: list[Gate]) -> None:
        self._open = False
        if yes:
            self.trust(gates)

    def trust(self, gates: list[Gate]) -> None:
        """Trust ``gates`` (remembered in the store), rebuild the judge and re-grade."""
        from rubric_studio.engine.trust_store import remember

        app = self.app
        self.session = self.session.plus(gates)
        app.grader_options["trust"] = self.session
        try:
            remember(app.rubric_path, gates)
        except OSError as exc:
            app.notify(f"Trusted for this session only: cannot write the trust store ({exc})", severity="warning")
        else:
            app.notify(f"Trusted {app.rubric_path.name}: " + "; ".join(gate.describe() for gate in gates))
        app.rebuild_grader()
