"""The built-in judge providers, as data. A new provider is one entry here and its code in the
judges layer's module of the same name, ``rubric_studio/judges/<name>.py``, whose ``CODE`` names
each part (:mod:`rubric_studio.judges.provider_code`); outside this package, one entry point in the
``rubric_studio.providers`` group.

Prices are list prices, USD per 1M tokens (input, output[, cached input]), for standard
(non-batch) calls and short prompts, as the providers' pricing pages gave them when last checked
on 2026-11-29 (docs/how-to/choosing-a-judge.md says so too); check the providers' pages, and
override any in ``prices.yaml``. Longer prompts cost more than these rates say (OpenAI's GPT-6
family above 272K input tokens, Claude Haiku 5.5 above 100K): a judge prompt is far shorter.
Cached input: each model's own rate where its table gives one that differs from the provider's
rule — OpenAI 0.5× the input price (gpt-5: 0.1×, gpt-4.1 / o3 / o4-mini: 0.25×; the GPT-5.4 to
GPT-6 families 0.1× or less; gpt-4-turbo and gpt-3.5-turbo cache nothing); Anthropic 0.1× (Claude
Sonnet and Opus 5.5: 0.05×, Fable 5.1: 0.025×, Fable 5.2: 0.025×), 5-minute cache writes at 1.25×
the input price. The default models are each provider's current small model (OpenAI's GPT-6
Luna, Anthropic's Claude Haiku 5.5).
"""

from __future__ import annotations

from rubric_studio.core.providers._spec import Alias, Provider

OPENAI_PRICES = {
    "gpt-6.2-astra": (8.0, 40.0, 0.40), "gpt-6.2-sol": (2.0, 10.0, 0.10), "gpt-6.1-sol": (2.0, 10.0, 0.10),
    "gpt-6.1-terra": (1.0, 5.0, 0.05), "gpt-6-astra": (10.0, 50.0, 1.0), "gpt-6-sol": (2.0, 10.0, 0.20),
    "gpt-6-luna": (0.10, 0.50, 0.01),
    "gpt-5.6-terra": (2.0, 12.0, 0.20), "gpt-5.6-luna": (0.20, 1.20, 0.02),
    "gpt-5.5": (5.0, 30.0, 0.50), "gpt-5.4": (2.50, 15.0, 0.25), "gpt-5.4-mini": (0.75, 4.50, 0.075),
    "gpt-5.4-nano": (0.20, 1.25, 0.02),
    "gpt-5": (1.25, 10.0, 0.125), "gpt-5.1": (1.25, 10.0, 0.125), "gpt-5-mini": (0.25, 2.0, 0.025),
    "gpt-5-nano": (0.05, 0.40, 0.005),
    "gpt-4.1": (2.0, 8.0, 0.50), "gpt-4.1-mini": (0.40, 1.60, 0.10), "gpt-4.1-nano": (0.10, 0.40, 0.025),
    "gpt-4o": (2.50, 10.0), "gpt-4o-mini": (0.15, 0.60), "gpt-4-turbo": (10.0, 30.0, 10.0),
    "gpt-3.5-turbo": (0.50, 1.50, 0.50),
    "o1": (15.0, 60.0), "o1-mini": (1.10, 4.40), "o3": (2.0, 8.0, 0.50), "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40, 0.275),
}  # fmt: skip
#: Aliases like claude-sonnet-4-5 and dated ids like claude-sonnet-4-5-20250929.
ANTHROPIC_PRICES = {
    "claude-fable-5-2": (8.0, 40.0, 0.20), "claude-fable-5-1": (10.0, 50.0, 0.25), "claude-mythos-5-1": (10.0, 50.0, 0.25),
    "claude-fable-5": (10.0, 50.0, 1.0), "claude-mythos-5": (10.0, 50.0, 1.0),
    "claude-opus-5-5": (4.0, 20.0, 0.20), "claude-sonnet-5-5": (2.0, 10.0, 0.10), "claude-haiku-5-5": (0.10, 0.50),
    "claude-opus-5": (5.0, 25.0), "claude-sonnet-5": (2.0, 10.0),
    "claude-opus-4-8": (5.0, 25.0), "claude-opus-4-7": (5.0, 25.0), "claude-opus-4-6": (5.0, 25.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-opus-4": (15.0, 75.0), "claude-opus-4-1": (15.0, 75.0), "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4": (3.0, 15.0), "claude-sonnet-4-5": (3.0, 15.0), "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-7-sonnet": (3.0, 15.0), "claude-3-5-sonnet": (3.0, 15.0), "claude-3-5-haiku": (0.80, 4.0),
    "claude-3-opus": (15.0, 75.0), "claude-3-haiku": (0.25, 1.25),
}  # fmt: skip

OPENAI = Provider(
    name="openai",
    summary="OpenAI chat completions, or any OpenAI-compatible server at a base URL",
    batch_api=True,
    key_var="OPENAI_API_KEY",
    base_url_var="OPENAI_BASE_URL",
    default_model="gpt-6-luna",
    official_url="https://api.openai.com/v1",
    prices=OPENAI_PRICES,
    cache_read_factor=0.5,
    cache_write_factor=1.0,
    aliases=(
        Alias("ollama", "a local Ollama server (http://localhost:11434/v1 unless --base-url), no key",
              default_base_url="http://localhost:11434/v1", keyless=True, batch=False),
        Alias("openai-compatible", "any OpenAI-compatible server (vLLM, llama.cpp, LM Studio …) at --base-url; "
              "key optional", needs_base_url=True),
    ),
)  # fmt: skip

ANTHROPIC = Provider(
    name="anthropic",
    summary="Anthropic messages API (or an Anthropic-compatible endpoint)",
    batch_api=True,
    key_var="ANTHROPIC_API_KEY",
    base_url_var="ANTHROPIC_BASE_URL",
    default_model="claude-haiku-5-5",
    official_url="https://api.anthropic.com",
    structured_output="tool",
    structured_outputs=("tool", "none"),
    prices=ANTHROPIC_PRICES,
    cache_read_factor=0.1,
    cache_write_factor=1.25,
)

AZURE = Provider(
    name="azure",
    summary="Azure OpenAI: a deployment of your resource, through the openai SDK's AzureOpenAI",
    batch_api=True,
    key_var="AZURE_OPENAI_API_KEY",
    base_url_var="AZURE_OPENAI_ENDPOINT",
    needs_base_url=True,
    key_required=True,
    model_word="deployment",
    settings={"api_version": "OPENAI_API_VERSION"},
    priced_like="openai",
)

#: In this order: a key set in the environment selects the first provider with a default model.
BUILTIN = (OPENAI, ANTHROPIC, AZURE)
