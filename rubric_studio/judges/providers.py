"""The code of a registered provider, resolved from its ``"module:attr"`` references on use.

:mod:`rubric_studio.core.providers` holds what a provider is; this module finds its judge
class, Batch API client, body builder and capability table when a judge is made or a request
is built. Importing a provider's module never imports its SDK (the judge does, on the first
request), so a fully cached run stays SDK-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubric_studio.core.providers import Provider, get, load, names
from rubric_studio.judges.base import JudgeError

if TYPE_CHECKING:
    from rubric_studio.judges.base import JudgeConfig


def resolve(reference: str) -> Any:
    """The object a ``"module:attr"`` reference names (imported once)."""
    return load(reference)


def definition(config: JudgeConfig) -> Provider:
    """The registered provider of ``config``; JudgeError(kind="config") for an unknown one."""
    provider = get(config.provider)
    if provider is None:
        raise JudgeError("config", f"unknown judge provider {config.provider!r}; expected one of {', '.join(names())}")
    return provider


def no_batch_api(config: JudgeConfig) -> str | None:
    """Why ``config``'s provider cannot take Batch API jobs (one line), or None when it can."""
    provider = definition(config)
    alias = provider.alias(config.alias) if config.alias else None
    if provider.batch is None or (alias is not None and not alias.batch):
        return f"provider {alias.name if alias else provider.name} has no Batch API: grade without --batch-api"
    return None
