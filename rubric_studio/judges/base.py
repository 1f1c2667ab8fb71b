"""The judge interface: one async method, ``complete``, turns a request into a reply.

A provider (``openai.py``, ``anthropic.py``) implements :class:`Judge`. Everything
a provider needs is in :class:`JudgeConfig` (resolved from the rubric's judge block,
CLI flags and environment) and :class:`JudgeRequest` (built by
:mod:`rubric_studio.judges.prompts`). Failures raise :class:`JudgeError` with a
``kind`` and a one-line message; callers turn them into ``error`` cells.

Exception tree::

    JudgeError
     ├── kind="config"      no key, unknown provider, bad base URL
     ├── kind="auth"        401/403: bad key
     ├── kind="rate_limit"  429 after retries (Retry-After honoured, capped)
     ├── kind="server"      5xx after retries
     ├── kind="timeout"     no reply within the timeout, after retries
     ├── kind="connection"  refused / DNS / TLS
     ├── kind="refusal"     the model declined to judge
     ├── kind="malformed"   reply not parsable / schema-violating after one repair
     ├── kind="omitted"     the reply left out a criterion it was asked about
     ├── kind="request"     400/404/422: the server rejected the request (not retried)
     └── kind="stopped"     not sent: the run stopped judging (see below)

An error with ``stops_run`` set (a rejected key, a missing model, a refused connection,
a server without the structured output asked for, a rate limit longer than the run can
wait) will fail every other call of the run the same way: the grader's circuit breaker
(:mod:`rubric_studio.judges.breaker`) then ends the calls not yet sent as ``stopped``.

Accounting travels with the outcome: ``requests`` is how many HTTP requests a call made
(retries included) and a reply that arrived but was unusable (cut off, refused) keeps its
tokens in ``input_tokens`` / ``output_tokens``, because providers bill them.
``input_tokens`` counts every prompt token; ``cached_input_tokens`` / ``cache_write_tokens`` are
the part of them the provider read from / wrote to its prompt cache (billed at their own rates).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

ERROR_KINDS = (
    "config", "auth", "rate_limit", "server", "timeout", "connection", "refusal", "malformed", "omitted", "request",
    "stopped",
)  # fmt: skip
#: Timeouts are not retried: a slow server usually drops the work when the client gives up,
#: so a retry re-sends the same long generation from the start.
RETRYABLE_KINDS = ("rate_limit", "server", "connection")
STRUCTURED_OUTPUTS = ("json_schema", "json_object", "tool", "none")


class JudgeError(Exception):
    """A judge call that did not produce a usable reply."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        raw: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        stops_run: bool = False,
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.raw = raw
        self.status = status
        #: Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said.
        self.retry_after = retry_after
        #: Every other call of this run would fail the same way: stop sending.
        self.stops_run = stops_run or kind in ("auth", "config")
        #: HTTP requests this call made (retries included); 0 when nothing was sent.
        self.requests = 1
        #: Tokens of a reply that arrived but could not be used (billed all the same).
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_input_tokens = 0
        self.cache_write_tokens = 0

    def reword(self, message: str) -> None:
        """Replace the one-line message (keeps kind and accounting)."""
        self.message = message
        self.args = (message,)

    @property
    def retryable(self) -> bool:
        """Worth another attempt: rate limits, 5xx, timeouts and connection failures."""
        return self.kind in RETRYABLE_KINDS

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class JudgeConfig:
    """A fully resolved judge: provider, model, endpoint and call parameters."""

    provider: str  # a registered provider's name (rubric_studio.core.providers): "openai", "anthropic", …
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    timeout: float = 60.0
    max_retries: int = 3
    concurrency: int = 8
    max_tokens: int = 1024
    mode: str = "per_criterion"  # "per_criterion" | "batch"
    #: How the reply format is enforced: "json_schema" | "json_object" | "tool" | "none";
    #: None = the provider's default (OpenAI json_schema, Anthropic tool).
    structured_output: str | None = None
    #: Bound on a whole grading run in seconds (None: unbounded). Not part of identity().
    deadline: float | None = None
    reasoning_effort: str | None = None
    prompt_template: str | None = None  # resolved text of judge.prompt / prompt_path
    max_retry_wait: float = 30.0  # cap on any single Retry-After / backoff wait (seconds)
    #: The provider name the user wrote when it maps onto another one: "ollama" and
    #: "openai-compatible" both run on the openai provider. Not part of identity().
    alias: str | None = None
    #: Multiplier on list prices (0.5 for the providers' Batch APIs). Not part of identity().
    price_factor: float = 1.0
    #: The provider's further settings, read from the environment like the key (Azure's
    #: ``api_version``): (name, value) pairs. Transport, like the key: not part of identity().
    extra: tuple[tuple[str, str], ...] = ()

    def setting(self, name: str) -> str | None:
        """One of the provider's further settings (:attr:`extra`), or None."""
        return dict(self.extra).get(name)

    @property
    def label(self) -> str:
        """``provider:model`` as the user wrote it."""
        return f"{self.alias or self.provider}:{self.model}"

    def identity(self) -> dict[str, Any]:
        """Everything about the judge that changes its replies (never the key): parameters the
        provider is not sent (:mod:`rubric_studio.judges.capabilities`) are left out."""
        from rubric_studio.judges.capabilities import sent_parameters

        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "max_tokens": self.max_tokens,
            **sent_parameters(self),
            **({"structured_output": self.structured_output} if self.structured_output else {}),
        }


@dataclass(frozen=True)
class JudgeRequest:
    """One call: which criteria it judges, the exact messages and the reply schema."""

    sample_id: str
    criterion_ids: tuple[str, ...]
    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str = "judgement"
    repeat_index: int = 0
    #: Length of the leading part of ``user`` shared by every request for this sample
    #: (the fenced sample). Providers with explicit prompt caching (Anthropic) put a
    #: cache breakpoint there. Derived from ``user``, so not part of the cache key.
    cache_prefix: int = 0

    def cache_key(self, config: JudgeConfig) -> str:
        """Hash of the provider request as sent (:func:`rubric_studio.judges.bodies.request_key`):
        provider, base URL, model, the parameters sent, exact messages, reply schema, repeat index."""
        from rubric_studio.judges.bodies import request_key

        return request_key(config, self)


@dataclass
class JudgeReply:
    """What came back: the raw text (what the cache stores) and accounting."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    #: Of ``input_tokens``: read from the provider's prompt cache / written to it.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    model: str | None = None
    #: HTTP requests it took (retries included).
    requests: int = 1
    #: Wire-level detail for the inspector: request body (keys redacted), reply body.
    wire: dict[str, Any] = field(default_factory=dict)


class Judge(ABC):
    """A provider. Implement :meth:`complete`; retries and timeouts live inside it."""

    def __init__(self, config: JudgeConfig):
        self.config = config

    @abstractmethod
    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send one request; return the reply or raise :class:`JudgeError`."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
