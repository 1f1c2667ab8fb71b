"""The rubric's judge as an AgentV grader provider, both ways.

:data:`PROVIDER_KINDS` is the one table: our provider (registry name) -> AgentV's provider
kind. OpenAI-compatible servers and Ollama are AgentV ``openai`` providers at a ``base_url``.
Azure is AgentV's ``azure`` provider (EntityProcess/agentv ``providers/targets.ts``,
``resolveAzureConfig``): ``endpoint``, ``api_key`` and ``model`` (the deployment) must each
be an environment reference, so the export writes ``{{ env.VAR | default('value') }}`` for
the endpoint and deployment the rubric names (AgentV renders it with Nunjucks: the variable
when set, else the value) and the import reads the value back. AgentV's Azure provider calls
the Responses API (``/openai/v1/responses``, version ``v1``), which is warned. A provider
AgentV cannot express (a plugin's) leaves the grader provider out with a warning.

Variable names are the registry's (:mod:`rubric_studio.core.providers`); AgentV 4 spells the
same references ``${{ VAR }}`` (:func:`v4_reference`).
"""

from __future__ import annotations

import re
from typing import Any

from rubric_studio.core.rubric import JudgeSettings
from rubric_studio.interop._common import Warnings, num
from rubric_studio.interop._providers import (
    JudgeProvider,
    base_url_var,
    cannot_carry,
    judge_provider,
    key_var,
)

OLLAMA_URL = "http://localhost:11434/v1"
#: Our judge provider -> AgentV's provider kind (``id`` in 5.x, ``provider`` of a 4.x target).
PROVIDER_KINDS = {"openai": "openai", "openai-compatible": "openai", "ollama": "openai",
                  "anthropic": "anthropic", "azure": "azure"}  # fmt: skip
#: AgentV's provider kind -> our provider, on import (``azure-openai`` is AgentV's other name for Azure).
IMPORTED = {"openai": "openai", "anthropic": "anthropic", "azure": "azure", "azure-openai": "azure"}
#: The variable a deployment is read from (AgentV accepts no literal deployment; 4.x no literal model).
JUDGE_MODEL_VARIABLE = "RUBRIC_JUDGE_MODEL"
#: ``{{ env.VAR }}`` or ``{{ env.VAR | default('value') }}`` (the whole string).
_REFERENCE = re.compile(r"^\s*\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*"
                        r"(?:\|\s*default\(\s*'((?:[^'\\]|\\.)*)'\s*\)\s*)?\}\}\s*$")  # fmt: skip


def reference(variable: str, default: str | None = None) -> str:
    """AgentV 5's reference to ``variable``, falling back to ``default`` when it is unset."""
    if default is None:
        return "{{ env." + variable + " }}"
    escaped = default.replace("\\", "\\\\").replace("'", "\\'")
    return "{{ env." + variable + " | default('" + escaped + "') }}"


def parse_reference(value: Any) -> tuple[str, str | None] | None:
    """(variable, default or None) of an AgentV 5 reference; None for anything else."""
    match = _REFERENCE.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    default = match.group(2)
    return match.group(1), re.sub(r"\\(.)", r"\1", default) if default is not None else None


def v4_reference(value: Any) -> tuple[Any, str | None]:
    """An AgentV 5 config value in 4.x spelling, and the ``.env`` line its default needs (or None)."""
    parsed = parse_reference(value)
    if parsed is None:
        return value, None
    variable, default = parsed
    return "${{ " + variable + " }}", (f"{variable}={default}" if default is not None else None)


def _azure_config(judge: JudgeSettings, found: JudgeProvider, warn: Warnings, variable: str) -> dict[str, Any]:
    warn.add(f"judge {found.written}: AgentV calls Azure's Responses API (/openai/v1/responses, version v1), "
             "not chat completions: the deployment must support it")
    return {"endpoint": reference(base_url_var("azure"), judge.base_url or None),
            "model": reference(variable, found.model), "api_key": reference(key_var("azure"))}


def provider_entry(judge: JudgeSettings | None, label: str, warn: Warnings, *,
                   model_variable: str = JUDGE_MODEL_VARIABLE,
                   left_out: str = "no grader provider is exported (AgentV's default grader would run)",
                   ) -> dict[str, Any] | None:
    """The judge as an AgentV 5 ``providers`` entry, or None (no judge, or a provider AgentV cannot
    express: warned, ``left_out`` saying what the export does instead). ``model_variable`` names
    the variable an Azure deployment is read from (each panel member has its own)."""
    found = judge_provider(judge.model if judge is not None else None)
    if judge is None or found is None:
        return None
    kind = PROVIDER_KINDS.get(found.name)
    if kind is None:
        cannot_carry(warn, found, "AgentV", sorted(set(PROVIDER_KINDS.values())),
                     left_out=left_out,
                     set_by_hand="a grader provider")
        return None
    if kind == "azure":
        config = _azure_config(judge, found, warn, model_variable)
    else:
        config = {"model": found.model}
        base_url = judge.base_url or (OLLAMA_URL if found.name == "ollama" else None)
        if base_url:
            config["base_url"] = base_url
        config["api_key"] = reference(key_var(found.name))
    if "temperature" in judge.model_fields_set:
        config["temperature"] = num(judge.temperature)
    return {"id": kind, "label": label, "config": config}


def _azure_judge(config: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    """Our Azure judge from an AgentV ``azure`` provider's config (None: no deployment named)."""
    model = parse_reference(config.get("model") or config.get("deployment"))
    deployment = model[1] if model is not None else config.get("model") or config.get("deployment")
    if not isinstance(deployment, str) or not deployment:
        where = f" (it comes from {model[0]})" if model is not None else ""
        warn.add(f"grader provider azure names no deployment{where}; set judge.model to azure:<deployment> yourself")
        return None
    found: dict[str, Any] = {"model": f"azure:{deployment}"}
    endpoint = config.get("endpoint") or config.get("resource")
    parsed = parse_reference(endpoint)
    endpoint = parsed[1] if parsed is not None else endpoint
    if isinstance(endpoint, str) and endpoint:
        found["base_url"] = endpoint
    return found


def imported_judge(kind: str, config: dict[str, Any], warn: Warnings) -> dict[str, Any] | None:
    """Our judge settings from an AgentV provider entry's kind and config (None: none; warned)."""
    ours = IMPORTED.get(kind)
    if ours is None:
        warn.add(f"grader provider {kind!r} has no rubric-studio judge; set judge.model yourself")
        return None
    if ours == "azure":
        found = _azure_judge(config, warn)
    else:
        found = {}
        base_url = config.get("base_url")
        if base_url == OLLAMA_URL:
            ours, base_url = "ollama", None
        elif base_url and ours == "openai":
            ours = "openai-compatible"
        if config.get("model"):
            found["model"] = f"{ours}:{config['model']}"
        if base_url:
            found["base_url"] = str(base_url)
    if found is not None and isinstance(config.get("temperature"), int | float):
        found["temperature"] = float(config["temperature"])
    return found or None
