"""What a studio session trusts of its rubric (code checks, judge endpoint, prompt files).

A shared rubric's trust-gated settings (:mod:`rubric_studio.core.trust`) take effect only once
the user trusts them. :class:`SessionTrust` answers which of the current rubric's settings are
still untrusted and whether its code checks may run, and records a "trust these" answer in the
store (and for this session, should the store not be writable). Asking is the UI's business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio.core.trust import NO_TRUST, Gate, Trust

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.session.studio import StudioSession


class SessionTrust:
    """The values trusted in this session, over the trust store."""

    def __init__(self, session: StudioSession) -> None:
        self.session = session
        self.granted: Trust = NO_TRUST

    def pending(self) -> list[Gate]:
        """The current rubric's trust-gated settings that are not trusted."""
        session = self.session
        if session.rubric is None:
            return []
        from rubric_studio.engine.api import untrusted_settings

        options = session.grader_options
        return untrusted_settings(session.rubric, judge=options.get("judge"), base_url=options.get("base_url"),
                                  allow_code=bool(options.get("allow_code")), trust=self.granted, env=session.env)

    def code_trusted(self, rubric: Rubric) -> bool:
        """Whether ``rubric``'s code checks may run (all of them trusted), for a grader kept across edits."""
        from rubric_studio.core.trust import code_gates
        from rubric_studio.engine.api import code_trusted, effective_trust

        options = self.session.grader_options
        if not code_gates(rubric):  # nothing to run: no need to read the trust store on every re-grade
            return bool(options.get("allow_code"))
        return code_trusted(rubric, effective_trust(rubric, bool(options.get("allow_code")), self.granted))

    def grant(self, gates: list[Gate]) -> str | None:
        """Trust ``gates`` from now on; the reason when the store could not remember them.

        The judge must be built again afterwards (the caller rebuilds and re-grades).
        """
        from rubric_studio.engine.trust_store import remember

        self.granted = self.granted.plus(gates)
        self.session.grader_options["trust"] = self.granted
        try:
            remember(self.session.rubric_path, gates)
        except OSError as exc:
            return str(exc)
        return None
