"""The rubric's judge as promptfoo's grader provider (``defaultTest.options.provider``), both ways.

:data:`PROVIDER_IDS` is the one table: our provider (registry name) -> promptfoo's provider id
for its model. Azure is ``azure:chat:<deployment>`` (promptfoo/promptfoo
``src/providers/azure``): the endpoint goes in ``apiBaseUrl`` (``apiHost`` for a bare host),
the key variable in ``apiKeyEnvar`` and the API version in ``apiVersion``. With no endpoint
in the rubric, ``apiBaseUrl`` is an ``{{ env.… }}`` reference to the variable our Azure judge
reads, and ``apiVersion`` always is one (promptfoo renders them when it loads the config; it
leaves a reference to an unset variable as written, so the version falls back, by Nunjucks'
``default``, to promptfoo's own default). A provider with no promptfoo equivalent (a
plugin's) leaves the grader provider out with a warning.

Import reads promptfoo's id prefix back through :data:`IMPORTED`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from rubric_studio.core.rubric import JudgeSettings
from rubric_studio.interop._common import Warnings, num
from rubric_studio.interop._providers import (
    JudgeProvider,
    base_url_var,
    cannot_carry,
    judge_provider,
    key_var,
    setting_var,
)

#: Our judge provider -> promptfoo's provider id (``{model}``: the part after our colon).
PROVIDER_IDS = {
    "openai": "openai:{model}",
    "openai-compatible": "openai:chat:{model}",
    "ollama": "ollama:chat:{model}",
    "anthropic": "anthropic:messages:{model}",
    "azure": "azure:chat:{model}",
}
#: promptfoo's provider id prefix -> our provider (``openai`` at an ``apiBaseUrl`` is openai-compatible).
IMPORTED = {"openai": "openai", "anthropic": "anthropic", "ollama": "ollama", "azure": "azure"}
#: The API version promptfoo's Azure provider uses when given none.
PROMPTFOO_AZURE_API_VERSION = "2024-12-01-preview"
#: An ``{{ env.NAME }}`` reference (the whole value).
ENV_REFERENCE = re.compile(r"^\s*\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")


def _env(name: str, default: str | None = None) -> str:
    """A Nunjucks reference to the variable ``name`` (with a ``default`` for when it is unset)."""
    return "{{ env." + name + (f" | default('{default}')" if default else "") + " }}"


def _azure_config(judge: JudgeSettings) -> dict[str, Any]:
    """Where promptfoo's Azure provider finds the endpoint, the key and the API version."""
    config: dict[str, Any] = {}
    endpoint = (judge.base_url or "").rstrip("/").removesuffix("/openai")
    parts = urlsplit(endpoint)
    if endpoint and parts.scheme == "https" and parts.path in ("", "/") and not parts.query:
        config["apiHost"] = parts.netloc
    else:
        config["apiBaseUrl"] = endpoint or _env(base_url_var("azure"))
    config["apiKeyEnvar"] = key_var("azure")
    config["apiVersion"] = _env(setting_var("azure", "api_version"), PROMPTFOO_AZURE_API_VERSION)
    return config


def grader_provider(judge: JudgeSettings | None, warn: Warnings) -> Any:
    """The judge as a promptfoo provider (an id, or ``{id, config}``), or None (no judge, or a
    provider promptfoo cannot express: warned)."""
    found: JudgeProvider | None = judge_provider(judge.model if judge is not None else None)
    if judge is None or found is None:
        return None
    if found.name not in PROVIDER_IDS:
        cannot_carry(warn, found, "promptfoo", sorted({i.split(":")[0] for i in PROVIDER_IDS.values()}),
                     left_out="the grader provider is not exported (promptfoo's default grader would run)",
                     set_by_hand="defaultTest.options.provider")
        return None
    config: dict[str, Any] = _azure_config(judge) if found.name == "azure" else {}
    if judge.base_url and found.name != "azure":
        config["apiBaseUrl"] = judge.base_url
    if "temperature" in judge.model_fields_set:
        config["temperature"] = num(judge.temperature)
    ident = PROVIDER_IDS[found.name].format(model=found.model)
    return {"id": ident, "config": config} if config else ident


def _endpoint(config: dict[str, Any]) -> str | None:
    """The endpoint a provider config names literally (an ``{{ env.… }}`` reference is none)."""
    base = config.get("apiBaseUrl")
    if isinstance(base, str) and base and not ENV_REFERENCE.match(base):
        return base
    host = config.get("apiHost")
    if isinstance(host, str) and host and not ENV_REFERENCE.match(host):
        return host if "://" in host else f"https://{host}"
    return None


def imported_judge(provider: str, config: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    """Our judge settings from promptfoo's grader provider id and config (None: no judge; warned)."""
    parts = provider.split(":")
    ours = IMPORTED.get(parts[0]) if len(parts) >= 2 else None
    if ours is None:
        warn.add(f"grader provider {provider!r} has no rubric-studio judge; set judge.model yourself")
        return None
    endpoint = _endpoint(config) if ours == "azure" else config.get("apiBaseUrl")
    if ours == "openai" and endpoint:
        ours = "openai-compatible"
    judge: dict[str, Any] = {"model": f"{ours}:{parts[-1]}"}
    if endpoint:
        judge["base_url"] = str(endpoint)
    if isinstance(config.get("temperature"), int | float):
        judge["temperature"] = float(config["temperature"])
    return judge
