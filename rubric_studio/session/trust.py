"""What a studio session trusts of its rubric (code checks, judge endpoint, prompt files).

A shared rubric's trust-gated settings (:mod:`rubric_studio.core.trust`) take effect only once
the user trusts them. What this window's user trusted so far is session state
(:attr:`SessionTrust.granted`); what that leaves untrusted, whether code checks may run, and the
store that keeps a "trust these" answer across runs are the trust package's. Asking is the UI's
business.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rubric_studio.core.trust import (
    NO_TRUST,
    Gate,
    Trust,
    code_gates,
    code_trusted,
    effective_trust,
    remember,
    untrusted_settings,
)

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric


class TrustContext(Protocol):
    """What the trust answers read of a session: its rubric and the options its grader is built with."""

    @property
    def rubric(self) -> Rubric | None: ...

    @property
    def rubric_path(self) -> Path: ...

    @property
    def grader_options(self) -> dict[str, Any]: ...

    @property
    def env(self) -> Mapping[str, str] | None: ...


class SessionTrust:
    """The values trusted in this session, over the trust store."""

    def __init__(self, session: TrustContext) -> None:
        self.session = session
        self.granted: Trust = NO_TRUST

    def pending(self) -> list[Gate]:
        """The current rubric's trust-gated settings that are not trusted."""
        session = self.session
        if session.rubric is None:
            return []
        options = session.grader_options
        return untrusted_settings(session.rubric, judge=options.get("judge"), base_url=options.get("base_url"),
                                  allow_code=bool(options.get("allow_code")), trust=self.granted, env=session.env)

    def code_trusted(self, rubric: Rubric) -> bool:
        """Whether ``rubric``'s code checks may run (all of them trusted), for a grader kept across edits."""
        options = self.session.grader_options
        if not code_gates(rubric):  # nothing to run: no need to read the trust store on every re-grade
            return bool(options.get("allow_code"))
        return code_trusted(rubric, effective_trust(rubric, bool(options.get("allow_code")), self.granted))

    def grant(self, gates: list[Gate]) -> str | None:
        """Trust ``gates`` from now on; the reason when the store could not remember them.

        The judge must be built again afterwards (the caller rebuilds and re-grades).
        """
        self.granted = self.granted.plus(gates)
        self.session.grader_options["trust"] = self.granted
        try:
            remember(self.session.rubric_path, gates)
        except OSError as exc:
            return str(exc)
        return None
