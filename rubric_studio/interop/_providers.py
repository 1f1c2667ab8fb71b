"""A rubric's judge provider as the foreign formats see it, read from the provider registry.

Each format keeps one table of what it writes for a judge, keyed by the registry's provider
names (aliases included: ``ollama``, ``openai-compatible``). A judge whose provider is not in
that table (a plugin's, or Azure where the format has no Azure) is never written as another
provider with another provider's key: :func:`cannot_carry` warns once, naming the judge, what
was left out and what to set by hand, with the key and endpoint variables the registry gives.
Variable names a format reads from our environment (``AZURE_OPENAI_API_KEY``, …) come from
:class:`~rubric_studio.core.providers.Provider` too, never from literals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rubric_studio.core import providers
from rubric_studio.interop._common import Warnings, split_judge_model


@dataclass(frozen=True)
class JudgeProvider:
    """The provider part of a judge's ``provider:model``, with its registry entry (if any)."""

    #: The judge as written (``azure:eval-prod``), for messages.
    written: str
    #: The provider name in registered form (``azure``, ``ollama``, ``house``).
    name: str
    #: The part after the colon: a model, or a deployment for Azure.
    model: str
    provider: providers.Provider | None

    @property
    def key_var(self) -> str | None:
        """The variable our judge reads its key from (None: keyless alias or not registered)."""
        if self.provider is None or self.keyless:
            return None
        return self.provider.key_var

    @property
    def base_url_var(self) -> str | None:
        return self.provider.base_url_var if self.provider is not None else None

    @property
    def keyless(self) -> bool:
        alias = self.provider.alias(self.name) if self.provider is not None else None
        return alias is not None and alias.keyless

    @property
    def plugin(self) -> bool:
        return self.provider is not None and self.provider.origin != "built-in"


def judge_provider(model: str | None) -> JudgeProvider | None:
    """The judge ``provider:model`` resolved against the registry (None when no model is set)."""
    name, rest = split_judge_model(model)
    if not name or model is None:
        return None
    found = providers.find(name)
    return JudgeProvider(written=model, name=providers.normalize_name(name), model=rest or "",
                         provider=found[0] if found is not None else None)  # fmt: skip


def _registered(name: str) -> providers.Provider:
    found = providers.find(name)
    if found is None:
        raise ValueError(f"judge provider {name!r} is not registered")
    return found[0]


def key_var(name: str) -> str:
    """The key variable of the registered provider ``name`` (a provider or alias name)."""
    return _registered(name).key_var


def base_url_var(name: str) -> str:
    """The base-URL (endpoint) variable of the registered provider ``name``."""
    return _registered(name).base_url_var


def setting_var(name: str, setting: str) -> str:
    """The variable the registered provider ``name`` reads a further ``setting`` from
    (``api_version`` of Azure: ``OPENAI_API_VERSION``)."""
    settings = _registered(name).settings
    if setting not in settings:
        raise ValueError(f"judge provider {name!r} has no setting {setting!r}")
    return settings[setting]


def _environment(judge: JudgeProvider) -> str:
    """``; rubric-studio reads its key from X and its endpoint from Y`` (what the user moves by hand)."""
    parts = []
    if judge.key_var:
        parts.append(f"its key from {judge.key_var}")
    if judge.base_url_var:
        parts.append(f"its endpoint from {judge.base_url_var}")
    return f"; rubric-studio reads {' and '.join(parts)}" if parts else ""


def cannot_carry(warn: Warnings, judge: JudgeProvider, target: str, supported: Iterable[str], *,
                 left_out: str, set_by_hand: str, environment: bool = True) -> None:
    """Warn that ``target`` has no provider for ``judge`` (it has ``supported``): ``left_out`` says
    what the export does instead, ``set_by_hand`` what the user sets in the exported file, and
    (with ``environment``, for a target that can be pointed at any server) where our judge finds
    its key and endpoint."""
    kind = f"plugin provider {judge.name!r} ({judge.provider.origin})" if judge.plugin and judge.provider \
        else f"{judge.name} provider"  # fmt: skip
    warn.add(f"judge {judge.written}: {target} has no {kind} (it has {', '.join(supported)}); {left_out} — "
             f"set {set_by_hand} by hand{_environment(judge) if environment else ''}")
