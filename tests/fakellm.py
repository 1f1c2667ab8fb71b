"""A fake LLM server for tests and benchmarks: real HTTP on 127.0.0.1, two APIs, scriptable.

Speaks the OpenAI chat-completions API (``POST /v1/chat/completions``, also under Azure's
``/openai/deployments/{deployment}/chat/completions``) and the Anthropic
messages API (``POST /v1/messages``), so the real SDKs talk to it unmodified; a request with
``stream: true`` is answered as server-sent events over chunked encoding, as the real APIs do
(tools built on streaming clients, e.g. AgentV's judge, read nothing else). Every request is
recorded (api, path, headers, JSON body).

What it answers:

* By default a *brain* (``Call -> dict``) produces the reply object: :func:`keyword_brain`
  marks a checklist criterion met when a keyword of its outcome occurs in the fenced
  sample, scores an analytic one 0..10 by the fraction of keywords present, and quotes
  the keywords it found as evidence. Pass ``brain=`` to answer differently.
* Scripted actions, consumed one per request in order (``server.queue(...)``); when the
  queue is empty, ``server.always(...)`` (if set) answers, else the brain. Actions:
  :class:`Reply` (a fixed object), :class:`Text` (raw, e.g. malformed, text),
  :class:`Refuse`, :class:`CutOff` (stopped at max_tokens), :class:`HTTPError` (any HTTP error; helpers :func:`rate_limited`,
  :func:`server_error`, :func:`unauthorized`), :class:`Slow` (sleep, then answer),
  :class:`Omit` (the brain's answer minus a criterion or a field), :class:`Hangup`
  (close the connection without answering), or any callable ``Call -> action``.
  A plain dict is shorthand for ``Reply(dict)``, a plain str for ``Text(str)``.
* ``latency`` seconds are added to every reply; ``api_key`` makes it check the key (401).
* ``prompt_caching=True`` reports prompt caching in the usage, in each API's shape: the
  shared prefix of a request (the system prompt and the user message up to the end of the
  sample fence; for Anthropic, up to the block marked ``cache_control``, and only when one
  is) is written on its first sight and read on every later request with the same prefix.
  OpenAI: ``usage.prompt_tokens_details.cached_tokens`` (``prompt_tokens`` includes them);
  Anthropic: ``cache_creation_input_tokens`` / ``cache_read_input_tokens`` beside
  ``input_tokens`` (which excludes them). Tokens are characters // 4 throughout.
* ``slots=N`` makes it a llama.cpp-like server with N generation slots: a request waits
  for a free slot, then spends ``latency`` seconds in it; a request whose client hung up
  is dropped (waiting or in its slot), as llama.cpp does. ``GET /props`` answers
  ``total_slots`` and ``GET /slots`` one entry per slot unless ``publish_slots=False``.
  ``probes`` lists the GET paths asked. ``peak_concurrent`` is the most requests the server held at once (waiting or in a slot),
  ``dropped`` how many it dropped.
* ``shared_compute=True`` (with ``slots=N``) makes the slots share one compute, as a GPU
  batching its slots does (vLLM, llama.cpp under load): a lone request takes ``latency``
  seconds, k requests in slots at once each take k·``latency``. Pair it with
  ``publish_slots=False`` for a server that says nothing of its capacity.

Standalone (benchmarks)::

    with FakeLLM(latency=0.2) as server:
        server.base_url_openai      # http://127.0.0.1:PORT/v1
        server.base_url_anthropic   # http://127.0.0.1:PORT

In tests: ``from tests.fakellm import fake_llm`` (a pytest fixture) or use the class.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# -- what a brain sees --------------------------------------------------------

_SAMPLE = re.compile(r"<sample-([0-9a-f]+)>\n(.*?)\n</sample-\1>", re.S)
_CRITERION = re.compile(r"### Criterion(?: `([^`]+)`)? \([^)]*\)\n(?:Outcome|Statement): (.*)")
_CRITERION_KIND = re.compile(r"### Criterion(?: `([^`]+)`)? \((score 0-10|met / unmet)\)")
_STOPWORDS = frozenset({
    "that", "this", "with", "from", "have", "their", "they", "when", "what", "does", "into",
    "your", "about", "which", "should", "would", "could", "must", "more", "than", "then", "them",
    "also", "only", "each", "very", "well", "were", "been", "will", "there", "these", "those",
    "some",
})  # fmt: skip


@dataclass
class Asked:
    """One criterion a request asks about."""

    id: str
    kind: str  # "checklist" | "analytic"
    outcome: str = ""


@dataclass
class Call:
    """A judge request as the brain sees it."""

    api: str  # "openai" | "anthropic"
    body: dict[str, Any]
    system: str
    user: str  # text of the first user message
    sample: str  # text inside the <sample-…> fence ("" if none)
    criteria: list[Asked]
    batch: bool
    tool_name: str | None = None

    @property
    def is_repair(self) -> bool:
        return "<previous-reply>" in self.user


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _schema_of(api: str, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    if api == "openai":
        if body.get("tools"):  # structured_output: tool
            function = body["tools"][0].get("function") or {}
            return function.get("parameters") or {}, function.get("name")
        fmt = body.get("response_format") or {}
        return (fmt.get("json_schema") or {}).get("schema") or {}, None
    tools = body.get("tools") or [{}]
    return tools[0].get("input_schema") or {}, tools[0].get("name")


def _decision_kind(shape: dict[str, Any]) -> str:
    return "analytic" if "score" in shape.get("properties", {}) else "checklist"


def _asked(schema: dict[str, Any]) -> tuple[list[Asked], bool]:
    """The criteria a reply schema asks about: one (per-criterion) or a batch keyed by id."""
    props = schema.get("properties", {})
    if "verdict" in props or "score" in props:
        return [Asked("?", _decision_kind(schema))], False
    if "criteria" in props and "items" in props["criteria"]:  # the older list-shaped batch
        items = props["criteria"]["items"]
        asked = []
        for shape in items.get("anyOf", [items]):
            asked += [Asked(cid, _decision_kind(shape)) for cid in shape["properties"]["id"].get("enum", [])]
        return asked, True
    return [Asked(cid, _decision_kind(shape)) for cid, shape in props.items()], True


def _cache_prefix(api: str, call: Call) -> str:
    """The part of a request a provider's prompt cache would share with the next request on
    the same sample ("" when nothing is cacheable)."""
    if api == "anthropic":
        for message in call.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("cache_control"):
                        return call.system + "\x00" + part.get("text", "")
        return ""
    end = _SAMPLE.search(call.user)
    return call.system + "\x00" + call.user[: end.end()] if end else ""


def parse_call(api: str, body: dict[str, Any]) -> Call:
    if api == "openai":
        system = next((_text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"), "")
    else:
        system = _text_of(body.get("system"))
    user = next((_text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"), "")
    schema, tool = _schema_of(api, body)
    if schema:
        asked, batch = _asked(schema)
    else:  # no schema sent (structured_output json_object / none): read the criteria from the prompt
        heads = _CRITERION_KIND.findall(user)
        asked = [Asked(cid or "?", "analytic" if kind == "score 0-10" else "checklist") for cid, kind in heads]
        batch = len(asked) > 1
    found = _CRITERION.findall(user)
    outcomes = dict(found)
    if not batch and found:  # a per-criterion request names no id: the fake knows it by its outcome
        asked[0].id, asked[0].outcome = found[0][0] or "?", found[0][1]
    for item in asked:
        item.outcome = item.outcome or outcomes.get(item.id, "")
    match = _SAMPLE.search(user)
    return Call(api, body, system, user, match.group(2) if match else "", asked, batch, tool)


def keywords(text: str) -> list[str]:
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]{3,}", text.lower())
    return [w for w in dict.fromkeys(words) if w not in _STOPWORDS]


def judge_one(item: Asked, sample: str) -> dict[str, Any]:
    """The keyword brain's answer for one criterion."""
    words = keywords(item.outcome)
    lowered = sample.lower()
    present = [w for w in words if w in lowered]
    quotes = [sample[lowered.index(w) : lowered.index(w) + len(w)] for w in present[:2]]
    rationale = f"found {', '.join(present)}" if present else "none of the outcome's keywords occur"
    answer: dict[str, Any] = {"rationale": rationale, "evidence": quotes}
    if item.kind == "analytic":
        answer["score"] = round(10 * len(present) / len(words)) if words else 0
    else:
        answer["verdict"] = "met" if present else "unmet"
    return answer


