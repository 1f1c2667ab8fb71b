"""Resolve which judge to use: rubric ``judge:`` block + CLI flags + user config + environment → JudgeConfig.

Precedence: ``--judge`` over ``judge.model`` over the user config's ``judge.model`` over
the provider whose key is set; ``--base-url`` over ``judge.base_url`` over the user
config's ``judge.base_url`` over the provider's base-URL variable (``OPENAI_BASE_URL`` …).
Providers and their aliases come from the registry (:mod:`rubric_studio.core.providers`):
``openai``, ``anthropic``, ``ollama`` (the openai provider at http://localhost:11434/v1,
no key), ``openai-compatible`` (the openai provider at a base URL you give; key optional)
and any registered by a plugin.

Trust (:mod:`rubric_studio.core.trust`): a rubric's ``judge.base_url``, a provider switch
in its ``judge.model`` and a ``prompt_path`` outside its folder are used only when
``trust`` covers them. Untrusted, there is no judge: no request is made, no prompt file is
read, and no key is paired with a host the user did not choose. This check sits here,
where the key meets the base URL, so every caller gets it.

Nothing here raises for a bad configuration: every way of not having a usable judge
is a :class:`NoJudge` with a one-line ``reason`` that says how to fix it, and
``invalid=True`` when the configuration is wrong (unknown provider, bad URL, unreadable
prompt file) rather than merely absent (no key, no model, not trusted). The caller decides
whether that is a usage error or just "judge criteria stay unjudged".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubric_studio.core.providers import Alias, Provider, find, get, key_order, names
from rubric_studio.core.trust import (
    NO_TRUST,
    Trust,
    judge_gates,
    resolve_prompt_path,
    untrusted,
    untrusted_reason,
    user_judge,
)
from rubric_studio.judges.base import JudgeConfig

if TYPE_CHECKING:
    from rubric_studio.core.rubric import JudgeSettings
    from rubric_studio.core.trust import UserConfig

NO_KEY_PLACEHOLDER = "not-needed"  # OpenAI-compatible servers usually ignore the key


def how_to() -> str:
    """How to configure a judge, in a few words (the providers a set key selects)."""
    keys = [get(name) for name in key_order()]
    example = f"{keys[0].name}:{keys[0].default_model}" if keys and keys[0] else "PROVIDER:MODEL"
    return (f"set {' or '.join(p.key_var for p in keys if p)}, pass --judge {example}, "
            "or --base-url URL for a local server")


@dataclass(frozen=True)
class NoJudge:
    """No usable judge. ``reason`` is one line telling the user how to configure one."""

    reason: str
    #: True when what the user configured is wrong (fix it), False when nothing is configured.
    invalid: bool = False
    #: True when a setting can never work as written (a line break in a URL): a command refuses
    #: to run rather than leave every judge cell unjudged.
    unusable: bool = False

    def __str__(self) -> str:
        return self.reason


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value.strip() if value and value.strip() else None


def _has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (CR, LF, tab, NUL, DEL ...)."""
    return any(ord(char) < 32 or ord(char) == 127 for char in text)


def _split_model(text: str) -> tuple[str, str] | None:
    provider, sep, model = text.strip().partition(":")
    provider = provider.strip().lower().replace("_", "-")
    if not sep or not provider or not model.strip():
        return None
    return provider, model.strip()


def _read_prompt(settings: JudgeSettings | None, base_dir: Path | None) -> str | NoJudge | None:
    """The custom prompt: inline, or the text of ``prompt_path`` (the resolved file trust was decided on)."""
    if settings is None:
        return None
    if settings.prompt is not None:
        return settings.prompt
    if settings.prompt_path is None:
        return None
    path, _ = resolve_prompt_path(settings.prompt_path, base_dir)
    if not path.is_file():  # also never blocks on a FIFO or device
        return NoJudge(f"judge.prompt_path: no such file {path}", invalid=True)
    from rubric_studio.core.files import read_prompt_file
    from rubric_studio.core.problems import RubricError

    try:
        text = read_prompt_file(path)
    except RubricError as exc:
        return NoJudge(f"judge.prompt_path: {exc.problems[0]}", invalid=True)
    from rubric_studio.core.rubric import unknown_placeholders

    unknown = unknown_placeholders(text)
    if unknown:
        names = ", ".join("{" + n + "}" for n in unknown)
        return NoJudge(
            f"judge.prompt_path {path}: unknown placeholder {names}; expected only "
            "{input} {submission} {ground_truth} {criterion} {score_ranges}",
            invalid=True,
        )
    return text


def _model_or_default(model_text: str | None, explicit_url: str | None, env: Mapping[str, str]) -> str | NoJudge:
    """The ``provider:model`` asked for, else the default model of the provider whose key is set."""
    if model_text is not None:
        return model_text
    for provider in filter(None, map(get, key_order())):
        if _get(env, provider.key_var):
            return f"{provider.name}:{provider.default_model}"
    if explicit_url:
        return NoJudge(
            f"a base URL ({explicit_url}) but no model: pass --judge openai-compatible:MODEL (or set judge.model)",
            invalid=True,
        )
    return NoJudge(f"no judge configured: {how_to()}")


def _provider_and_model(model_text: str) -> tuple[Provider, Alias | None, str] | NoJudge:
    """(provider, alias as written or None, model) of ``provider:model``, the provider a registered one."""
    split = _split_model(model_text)
    if split is None:
        return NoJudge(f'judge model {model_text!r}: expected "provider:model", e.g. openai:gpt-4o-mini', invalid=True)
    written, model = split
    found = find(written)
    if found is None:
        return NoJudge(
            f"unknown judge provider {written!r} in {model_text!r}; expected one of {', '.join(names())}", invalid=True
        )
    return found[0], found[1], model


