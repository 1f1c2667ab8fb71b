"""Which optional call parameters each provider (and model family) accepts: one table per provider.

Each registered provider names its row function (``Provider.capabilities``); this module
holds the built-in ones and :func:`capabilities`, which asks the registry.

A rubric's ``judge.temperature`` and ``judge.reasoning_effort`` are sent only where the
provider takes them; the request body (:mod:`rubric_studio.judges.bodies`), the cache key
and the judge's identity all read this table, so a parameter that is not sent never
changes a cache key either. When the rubric sets a parameter that is dropped,
:func:`dropped_settings` words the one warning a run gives about it.

The rows:

* Anthropic messages API: no ``temperature`` (the installed anthropic SDK's
  ``MessageCreateParams`` does not declare it) and no ``reasoning_effort`` (extended
  thinking cannot be combined with the forced tool call that shapes the reply).
* OpenAI reasoning models (o1, o3, o4, gpt-5, gpt-6 …): no ``temperature`` (they accept only
  the default); ``reasoning_effort`` is sent. GPT-6 models on api.openai.com refuse the efforts
  ``none`` and ``minimal`` (the request fails): :func:`refused_setting` words it, and
  ``validate`` warns at the rubric's value.
* Other models on api.openai.com: ``temperature`` is sent; ``reasoning_effort`` is not
  (only reasoning models take it).
* OpenAI-compatible servers (any other base URL): both are sent; the server decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubric_studio.judges.call_shape import CallConfig

OPENAI_OFFICIAL_URL = "https://api.openai.com/v1"
#: OpenAI's reasoning model families.
OPENAI_REASONING = re.compile(r"^(o\d|gpt-[5-9])", re.I)
#: The optional parameters the table decides about (JudgeConfig / judge settings names).
OPTIONAL_PARAMETERS = ("temperature", "reasoning_effort")
#: OpenAI's GPT-6 family, which refuses the lowest reasoning efforts.
OPENAI_GPT6 = re.compile(r"^gpt-6(?![0-9])", re.I)
#: What GPT-6 models refuse: parameter -> the values whose requests fail.
GPT6_REFUSES = {"reasoning_effort": frozenset({"none", "minimal"})}


@dataclass(frozen=True)
class Capabilities:
    """What one provider/model takes: the parameters sent, and why each other one is not."""

    family: str
    sends: frozenset[str]
    #: Parameter -> why it is not sent.
    why_not: dict[str, str] = field(default_factory=dict)
    #: The body field that carries judge.max_tokens.
    max_tokens_field: str = "max_tokens"
    #: Parameter -> values of it the model refuses (its requests fail), where that is known.
    refuses: dict[str, frozenset[str]] = field(default_factory=dict)

    def sent(self, parameter: str) -> bool:
        return parameter in self.sends


_ANTHROPIC = Capabilities(
    family="Anthropic messages API",
    sends=frozenset(),
    why_not={
        "temperature": "the Anthropic messages API (as the installed anthropic SDK declares it) takes no temperature",
        "reasoning_effort": "extended thinking cannot be combined with the forced tool call that shapes the reply",
    },
)


def _official_openai(config: CallConfig) -> bool:
    return (config.base_url or OPENAI_OFFICIAL_URL).rstrip("/") == OPENAI_OFFICIAL_URL


def capabilities(config: CallConfig) -> Capabilities:
    """The row of the table for ``config``'s provider, model and endpoint (the registered provider's)."""
    from rubric_studio.judges.provider_code import code

    row: Capabilities = code(config.provider, "capabilities")(config)
    return row


def anthropic_capabilities(config: CallConfig) -> Capabilities:
    """The Anthropic messages API: neither optional parameter (see the module docstring)."""
    return _ANTHROPIC


def openai_capabilities(config: CallConfig) -> Capabilities:
    """OpenAI's reasoning models, its other models, or an OpenAI-compatible server."""
    official = _official_openai(config)
    # Reasoning models reject max_tokens; many compatible servers only know max_tokens.
    tokens_field = "max_completion_tokens" if official else "max_tokens"
    if OPENAI_REASONING.match(config.model):
        gpt6 = OPENAI_GPT6.match(config.model) is not None
        return Capabilities(
            family="OpenAI GPT-6 models" if gpt6 else "OpenAI reasoning models (o1, o3, o4, gpt-5)",
            sends=frozenset({"reasoning_effort"}),
            why_not={"temperature": "reasoning models accept only their default temperature"},
            max_tokens_field=tokens_field,
            refuses=GPT6_REFUSES if gpt6 and official else {},  # elsewhere the server decides
        )
    if official:
        return Capabilities(
            family="OpenAI models other than reasoning models",
            sends=frozenset({"temperature"}),
            why_not={"reasoning_effort": "only reasoning models (o1, o3, o4, gpt-5) take it"},
            max_tokens_field=tokens_field,
        )
    return Capabilities(family="OpenAI-compatible server", sends=frozenset(OPTIONAL_PARAMETERS),
                        max_tokens_field=tokens_field)  # fmt: skip


def sent_parameters(config: CallConfig) -> dict[str, object]:
    """The optional parameters ``config`` sends, with their values (unset ones left out)."""
    table = capabilities(config)
    values = {"temperature": config.temperature, "reasoning_effort": config.reasoning_effort}
    return {name: value for name, value in values.items() if table.sent(name) and value is not None}


def dropped_settings(config: CallConfig, written: Iterable[str]) -> list[str]:
    """One line per parameter the user wrote (``written``: judge setting names) that is not sent."""
    table = capabilities(config)
    lines = []
    for name in OPTIONAL_PARAMETERS:
        if name in written and not table.sent(name) and getattr(config, name) is not None:
            lines.append(f"judge.{name} is not sent to {config.label} ({table.family}): {table.why_not[name]}; "
                         "it has no effect on the verdicts")  # fmt: skip
    return lines


def refused_setting(config: CallConfig, parameter: str) -> str | None:
    """Why ``config``'s model refuses the value its ``parameter`` is set to (every request would
    fail), or None: the value is unset, not sent, or not known to be refused."""
    table = capabilities(config)
    value = getattr(config, parameter, None)
    refused = table.refuses.get(parameter, frozenset())
    if value is None or not table.sent(parameter) or str(value) not in refused:
        return None
    return (f"{config.label} does not take {parameter} {value} ({table.family} refuse "
            f"{' and '.join(sorted(refused, reverse=True))}): every call to it would be refused")