def keyword_brain(call: Call) -> dict[str, Any]:
    """Default brain: keyword overlap between each criterion's outcome and the sample."""
    if not call.batch:
        return judge_one(call.criteria[0], call.sample)
    return {item.id: judge_one(item, call.sample) for item in call.criteria}


# -- scripted actions ---------------------------------------------------------


@dataclass
class Reply:
    """Answer with this object (as JSON content / tool input)."""

    payload: dict[str, Any]


@dataclass
class Text:
    """Answer with raw assistant text (malformed JSON, prose, fences ...)."""

    text: str


@dataclass
class Refuse:
    """A refusal: OpenAI ``message.refusal``, Anthropic ``stop_reason: refusal``."""

    message: str = "I'm sorry, I can't help with that."


@dataclass
class CutOff:
    """A reply stopped at max_tokens: OpenAI ``finish_reason: length``, Anthropic ``stop_reason: max_tokens``."""

    text: str = '{"rationale": "The submission'


@dataclass
class HTTPError:
    """An HTTP error with the provider's error body."""

    code: int
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Slow:
    """Sleep ``seconds``, then answer with ``then`` (default: the brain)."""

    seconds: float
    then: Any = None


@dataclass
class Omit:
    """The brain's answer without a batch ``criterion`` and/or a top-level ``field``."""

    criterion: str | None = None
    field: str | None = None


