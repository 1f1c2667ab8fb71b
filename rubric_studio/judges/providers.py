"""The code of a registered provider, resolved from its ``"module:attr"`` references on use.

:mod:`rubric_studio.core.providers` holds what a provider is; this module finds its judge
class, Batch API client, body builder and capability table when a judge is made or a request
is built (:func:`~rubric_studio.judges.provider_code.code`: a built-in provider's from its own
module's ``CODE``, a plugin's from its own references). Importing a provider's module never imports its
SDK (the judge does, on the first request), so a fully cached run stays SDK-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio.core.providers import Provider, get, names
from rubric_studio.judges.base import JudgeError
from rubric_studio.judges.provider_code import builtin_code, code

__all__ = ["builtin_code", "code", "definition", "no_batch_api"]

if TYPE_CHECKING:
    from rubric_studio.judges.base import JudgeConfig


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
    if not provider.batch_api or (alias is not None and not alias.batch):
        return f"provider {alias.name if alias else provider.name} has no Batch API: grade without --batch-api"
    return None
