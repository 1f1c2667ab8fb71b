"""What is trusted of a rubric in a run, and which of its settings that leaves unused.

Trust comes from three places: ``--allow-code`` (everything, for one run), the trust store
(what the user trusted before, by rubric path and value: :mod:`rubric_studio.core.trust._store`)
and what the user trusted in this studio window (passed in as ``trust``). The CLI warns about,
the studio offers to trust, and the grader leaves unused, exactly :func:`untrusted_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rubric_studio.core.trust._policy import (
    NO_TRUST,
    TRUST_ALL,
    Gate,
    Trust,
    code_gates,
    rubric_gates,
    untrusted,
)
from rubric_studio.core.trust._store import load_trust
from rubric_studio.core.trust._user import user_choices

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric


def effective_trust(rubric: Rubric, allow_code: bool = False, trust: Trust | None = None) -> Trust:
    """What is trusted of ``rubric``: everything with ``allow_code``, else the trust store's
    values for its path plus ``trust`` (e.g. what the user trusted in this session)."""
    if allow_code:
        return TRUST_ALL
    return load_trust(rubric.path).plus(trust or NO_TRUST)


def untrusted_settings(
    rubric: Rubric,
    *,
    judge: str | None = None,
    base_url: str | None = None,
    allow_code: bool = False,
    trust: Trust | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Gate]:
    """The trust-gated settings of ``rubric`` that will not take effect (what to warn about or offer to trust)."""
    gates = rubric_gates(rubric, user_choices(judge, base_url, env))
    return untrusted(gates, effective_trust(rubric, allow_code, trust))


def code_trusted(rubric: Rubric, trust: Trust) -> bool:
    """True when ``rubric`` has code checks and ``trust`` covers every one of them."""
    gates = code_gates(rubric)
    return trust.everything or (bool(gates) and not untrusted(gates, trust))
