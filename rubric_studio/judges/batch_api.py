"""The providers' Batch APIs: submit many judge requests at once, poll, read the results.

OpenAI Batch: the requests go up as a JSONL file (``/v1/files``, purpose ``batch``), a batch
runs them against ``/v1/chat/completions`` (``/v1/batches``), and the results come back as
an output file and an error file. Anthropic Message Batches: the requests go in the create
call (``/v1/messages/batches``) and the results come back as JSONL. Both within 24 hours,
both at half the list price (:data:`BATCH_PRICE`).

Each line's body is exactly what the live judge sends (``OpenAIJudge.body`` /
``AnthropicJudge.body``), and each result is read by the live judge's own reply reader
(``_reply`` on the SDK's parsed object), so cut-off, refused and empty replies are the same
errors as live. Requests are split at the providers' limits (:data:`LIMITS`).

Everything goes through the official SDKs, imported on first use, with the SDKs' retries
off: reads are retried by :func:`~rubric_studio.judges.retry.with_retries`; creating a
batch is never retried (a retry after an answer that got lost would start and bill the same
batch twice). Every phase (upload, create, poll, download) is bounded twice: each request
by ``judge.timeout`` (``--timeout``) without progress — a server that never answers the
upload gives up after that long, however large the file — and the whole run by
``deadline_at`` (``--deadline``). A phase that runs out says which phase it was.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from rubric_studio.judges.base import JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.retry import wall_clock, with_retries
from rubric_studio.judges.sdk_errors import map_sdk_error

#: Both providers bill Batch API requests at half the list price.
BATCH_PRICE = 0.5
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024  # per input file
ANTHROPIC_MAX_REQUESTS = 100_000
ANTHROPIC_MAX_BYTES = 256 * 1024 * 1024  # per create call
#: (requests, bytes) per provider batch.
LIMITS = {
    "openai": (OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES),
    "anthropic": (ANTHROPIC_MAX_REQUESTS, ANTHROPIC_MAX_BYTES),
}
#: Bytes kept free under a limit for what wraps the lines (multipart framing, the create call).
ENVELOPE_BYTES = 64 * 1024
#: Uploads and result downloads move up to hundreds of MB: while bytes keep moving (each network
#: step within judge.timeout), one may take up to this long in all (seconds).
TRANSFER_TIMEOUT = 600.0
ENDED = ("ended", "expired", "cancelled", "failed")
#: Anthropic's error types as the HTTP status a live call would have got.
_ANTHROPIC_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403, "not_found_error": 404,
    "request_too_large": 413, "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529,
}  # fmt: skip
_OPENAI_STATE = {"completed": "ended", "expired": "expired", "cancelled": "cancelled", "failed": "failed"}

Line = tuple[str, dict[str, Any]]  # (custom id, request body)


@dataclass
class BatchStatus:
    """Where one provider batch stands. ``state``: in_progress, ended, expired, cancelled or failed."""

    state: str
    succeeded: int = 0
    errored: int = 0
    processing: int = 0
    detail: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED


@dataclass
class BatchResults:
    """Per custom id: the reply, or the error that line ended with."""

    replies: dict[str, JudgeReply] = field(default_factory=dict)
    errors: dict[str, JudgeError] = field(default_factory=dict)


def line_error(kind: str, message: str, *, raw: str | None = None, requests: int = 1) -> JudgeError:
    """The error one batch line ended with (``requests``: 1 if the line was sent, else 0)."""
    error = JudgeError(kind, message, raw=raw)
    error.requests = requests
    return error


def split(sizes: Sequence[tuple[str, int]], limits: tuple[int, int]) -> list[list[str]]:
    """Custom ids in chunks of at most ``limits`` = (requests, bytes), given each line's size.
    A line too large for any batch must be left out by the caller (see :func:`too_large`)."""
    max_count, room = limits[0], _room(limits)
    chunks: list[list[str]] = []
    used = 0
    for custom_id, size in sizes:
        if not chunks or len(chunks[-1]) >= max_count or used + size > room:
            chunks.append([])
            used = 0
        chunks[-1].append(custom_id)
        used += size
    return chunks


def too_large(size: int, limits: tuple[int, int]) -> bool:
    """True when one line alone exceeds what a batch may hold."""
    return size > _room(limits)


def _room(limits: tuple[int, int]) -> int:
    """Bytes of lines a batch may hold (small limits, as tests inject, are taken as they are)."""
    max_bytes = limits[1]
    return max_bytes - ENVELOPE_BYTES if max_bytes > 2 * ENVELOPE_BYTES else max_bytes


class BatchJudge(Protocol):
    """What a Batch API client uses of the live judge: its config, endpoint, key variable, SDK
    client, body builder and reply reader (an :class:`~rubric_studio.judges.sdk_judge.SDKJudge`)."""

    config: JudgeConfig
    base_url: str
    key_var: str

    @property
    def sdk(self) -> Any: ...

    @property
    def client(self) -> Any: ...

    def body(self, request: JudgeRequest) -> dict[str, Any]: ...

    def _reply(self, response: Any, latency: float, body: dict[str, Any],
               request: JudgeRequest | None = None) -> JudgeReply: ...

    async def aclose(self) -> None: ...


class BatchClient:
    """One provider's Batch API for a live judge (its config, endpoint, key and reply reader)."""

    #: The key of this API's (requests, bytes) per batch in :data:`LIMITS`.
    limits_key = ""

    def __init__(self, judge: BatchJudge, deadline: float | None = None):
        self.judge = judge
        self.config = judge.config
        self.where = judge.base_url
        #: Seconds the whole run may take, and the monotonic time they are up (None: unbounded).
        self.deadline = deadline
        self.deadline_at = None if deadline is None else time.monotonic() + deadline

    @property
    def sdk(self) -> Any:
        """The judge's SDK module (imported on first use)."""
        return self.judge.sdk

    @property
    def client(self) -> Any:
        """The judge's own SDK client: every call here passes its own timeout."""
        return self.judge.client

    def timeout(self) -> float:
        """Seconds each network step of a request may wait (the SDK's timeout): ``judge.timeout``."""
        return self.config.timeout

    def _wall_clock(self, transfer: bool) -> float:
        """Seconds one request may take in all: a transfer that keeps moving bytes gets longer."""
        bound = wall_clock(self.config.timeout)
        return max(bound, TRANSFER_TIMEOUT) if transfer else bound

    async def call(self, make: Callable[[], Awaitable[Any]], phase: str, *, transfer: bool = False,
                   retry: bool = True) -> Any:
        """``make()`` bounded in time (per request and by the run's deadline), SDK errors as
        JudgeError naming ``phase``; retried unless ``retry`` is False."""
        timeout = self.timeout()

        async def attempt() -> Any:
            try:
                async with asyncio.timeout(self._wall_clock(transfer)):
                    return await make()
            except Exception as exc:
                raise map_sdk_error(exc, self.sdk, self.where, timeout, self.judge.key_var) from None

        config = self.config if retry else replace(self.config, max_retries=0)
        left = None if self.deadline_at is None else self.deadline_at - time.monotonic()
        try:
            if left is not None and left <= 0:
                raise TimeoutError
            async with asyncio.timeout(left):
                value, _ = await with_retries(attempt, config)
        except TimeoutError:
            raise JudgeError("stopped", f"{phase}: not done when the run's deadline ({self.deadline:g} s) passed; "
                                        "raise judge.deadline (or --deadline)", stops_run=True) from None  # fmt: skip
        except JudgeError as exc:
            exc.reword(f"{phase}: {exc.message}")
            raise
        return value

    @property
    def limits(self) -> tuple[int, int]:
        """(requests, bytes) one batch may hold."""
        return LIMITS[self.limits_key]

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One request as it goes into a batch (one JSONL line)."""
        raise NotImplementedError

    def reply(self, response: Any) -> JudgeReply:
        """A result's message read exactly as a live reply (raises JudgeError like a live call)."""
        return self.judge._reply(response, 0.0, {})

    async def aclose(self) -> None:
        await self.judge.aclose()

    async def submit(self, job_id: str, lines: list[bytes]) -> str:
        raise NotImplementedError

    async def status(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def results(self, batch_id: str) -> BatchResults:
        raise NotImplementedError

    async def cancel(self, batch_id: str) -> None:
        raise NotImplementedError


class OpenAIBatches(BatchClient):
    """OpenAI Batch: a JSONL file of chat-completion requests, results as output and error files."""

    limits_key = "openai"
    #: The endpoint each line is sent to, in the lines and in the create call.
    completions_url = "/v1/chat/completions"

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        entry = {"custom_id": custom_id, "method": "POST", "url": self.completions_url, "body": body}
        return json.dumps(entry, ensure_ascii=False).encode() + b"\n"

    async def submit(self, job_id: str, lines: list[bytes]) -> str:
        payload = b"".join(lines)
        files, batches = self.client.files, self.client.batches
        uploaded = await self.call(lambda: files.create(
            file=(f"{job_id}.jsonl", payload), purpose="batch", timeout=self.timeout()), "uploading the batch file",
            transfer=True)
        batch = await self.call(lambda: batches.create(
            input_file_id=uploaded.id, endpoint=self.completions_url, completion_window="24h",
            metadata={"rubric_studio_job": job_id}, timeout=self.timeout()), "creating the batch", retry=False)  # fmt: skip
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.call(lambda: self.client.batches.retrieve(batch_id, timeout=self.timeout()),
                                "reading the batch status")
        counts = batch.request_counts
        done, failed = (getattr(counts, "completed", 0) or 0), (getattr(counts, "failed", 0) or 0)
        total = getattr(counts, "total", 0) or 0
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        detail = "; ".join(str(getattr(e, "message", e)) for e in errors)[:300] or batch.status
        return BatchStatus(_OPENAI_STATE.get(batch.status, "in_progress"), done, failed, max(0, total - done - failed),
                           detail)  # fmt: skip

    async def _lines(self, file_id: str | None) -> list[Any]:
        if not file_id:
            return []
        content = await self.call(
            lambda: self.client.files.content(file_id, timeout=self.timeout()), "downloading the results",
            transfer=True)
        out = []
        for text in content.text.splitlines():
            try:
                out.append(json.loads(text))
            except ValueError:
                continue  # blank, or garbled: a request without a line ends as "no result"
        return out

    async def results(self, batch_id: str) -> BatchResults:
        batch = await self.call(lambda: self.client.batches.retrieve(batch_id, timeout=self.timeout()),
                                "downloading the results")
        out = BatchResults()
        for line in await self._lines(batch.output_file_id) + await self._lines(batch.error_file_id):
            if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                self._read_line(line, out)
        return out

    def _read_line(self, line: dict[str, Any], out: BatchResults) -> None:
        custom_id = line["custom_id"]
        response = line.get("response") if isinstance(line.get("response"), dict) else {}
        error = line.get("error") if isinstance(line.get("error"), dict) else None
        status = response.get("status_code") if isinstance(response.get("status_code"), int) else 200
        body = response.get("body")
        if error is not None:
            out.errors[custom_id] = _openai_line_error(error)
        elif status >= 400:
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            out.errors[custom_id] = line_error("request", f"{status} {message or 'request failed'}")
        else:
            try:
                completion = self.sdk.types.chat.ChatCompletion.model_validate(body)
            except Exception as exc:  # pydantic's ValidationError: not shaped like a chat completion
                raw = json.dumps(body)[:2000]
                out.errors[custom_id] = line_error("malformed", f"malformed: not a chat completion: {str(exc)[:200]}",
                                                   raw=raw)  # fmt: skip
                return
            try:
                out.replies[custom_id] = self.reply(completion)
            except JudgeError as exc:
                out.errors[custom_id] = exc

    async def cancel(self, batch_id: str) -> None:
        await self.call(lambda: self.client.batches.cancel(batch_id, timeout=self.timeout()), "cancelling the batch")


def _openai_line_error(error: dict[str, Any]) -> JudgeError:
    code, message = str(error.get("code") or ""), str(error.get("message") or "request failed")
    if code == "batch_expired":
        return line_error("stopped", "batch request expired: the batch's 24 h window ended before it ran")
    if code == "batch_cancelled":
        return line_error("stopped", "batch request canceled: the batch was cancelled before it ran")
    return line_error("request", f"batch request failed: {code + ': ' if code else ''}{message}")


class AnthropicBatches(BatchClient):
    """Anthropic Message Batches: the requests in the create call, results as JSONL."""

    limits_key = "anthropic"

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return json.dumps({"custom_id": custom_id, "params": body}, ensure_ascii=False).encode() + b"\n"

    async def submit(self, job_id: str, lines: list[bytes]) -> str:
        requests = [json.loads(line) for line in lines]
        batches = self.client.messages.batches
        batch = await self.call(lambda: batches.create(requests=requests, timeout=self.timeout()),
                                "creating the batch", transfer=True, retry=False)  # fmt: skip
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self.call(lambda: self.client.messages.batches.retrieve(batch_id, timeout=self.timeout()),
                                "reading the batch status")
        counts = batch.request_counts
        count = {name: getattr(counts, name, 0) or 0 for name in ("succeeded", "errored", "canceled", "expired", "processing")}
        state = "in_progress"
        if batch.processing_status == "ended":
            state = "cancelled" if getattr(batch, "cancel_initiated_at", None) else "ended"
        errored = count["errored"] + count["canceled"] + count["expired"]
        return BatchStatus(state, count["succeeded"], errored, count["processing"], batch.processing_status)

    async def results(self, batch_id: str) -> BatchResults:
        batches = self.client.messages.batches

        async def download() -> list[Any]:
            decoder = await batches.results(batch_id, timeout=self.timeout())
            return [entry async for entry in decoder]

        out = BatchResults()
        for entry in await self.call(download, "downloading the results", transfer=True):
            result = entry.result
            if result.type == "succeeded":
                try:
                    out.replies[entry.custom_id] = self.reply(result.message)
                except JudgeError as exc:
                    out.errors[entry.custom_id] = exc
            elif result.type == "errored":
                out.errors[entry.custom_id] = _anthropic_line_error(result)
            else:  # canceled, expired: never ran
                why = "the batch was cancelled" if result.type == "canceled" else "the batch's 24 h window ended"
                out.errors[entry.custom_id] = line_error("stopped", f"batch request {result.type}: {why} before it ran")
        return out

    async def cancel(self, batch_id: str) -> None:
        await self.call(lambda: self.client.messages.batches.cancel(batch_id, timeout=self.timeout()),
                        "cancelling the batch")


def _anthropic_line_error(result: Any) -> JudgeError:
    inner = getattr(getattr(result, "error", None), "error", None)
    kind = str(getattr(inner, "type", "") or "error")
    message = getattr(inner, "message", None) or "request failed"
    status = _ANTHROPIC_STATUS.get(kind)
    return line_error("request", f"{status or ''} {kind}: {message}".strip())


def batch_client(judge: BatchJudge, deadline: float | None = None) -> BatchClient:
    """The Batch API of ``judge``'s registered provider; ``deadline``: seconds from now the whole
    run may take. JudgeError(kind="config") when the provider has none (never another's protocol)."""
    from rubric_studio.judges.providers import code, definition, no_batch_api

    why = no_batch_api(judge.config)
    if why is not None:
        raise JudgeError("config", why)
    client: BatchClient = code(definition(judge.config).name, "batch")(judge, deadline)
    return client
