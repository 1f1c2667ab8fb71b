"""The providers' Batch APIs: submit many judge requests at once, poll, read the results.

OpenAI Batch: the requests go up as a JSONL file (``/v1/files``, purpose ``batch``), a batch
runs them against ``/v1/chat/completions`` (``/v1/batches``), and the results come back as
output and error files. Anthropic Message Batches: the requests go in the create call
(``/v1/messages/batches``) and the results come back as JSONL from the batch's
``results_url``. Both within 24 hours, both at half the list price.

Each request body is exactly what the live judge sends (``OpenAIJudge.body`` /
``AnthropicJudge.body``), so a result is read, validated and cached exactly like a live
reply. Requests are split at the providers' limits (requests and bytes per batch).
Everything goes through the official SDKs (:class:`~rubric_studio.judges.sdk_judge.SDKJudge`:
imported on first use), with their retries off and ours on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.judges.base import JudgeError, JudgeReply
from rubric_studio.judges.retry import with_retries
from rubric_studio.judges.sdk_errors import map_sdk_error
from rubric_studio.judges.sdk_judge import SDKJudge

BATCH_PRICE = 0.5  # both providers bill batch requests at half the list price
LIMITS = {  # (requests, bytes) per batch
    "openai": (50_000, 200 * 1024 * 1024),
    "anthropic": (100_000, 256 * 1024 * 1024),
}
ENDED = ("ended", "expired", "cancelled", "failed")


@dataclass
class BatchStatus:
    """Where one provider batch stands: ``state`` is in_progress, ended, expired, cancelled or failed."""

    state: str
    done: int = 0
    failed: int = 0
    total: int = 0
    detail: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ENDED


@dataclass
class BatchResults:
    """Per custom id: the reply, or the error that line ended with."""

    replies: dict[str, JudgeReply] = field(default_factory=dict)
    errors: dict[str, JudgeError] = field(default_factory=dict)


def split(lines: list[tuple[str, dict[str, Any]]], provider: str, limits: tuple[int, int] | None = None
          ) -> list[list[tuple[str, dict[str, Any]]]]:
    """``lines`` in chunks within the provider's request and size limits per batch."""
    max_count, max_bytes = limits or LIMITS[provider]
    chunks: list[list[tuple[str, dict[str, Any]]]] = [[]]
    size = 0
    for custom_id, body in lines:
        line_size = len(json.dumps(body, ensure_ascii=False).encode()) + 200  # the line's envelope
        if chunks[-1] and (len(chunks[-1]) >= max_count or size + line_size > max_bytes):
            chunks.append([])
            size = 0
        chunks[-1].append((custom_id, body))
        size += line_size
    return [chunk for chunk in chunks if chunk]