@dataclass
class Hangup:
    """Close the connection without a reply."""


def rate_limited(retry_after: float | None = None, retry_after_ms: int | None = None) -> HTTPError:
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    return HTTPError(429, "Rate limit reached; slow down", headers)


def server_error(code: int = 500) -> HTTPError:
    return HTTPError(code, "The server had an error while processing your request")


def unauthorized() -> HTTPError:
    return HTTPError(401, "invalid API key")


_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}  # fmt: skip


# -- the server ---------------------------------------------------------------


def _key_of(headers: dict[str, str]) -> str | None:
    """The API key a client sent: ``x-api-key``, Azure's ``api-key`` or ``Authorization: Bearer``."""
    for name in ("x-api-key", "api-key"):
        if name in headers:
            return headers[name]
    auth = headers.get("authorization", "")
    return auth[7:] if auth.startswith("Bearer ") else None


@dataclass
class Recorded:
    """One request the server received (header names lower-cased)."""

    api: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    #: The query string (Azure's ``api-version=…``), "" when none.
    query: str = ""

    @property
    def api_key(self) -> str | None:
        return _key_of(self.headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True
    fake: FakeLLM

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients hanging up are normal here
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server
    _streaming = False  # the request asked for ``stream: true``: answer as server-sent events

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        path = self.path.split("?")[0].rstrip("/")
        with fake._lock:
            fake.probes.append(path)  # kept apart from ``requests``: judge calls only
        if fake.slots is None or not fake.publish_slots or path not in ("/props", "/slots"):
            return self._send(404, {"error": {"message": f"cannot handle {path}"}})
        if path == "/props":
            return self._send(200, {"total_slots": fake.slots, "default_generation_settings": {"n_ctx": 2048}})
        return self._send(200, [{"id": i, "is_processing": False} for i in range(fake.slots)])

    def _client_gone(self) -> bool:
        """The client closed its connection (it gave up waiting)."""
        try:
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _generate(self, seconds: float) -> bool:
        """Take a slot, hold it ``seconds``; False when the client hung up meanwhile (dropped)."""
        fake = self.server.fake
        while not fake._slot_free.acquire(timeout=0.01):
            if self._client_gone() or fake._stop.is_set():
                return False
        if fake.shared_compute:
            return self._generate_shared(seconds)
        try:
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                if self._client_gone() or fake._stop.wait(min(0.01, max(0.0, until - time.monotonic()))):
                    return False
            return True
        finally:
            fake._slot_free.release()

    def _generate_shared(self, seconds: float) -> bool:
        """In a slot (already taken) whose compute the other busy slots share: the work of
        ``seconds`` advances at 1/k of the clock while k slots are busy."""
        fake = self.server.fake
        with fake._lock:
            fake._busy += 1
        try:
            done, last = 0.0, time.monotonic()
            while done < seconds:
                if self._client_gone() or fake._stop.wait(0.005):
                    return False
                now = time.monotonic()
                with fake._lock:
                    done += (now - last) / max(1, fake._busy)
                last = now
            return True
        finally:
            with fake._lock:
                fake._busy -= 1
            fake._slot_free.release()

    def do_POST(self) -> None:
        fake = self.server.fake
        with fake._lock:
            fake._active += 1
            fake.peak_concurrent = max(fake.peak_concurrent, fake._active)
        try:
            self._post()
        finally:
            with fake._lock:
                fake._active -= 1

    def _post(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode(errors="replace")
        path = self.path.split("?")[0].rstrip("/")
        api = "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/messages") else "?"
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake._record(Recorded(api, path, headers, body, time.time(), self.path.partition("?")[2]))
        if api == "?" or not isinstance(body, dict):
            return self._send(404 if api == "?" else 400, {"error": {"message": f"cannot handle {path}"}})
        if fake.api_key is not None and _key_of(headers) != fake.api_key:
            return self._error(api, unauthorized())
        if fake.slots is not None:
            if not self._generate(fake.latency):
                with fake._lock:
                    fake.dropped += 1
                self.close_connection = True
                return None
        elif fake.latency:
            fake._stop.wait(fake.latency)
        call = parse_call(api, body)
        self._streaming = body.get("stream") is True
        self._act(api, call, fake._next_action())

    def _act(self, api: str, call: Call, action: Any) -> None:
        fake = self.server.fake
        while callable(action) and not isinstance(action, type):
            action = action(call)
        if isinstance(action, dict):
            action = Reply(action)
        elif isinstance(action, str):
            action = Text(action)
        if isinstance(action, Slow):
            fake._stop.wait(action.seconds)
            return self._act(api, call, action.then)
        if isinstance(action, Hangup):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        if isinstance(action, HTTPError):
            return self._error(api, action)
        if isinstance(action, Refuse):
            return self._refusal(api, call, action.message)
        if isinstance(action, Text):
            return self._answer(api, call, text=action.text)
        if isinstance(action, CutOff):
            return self._answer(api, call, text=action.text, cut_off=True)
        if isinstance(action, Reply):
            return self._answer(api, call, payload=action.payload)
        try:
            payload = fake.brain(call)
        except Exception as exc:  # a brain that cannot read this request: say so, as a server would
            return self._error(api, HTTPError(500, f"the fake's brain failed on this request: {exc!r}"))
        if isinstance(payload, HTTPError | Hangup | Refuse | Text | CutOff | Slow):  # the brain chose an action
            return self._act(api, call, payload)
        if isinstance(action, Omit):
            payload = json.loads(json.dumps(payload))
            if action.field:
                payload.pop(action.field, None)
            if action.criterion and isinstance(payload.get("criteria"), list):
                payload["criteria"] = [c for c in payload["criteria"] if c.get("id") != action.criterion]
            elif action.criterion:
                payload.pop(action.criterion, None)
        return self._answer(api, call, payload=payload)

    # -- replies in each API's shape ------------------------------------------
    def _usage(self, call: Call, out: str) -> tuple[int, int]:
        return max(1, len(json.dumps(call.body)) // 4), max(1, len(out) // 4)

    def _cached(self, api: str, call: Call, prompt: int) -> tuple[int, int]:
        """(tokens read from the prompt cache, tokens written to it) for this request."""
        fake = self.server.fake
        if not fake.prompt_caching:
            return 0, 0
        prefix = _cache_prefix(api, call)
        if not prefix:
            return 0, 0
        tokens = min(prompt - 1, len(prefix) // 4)
        key = (api, call.body.get("model"), prefix)
        with fake._lock:
            seen = key in fake._prefixes
            fake._prefixes.add(key)
        if seen:
            return tokens, 0
        return 0, tokens if api == "anthropic" else 0

    def _usage_body(self, api: str, call: Call, prompt: int, completion: int) -> dict[str, Any]:
        read, written = self._cached(api, call, prompt)
        if api == "openai":
            usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                     "total_tokens": prompt + completion}
            if self.server.fake.prompt_caching:
                usage["prompt_tokens_details"] = {"cached_tokens": read}
            return usage
        usage = {"input_tokens": prompt - read - written, "output_tokens": completion}
        if self.server.fake.prompt_caching:
            usage.update(cache_read_input_tokens=read, cache_creation_input_tokens=written)
        return usage

    def _answer(self, api: str, call: Call, *, payload: Any = None, text: str | None = None, cut_off: bool = False) -> None:
        fake = self.server.fake
        number = fake._next_id()
        out = text if text is not None else json.dumps(payload)
        prompt, completion = self._usage(call, out)
        model = call.body.get("model", "fake")
        if api == "openai":
            message = {"role": "assistant", "content": out, "refusal": None}
            finish = "length" if cut_off else "stop"
            if call.tool_name and text is None:  # answer the forced function call
                call_id = f"call_fake_{number}"
                function = {"name": call.tool_name, "arguments": out}
                message = {"role": "assistant", "content": None, "refusal": None,
                           "tool_calls": [{"id": call_id, "type": "function", "function": function}]}
                finish = "tool_calls"
            return self._send(200, {
                "id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": self._usage_body(api, call, prompt, completion),
            })  # fmt: skip
        if text is not None or not call.body.get("tools"):  # raw text, or no tool to call (structured_output: none)
            content, stop = [{"type": "text", "text": out}], "max_tokens" if cut_off else "end_turn"
        else:
            content = [{"type": "tool_use", "id": f"toolu_fake_{number}", "name": call.tool_name or "judgement", "input": payload}]
            stop = "tool_use"
        return self._send(200, {
            "id": f"msg_fake_{number}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": self._usage_body(api, call, prompt, completion),
        })  # fmt: skip

    def _refusal(self, api: str, call: Call, message: str) -> None:
        prompt, completion = self._usage(call, message)
        number = self.server.fake._next_id()
        if api == "openai":
            return self._send(200, {
                "id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": int(time.time()),
                "model": call.body.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": None, "refusal": message}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
            })  # fmt: skip
        return self._send(200, {
            "id": f"msg_fake_{number}", "type": "message", "role": "assistant", "model": call.body.get("model", "fake"),
            "content": [{"type": "text", "text": message}], "stop_reason": "refusal", "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        })  # fmt: skip

    def _error(self, api: str, status: HTTPError) -> None:
        kind = _ERROR_TYPES.get(status.code, "api_error")
        message = status.message or f"error {status.code}"
        if api == "anthropic":
            body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        self._send(status.code, body, status.headers)

    def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        if code == 200 and isinstance(body, dict) and self._streaming:
            return self._send_stream(body)
        data = json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout) and closed the connection
            self.close_connection = True

    # -- streamed replies (``stream: true``), as the real APIs send them ------------------------
    def _send_stream(self, body: dict[str, Any]) -> None:
        """The finished reply as server-sent events over chunked transfer encoding (the SDKs'
        streaming readers, e.g. the OpenAI JS SDK under AgentV's pi-ai, accept nothing else)."""
        events = _anthropic_events(body) if body.get("type") == "message" else _openai_events(body)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in events:
                data = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return head + "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"


def _openai_events(body: dict[str, Any]) -> list[str]:
    """A chat completion as ``chat.completion.chunk`` events: role, content (or refusal, or the
    tool call), the finish reason, the usage chunk (``stream_options.include_usage``), ``[DONE]``."""
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    events = [chunk({"role": "assistant", "content": ""})]
    if message.get("tool_calls"):
        for index, tool_call in enumerate(message["tool_calls"]):
            events.append(chunk({"tool_calls": [{"index": index, **tool_call}]}))
    elif message.get("refusal"):
        events.append(chunk({"refusal": message["refusal"]}))
    elif message.get("content"):
        text = message["content"]
        step = max(1, len(text) // 3)
        events += [chunk({"content": text[i:i + step]}) for i in range(0, len(text), step)]
    events.append(chunk({}, choice["finish_reason"]))
    events.append(_sse({**base, "choices": [], "usage": body["usage"]}))
    events.append(_sse("[DONE]"))
    return events


def _anthropic_events(body: dict[str, Any]) -> list[str]:
    """A message as Anthropic's stream: message_start, one block each (text or tool input as JSON
    deltas), message_delta with the stop reason and usage, message_stop."""
    start = {**body, "content": [], "stop_reason": None,
             "usage": {**body["usage"], "output_tokens": 0}}
    events = [_sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(body["content"]):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events.append(_sse({"type": "content_block_start", "index": index, "content_block": opening},
                           "content_block_start"))
        events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    events.append(_sse({"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                        "usage": {"output_tokens": body["usage"]["output_tokens"]}}, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


class FakeLLM:
    """The fake server. Use as a context manager, or call :meth:`start` / :meth:`close`."""

    def __init__(
        self,
        *,
        brain: Callable[[Call], dict[str, Any]] | None = None,
        latency: float = 0.0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        slots: int | None = None,
        publish_slots: bool = True,
        shared_compute: bool = False,
        prompt_caching: bool = False,
    ):
        self.brain = brain or keyword_brain
        self.latency = latency
        self.prompt_caching = prompt_caching
        self._prefixes: set[tuple[str, Any, str]] = set()
        self.api_key = api_key
        self.slots, self.publish_slots = slots, publish_slots
        self.shared_compute = shared_compute
        self._busy = 0  # requests in a slot (shared_compute)
        self._slot_free = threading.BoundedSemaphore(slots or 1)
        self._active = 0
        self.peak_concurrent = 0
        self.dropped = 0
        self.probes: list[str] = []  # GET paths asked (slot counts)
        self.requests: list[Recorded] = []
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque()
        self._always: Any = None
        self._ids = 0
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------
    def start(self) -> FakeLLM:
        self._stop.clear()
        self._server = _Server((self._host, self._port), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes sleeping (Slow / latency) handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- addresses ------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def base_url_openai(self) -> str:
        return f"{self.url}/v1"

    @property
    def base_url_anthropic(self) -> str:
        return self.url

    # -- scripting ------------------------------------------------------------
    def queue(self, *actions: Any) -> FakeLLM:
        """Answer the next requests with these actions, one each, in order."""
        with self._lock:
            self._queue.extend(actions)
        return self

    def always(self, action: Any) -> FakeLLM:
        """Answer with ``action`` whenever the queue is empty (None: back to the brain)."""
        self._always = action
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
        self._always = None

    def calls(self, api: str | None = None) -> int:
        """How many requests arrived (for one API, or all)."""
        with self._lock:
            return sum(1 for r in self.requests if api is None or r.api == api)

    @property
    def pending(self) -> int:
        """Queued actions not used yet."""
        return len(self._queue)

    def _next_action(self) -> Any:
        with self._lock:
            return self._queue.popleft() if self._queue else self._always

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _record(self, item: Recorded) -> None:
        with self._lock:
            self.requests.append(item)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (until someone binds it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unused_port_url(path: str = "/v1") -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}{path}"


try:
    import pytest
except ImportError:  # standalone use (benchmarks) without pytest
    pass
else:

    @pytest.fixture
    def fake_llm():
        """A running FakeLLM, closed after the test."""
        with FakeLLM() as server:
            yield server
