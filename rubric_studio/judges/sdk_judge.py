"""A provider on an official SDK: imported on the first request, one send-and-retry path.

A fully cached run never sends a request, so it never pays the SDK's import (``openai``
≈ 0.3–1.3 s, ``anthropic`` more): make the judge, build bodies, read cached replies — all
without the SDK. A provider names its module, endpoint, key variable and reply type, builds
the client and the body, and reads a reply; :meth:`SDKJudge.complete` sends the body through
the SDK's generic ``post`` (the body is plain JSON already, so the per-call typed transform of
``create`` is skipped), bounded by :func:`~rubric_studio.judges.retry.guard`, retried by
:func:`~rubric_studio.judges.retry.with_retries`, and counts the requests it took.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import Any

from rubric_studio.judges.base import Judge, JudgeConfig, JudgeError, JudgeReply, JudgeRequest
from rubric_studio.judges.retry import guard, with_retries
from rubric_studio.judges.sdk_errors import map_sdk_error


class SDKJudge(Judge):
    """A provider on an official SDK, imported and connected on the first request only."""

    sdk_module: str = ""
    endpoint: str = ""  # path under the client's base URL
    key_var: str = "the API key"
    base_url: str = ""

    def __init__(self, config: JudgeConfig):
        super().__init__(config)
        self._connection: tuple[Any, Any] | None = None

    @abstractmethod
    def new_client(self, sdk: Any) -> Any:
        """The SDK's async client for this judge (SDK retries off, timeout set)."""

    @staticmethod
    def http_client(sdk: Any) -> Any:
        """The HTTP client every SDK client of a judge is given: the SDK's own defaults (connection
        limits, timeout) but **no redirect is followed**. The SDKs follow one to any host (dropping
        the key headers on the way, but resending the request — on 307/308 its body, the sample and
        the rubric — with every other header), so a server answering 3xx gets an error naming
        where it pointed and nothing reaches an address the user did not name
        (docs/concepts/trust.md)."""
        return sdk.DefaultAsyncHttpxClient(follow_redirects=False)

    @abstractmethod
    def body(self, request: JudgeRequest) -> dict[str, Any]:
        """The request body as sent (no key)."""

    @abstractmethod
    def reply_type(self, sdk: Any) -> Any:
        """The SDK's model of a reply (what ``post`` parses into)."""

    @abstractmethod
    def _reply(self, response: Any, latency: float, body: dict[str, Any],
               request: JudgeRequest | None = None) -> JudgeReply:
        """A usable reply, or JudgeError (cut off, refused, empty, not in the shape asked for ...)."""

    def _connect(self) -> tuple[Any, Any]:
        if self._connection is None:
            import importlib

            sdk = importlib.import_module(self.sdk_module)
            self._connection = (sdk, self.new_client(sdk))
        return self._connection

    @property
    def sdk(self) -> Any:
        """The SDK module (imported now if it was not yet)."""
        return self._connect()[0]

    @property
    def client(self) -> Any:
        """The SDK client (made now if it was not yet)."""
        return self._connect()[1]

    def _error(self, exc: Exception) -> JudgeError:
        return map_sdk_error(exc, self.sdk, self.base_url, self.config.timeout, self.key_var)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        body = self.body(request)
        timeout = self.config.timeout

        async def attempt() -> tuple[Any, float]:
            # Import the SDK (first request only) before the clock starts: under load the import
            # can take longer than a short timeout, and it is not the server being slow.
            client, reply_type = self.client, self.reply_type(self.sdk)
            started = time.perf_counter()
            try:
                async with guard(timeout):
                    response = await client.post(self.endpoint, body=body, cast_to=reply_type,
                                                 options={"timeout": timeout})  # fmt: skip
            except Exception as exc:
                raise self._error(exc) from None
            return response, time.perf_counter() - started

        (response, latency), requests = await with_retries(attempt, self.config)
        try:
            reply = self._reply(response, latency, body, request)
        except JudgeError as error:
            error.requests = requests
            raise
        reply.requests = requests
        return reply

    async def aclose(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await connection[1].close()