def _call_settings(settings: JudgeSettings | None) -> dict[str, Any]:
    """The rubric's settings for how calls are made (none: the JudgeConfig defaults)."""
    if settings is None:
        return {}
    return {
        "temperature": settings.temperature,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        "max_retry_wait": settings.max_retry_wait,
        "concurrency": settings.concurrency,
        "max_tokens": settings.max_tokens,
        "mode": settings.mode,
        "reasoning_effort": settings.reasoning_effort,
        "deadline": settings.deadline,
    }


def resolve_judge(
    settings: JudgeSettings | None,
    *,
    cli_model: str | None = None,
    cli_base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    base_dir: Path | None = None,
    user_config: UserConfig | None = None,
    trust: Trust = NO_TRUST,
) -> JudgeConfig | NoJudge:
    """The judge to use, or :class:`NoJudge` saying why there is none (never raises).

    ``trust`` covers the rubric's trust-gated judge settings (see the module docstring);
    by default nothing is trusted.
    """
    user = user_judge(cli_model, cli_base_url, env, user_config)
    blocked = untrusted(judge_gates(settings, user, base_dir), trust)
    if blocked:  # before any key meets a URL and before any prompt file is opened
        return NoJudge(untrusted_reason(blocked))
    explicit_url = cli_base_url or (settings.base_url if settings else None) or user.config_base_url
    model_text = _model_or_default(cli_model or (settings.model if settings else None) or user.config_model,
                                   explicit_url, env)
    if isinstance(model_text, NoJudge):
        return model_text
    split = _provider_and_model(model_text)
    if isinstance(split, NoJudge):
        return split
    provider, alias, model = split
    endpoint = _endpoint(provider, alias, model_text, explicit_url, env)
    if isinstance(endpoint, NoJudge):
        return endpoint
    base_url, api_key = endpoint
    extra = _provider_settings(provider, model_text, env)
    if isinstance(extra, NoJudge):
        return extra
    prompt = _read_prompt(settings, base_dir)
    if isinstance(prompt, NoJudge):
        return prompt
    params = _call_settings(settings)
    structured = _structured_output(provider, settings.structured_output if settings else None)
    if isinstance(structured, NoJudge):
        return structured
    return JudgeConfig(
        provider=provider.name,
        model=model,
        base_url=base_url,
        api_key=api_key,
        prompt_template=prompt,
        alias=alias.name if alias else None,
        structured_output=structured,
        extra=extra,
        **params,
    )


def _structured_output(provider: Provider, mode: str | None) -> str | None | NoJudge:
    """``judge.structured_output`` for ``provider``; None when it is the provider's default."""
    if mode is None or mode == provider.structured_output:
        return None
    if mode not in provider.structured_outputs:
        supported = " or ".join(provider.structured_outputs)
        return NoJudge(f"judge.structured_output {mode!r}: an {provider.name} judge supports {supported}", invalid=True)
    return mode


def _provider_settings(provider: Provider, model_text: str, env: Mapping[str, str]) -> tuple[tuple[str, str], ...] | NoJudge:
    """The provider's further settings from the environment (Azure's api_version), all required."""
    values = []
    for name, var in provider.settings.items():
        value = _get(env, var)
        if value is None:
            return NoJudge(f"{model_text}: {var} is not set (the {provider.name} provider's {name})", invalid=True)
        if _has_control(value):
            return NoJudge(f"{model_text}: {var} {value!r} contains a control character (a line break?); "
                           f"write the {provider.name} provider's {name} on one line", invalid=True, unusable=True)
        values.append((name, value))
    return tuple(values)


def _endpoint(
    provider: Provider, alias: Alias | None, model_text: str, explicit_url: str | None, env: Mapping[str, str]
) -> tuple[str | None, str] | NoJudge:
    """(base URL, key) for the provider. ``explicit_url`` is the user's, or a rubric's the user trusted."""
    if alias is not None and alias.keyless:
        base_url, api_key = explicit_url or alias.default_base_url, alias.name
    else:
        base_url = explicit_url or _get(env, provider.base_url_var)
        api_key = _get(env, provider.key_var)
        if alias is not None and alias.needs_base_url and base_url is None:
            return NoJudge(
                f"{model_text}: {alias.name} needs a base URL: pass --base-url http://HOST:PORT/v1 or set judge.base_url",
                invalid=True,
            )
        if provider.needs_base_url and base_url is None:
            return NoJudge(f"{model_text}: {provider.name} needs an endpoint: set {provider.base_url_var}, "
                           "or pass --base-url URL (or set judge.base_url)", invalid=True)  # fmt: skip
        if api_key is None:
            if provider.key_required:
                return NoJudge(f"{model_text}: {provider.key_var} is not set")
            if base_url is None:
                return NoJudge(f"{model_text}: {provider.key_var} is not set; {how_to()}")
            api_key = NO_KEY_PLACEHOLDER
    if base_url is not None:
        base_url = base_url.strip().rstrip("/")
        if _has_control(base_url):  # a CR/LF pasted into a variable: every call would fail the same way
            where = provider.base_url_var if not explicit_url else "--base-url / judge.base_url"
            return NoJudge(f"judge base URL {base_url!r} ({where}) contains a control character (a line break?); "
                           "write the URL on one line", invalid=True, unusable=True)
        if not base_url.startswith(("http://", "https://")):
            return NoJudge(f"judge base URL {base_url!r} must start with http:// or https://", invalid=True)
    return base_url, api_key
