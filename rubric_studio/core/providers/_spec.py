"""What a judge provider is, as data: names, environment, defaults, prices, and where its code lives.

A :class:`Provider` is declarative. The core reads it (trust needs the key and base-URL
variables; validation needs the names) without naming any provider code: a plugin's judge
client, Batch API client, body builder and capability table are ``"module:attr"`` strings,
like entry points, and a built-in provider's are its module's in the judges layer; the judges
layer resolves them only when a judge is made or a request is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The ways a reply's JSON shape can be enforced (``judge.structured_output``).
STRUCTURED_OUTPUTS = ("json_schema", "json_object", "tool", "none")


@dataclass(frozen=True)
class Alias:
    """Another name for a provider, with its own endpoint rules (``ollama:``, ``openai-compatible:``)."""

    name: str
    summary: str
    #: Where requests go when the user gives no base URL (ollama: http://localhost:11434/v1).
    default_base_url: str | None = None
    #: Never carries a user key: a placeholder key is sent (a local server needs none).
    keyless: bool = False
    #: Refuses to run without a base URL (there is no official host to fall back to).
    needs_base_url: bool = False
    #: False when the servers this name reaches have no Batch API.
    batch: bool = True


@dataclass(frozen=True)
class Provider:
    """One judge provider: everything the product needs to know about it, in one place."""

    name: str
    #: One line for the docs' provider table and ``--judge`` help.
    summary: str
    #: Environment variable holding the user's key, and the one holding a base URL (endpoint).
    key_var: str
    base_url_var: str
    #: A plugin's code, as ``"module:attr"`` references (a built-in provider's are the ``CODE`` of
    #: its module in the judges layer, :mod:`rubric_studio.judges.provider_code`). ``judge``: the judge class
    #: (a :class:`~rubric_studio.judges.base.Judge`); ``body``: builds the request body from
    #: (config, request); ``capabilities``: the capability row (parameters sent) for a config.
    judge: str | None = None
    body: str | None = None
    capabilities: str | None = None
    #: ``"module:Class"`` of a plugin's Batch API client, or None: it has no Batch API.
    batch: str | None = None
    #: The provider has a Batch API (a plugin's: it names a ``batch`` client).
    batch_api: bool = False
    #: The model a set key selects when the user names none (None: the user must name one).
    default_model: str | None = None
    #: The provider's own host (None: every user has their own endpoint, e.g. an Azure resource).
    official_url: str | None = None
    #: Refuses to run without a base URL / endpoint.
    needs_base_url: bool = False
    #: Refuses to run without a key even at a base URL the user gave (else a placeholder key is
    #: sent, as OpenAI-compatible servers usually want none).
    key_required: bool = False
    #: What the part after ``provider:`` names ("model", or "deployment" for Azure).
    model_word: str = "model"
    structured_output: str = "json_schema"
    structured_outputs: tuple[str, ...] = STRUCTURED_OUTPUTS
    #: Further settings read from the environment, all required: setting name -> variable.
    settings: Mapping[str, str] = field(default_factory=dict)
    #: List prices, USD per 1M tokens: model -> (input, output[, cached input]). Dated names match by prefix.
    prices: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    #: Price models by another provider's table (Azure deployments named after an OpenAI model).
    priced_like: str | None = None
    #: Prompt-cache rates as multiples of a model's input price, unless its price gives its own:
    #: tokens read from the cache, tokens written to it (None: billed as ordinary input).
    cache_read_factor: float | None = None
    cache_write_factor: float | None = None
    aliases: tuple[Alias, ...] = ()
    #: Where the definition came from: "built-in", or the entry point that registered it.
    origin: str = "built-in"

    def alias(self, name: str) -> Alias | None:
        return next((alias for alias in self.aliases if alias.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        """The provider's name and its aliases, as written in ``provider:model``."""
        return (self.name, *(alias.name for alias in self.aliases))