class BatchClient:
    """One provider's Batch API, on the judge's own SDK client."""

    def __init__(self, judge: SDKJudge):
        self.judge = judge
        self.config = judge.config

    async def _call(self, make: Any) -> Any:
        async def attempt() -> Any:
            try:
                return await make()
            except Exception as exc:
                raise map_sdk_error(exc, self.judge.sdk, self.judge.base_url, self.config.timeout) from None

        value, _ = await with_retries(attempt, self.config)
        return value

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        raise NotImplementedError

    async def status(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def results(self, batch_id: str) -> BatchResults:
        raise NotImplementedError

    async def cancel(self, batch_id: str) -> None:
        raise NotImplementedError


class OpenAIBatches(BatchClient):
    """OpenAI Batch: a JSONL file of chat-completion requests."""

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        payload = "".join(
            json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions", "body": body},
                       ensure_ascii=False) + "\n"
            for cid, body in lines
        ).encode()  # fmt: skip
        client, timeout = self.judge.client, self.config.timeout
        uploaded = await self._call(lambda: client.files.create(
            file=("rubric-studio-batch.jsonl", payload), purpose="batch", timeout=timeout))
        batch = await self._call(lambda: client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", timeout=timeout))
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._call(lambda: self.judge.client.batches.retrieve(batch_id, timeout=self.config.timeout))
        counts = batch.request_counts
        state = {"completed": "ended", "expired": "expired", "cancelled": "cancelled", "failed": "failed"}.get(
            batch.status, "in_progress")
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        detail = "; ".join(str(getattr(e, "message", e)) for e in errors)[:300]
        return BatchStatus(state, getattr(counts, "completed", 0) or 0, getattr(counts, "failed", 0) or 0,
                           getattr(counts, "total", 0) or 0, detail or batch.status)  # fmt: skip

    async def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self._call(lambda: self.judge.client.files.content(file_id, timeout=self.config.timeout))
        return [json.loads(line) for line in content.text.splitlines() if line.strip()]

    async def results(self, batch_id: str) -> BatchResults:
        batch = await self._call(lambda: self.judge.client.batches.retrieve(batch_id, timeout=self.config.timeout))
        out = BatchResults()
        chat = self.judge.sdk.types.chat.ChatCompletion
        for line in await self._lines(batch.output_file_id) + await self._lines(batch.error_file_id):
            cid = line.get("custom_id", "")
            response, error = line.get("response") or {}, line.get("error")
            if error or response.get("status_code", 200) >= 400:
                body = response.get("body") or {}
                message = (error or {}).get("message") or (body.get("error") or {}).get("message") or "request failed"
                out.errors[cid] = JudgeError("request", f"batch request failed ({response.get('status_code', '')}): {message}")
                continue
            try:
                reply = chat.model_validate(response.get("body"))
            except Exception as exc:  # pydantic's ValidationError: a line not shaped like a chat completion
                out.errors[cid] = JudgeError("malformed", f"batch result is not a chat completion: {str(exc)[:200]}")
                continue
            try:
                out.replies[cid] = self.judge._reply(reply, 0.0, {})
            except JudgeError as exc:
                out.errors[cid] = exc
        return out

    async def cancel(self, batch_id: str) -> None:
        await self._call(lambda: self.judge.client.batches.cancel(batch_id, timeout=self.config.timeout))


class AnthropicBatches(BatchClient):
    """Anthropic Message Batches: the requests in the create call, results as JSONL."""

    async def submit(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        requests = [{"custom_id": cid, "params": body} for cid, body in lines]
        batch = await self._call(lambda: self.judge.client.messages.batches.create(
            requests=requests, timeout=self.config.timeout))
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._call(lambda: self.judge.client.messages.batches.retrieve(batch_id, timeout=self.config.timeout))
        counts = batch.request_counts
        failed = sum(getattr(counts, name, 0) or 0 for name in ("errored", "canceled", "expired"))
        done = (getattr(counts, "succeeded", 0) or 0) + failed
        total = done + (getattr(counts, "processing", 0) or 0)
        state = "ended" if batch.processing_status == "ended" else "in_progress"
        return BatchStatus(state, done, failed, total, batch.processing_status)

    async def results(self, batch_id: str) -> BatchResults:
        out = BatchResults()
        decoder = await self._call(lambda: self.judge.client.messages.batches.results(batch_id, timeout=self.config.timeout))
        async for entry in decoder:
            result = entry.result
            if result.type == "succeeded":
                try:
                    out.replies[entry.custom_id] = self.judge._reply(result.message, 0.0, {})
                except JudgeError as exc:
                    out.errors[entry.custom_id] = exc
            elif result.type == "errored":
                error = getattr(getattr(result, "error", None), "error", None)
                message = getattr(error, "message", None) or "request failed"
                out.errors[entry.custom_id] = JudgeError("request", f"batch request failed: {message}")
            else:  # canceled, expired
                out.errors[entry.custom_id] = JudgeError("stopped", f"batch request {result.type}; not judged")
        return out

    async def cancel(self, batch_id: str) -> None:
        await self._call(lambda: self.judge.client.messages.batches.cancel(batch_id, timeout=self.config.timeout))


def batch_client(judge: SDKJudge) -> BatchClient:
    """The Batch API of ``judge``'s provider."""
    return OpenAIBatches(judge) if judge.config.provider == "openai" else AnthropicBatches(judge)


def bodies(judge: SDKJudge, requests: Iterable[tuple[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(custom id, request body as the live judge sends it) for each (custom id, JudgeRequest)."""
    return [(cid, judge.body(request)) for cid, request in requests]
