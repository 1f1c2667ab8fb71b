"""A fake of both providers' Batch APIs: real HTTP on 127.0.0.1, for the official SDKs.

OpenAI: ``POST /v1/files`` (multipart upload of the JSONL), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/files/{id}/content``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
``POST /v1/messages/batches/{id}/cancel``, ``GET /v1/messages/batches/{id}/results``.
Azure OpenAI: OpenAI's routes under ``/openai`` instead of ``/v1`` (``?api-version=`` and an
``api-key`` header), live calls at ``/openai/deployments/{deployment}/chat/completions``.
Live calls (``/v1/chat/completions``, ``/v1/messages``) are answered too, so a batch run and
a live run can share one base URL. ``seen`` keeps every request as sent (method, path, query,
headers); ``uploads`` the form fields of each file upload (``purpose``); each batch its
``endpoint``.

Each request line is answered by :func:`tests.fakellm.keyword_brain` (or ``brain=``) in the
live reply shapes. Scriptable (attributes, changeable between runs):

* ``polls`` — status polls a batch stays ``in_progress`` before it ends;
* ``failing`` — line indexes (within a batch) that end in a 400 error;
* ``malformed`` — line indexes answered with text that is not JSON;
* ``expire`` — the batch expires with only its first half answered;
* ``answered_before_cancel`` — lines answered when a cancel arrives (the rest are cancelled);
* ``fail_create_after`` — batch creations after this many answer 500 (None: never);
* ``status_errors`` — the next status polls that answer 503;
* ``hang`` — phases that never answer (until the fake closes): ``upload`` (OpenAI file
  upload), ``create``, ``poll`` (status), ``download`` (results).

OpenAI puts expired and cancelled lines in the error file (codes ``batch_expired`` /
``batch_cancelled``); Anthropic gives them result types ``expired`` / ``canceled``.
"""

from __future__ import annotations

import email
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakellm import keyword_brain, parse_call

BATCH_PATHS = re.compile(r"/v1/(files|batches|messages/batches)(/|$)")


def _openai_completion(body: dict[str, Any], content: str, number: int) -> dict[str, Any]:
    prompt = len(json.dumps(body)) // 4
    return {
        "id": f"chatcmpl-batch-{number}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": len(content) // 4,
                  "total_tokens": prompt + len(content) // 4},
    }  # fmt: skip


def _anthropic_message(body: dict[str, Any], content: str, number: int) -> dict[str, Any]:
    tool = (body.get("tools") or [{}])[0].get("name", "judgement")
    try:
        block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{number}", "name": tool, "input": json.loads(content)}
    except ValueError:
        block = {"type": "text", "text": content}
    return {
        "id": f"msg_batch_{number}", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
        "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": len(content) // 4},
    }  # fmt: skip


def reply_body(api: str, body: dict[str, Any], content: str, number: int) -> dict[str, Any]:
    return (_openai_completion if api == "openai" else _anthropic_message)(body, content, number)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class FakeBatches:
    """Both Batch APIs; ``base_url_openai`` / ``base_url_anthropic`` as for the live fake."""

    def __init__(self, *, polls: int = 1, failing: set[int] | None = None, malformed: set[int] | None = None,
                 expire: bool = False, brain: Callable[[Any], dict[str, Any]] = keyword_brain):
        self.polls, self.expire, self.brain = polls, expire, brain
        self.failing, self.malformed = failing or set(), malformed or set()
        self.answered_before_cancel = 0
        self.fail_create_after: int | None = None
        self.status_errors = 0
        self.hang: set[str] = set()
        self.closing = threading.Event()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str]] = []
        self.seen: list[tuple[str, str, str, dict[str, str]]] = []
        self.uploads: list[dict[str, str]] = []
        self.lines_submitted = 0
        self.live_calls = 0
        self.lock = threading.RLock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeBatches:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()  # hanging handlers return
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url_openai(self) -> str:
        return self.url + "/v1"

    @property
    def base_url_anthropic(self) -> str:
        return self.url

    def base_url(self, api: str) -> str:
        return self.base_url_openai if api == "openai" else self.base_url_anthropic

    def created(self) -> int:
        """Batches created."""
        return len(self.batches)

    def batch_requests(self) -> int:
        """HTTP requests made to any Batch API endpoint."""
        return sum(1 for _, path in self.log if BATCH_PATHS.match(path))

    # -- batches ----------------------------------------------------------------------
    def new_batch(self, api: str, lines: list[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
        """A new batch, or None when creations are scripted to fail."""
        with self.lock:
            if self.fail_create_after is not None and len(self.batches) >= self.fail_create_after:
                return None
            number = len(self.batches) + 1
            self.lines_submitted += len(lines)
            prefix = "batch_" if api == "openai" else "msgbatch_"
            batch = {"id": f"{prefix}{number}", "api": api, "lines": lines, "polls": self.polls,
                     "state": "in_progress", "results": {}}  # fmt: skip
            self.batches[batch["id"]] = batch
            return batch

    def advance(self, batch: dict[str, Any]) -> None:
        """One status poll: answer every line (the first half only when expiring) once the polls ran out."""
        with self.lock:
            if batch["state"] == "cancelling":
                batch["state"] = "cancelled"
                return
            if batch["state"] != "in_progress":
                return
            if batch["polls"] > 0:
                batch["polls"] -= 1
                return
            lines = batch["lines"][: len(batch["lines"]) // 2] if self.expire else batch["lines"]
            self.answer(batch, lines)
            batch["state"] = "expired" if self.expire else "ended"

    def cancel(self, batch: dict[str, Any]) -> None:
        with self.lock:
            if batch["state"] == "in_progress":
                self.answer(batch, batch["lines"][: self.answered_before_cancel])
                batch["state"] = "cancelling"

    def answer(self, batch: dict[str, Any], lines: list[tuple[str, dict[str, Any]]]) -> None:
        for index, (custom_id, body) in enumerate(lines):
            if index in self.failing:
                batch["results"][custom_id] = "the request was malformed: max_tokens too large"
                continue
            content = "I think it is met." if index in self.malformed else json.dumps(
                self.brain(parse_call(batch["api"], body)))  # fmt: skip
            batch["results"][custom_id] = reply_body(batch["api"], body, content, index)

    def ended(self, batch: dict[str, Any]) -> bool:
        return batch["state"] in ("ended", "expired", "cancelled")

    def _never_ran(self, batch: dict[str, Any]) -> str:
        return "cancelled" if batch["state"] == "cancelled" else "expired"

    def openai_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        state = {"ended": "completed"}.get(batch["state"], batch["state"])
        results = batch["results"]
        failed = sum(1 for r in results.values() if isinstance(r, str))
        if self.ended(batch):
            failed += len(batch["lines"]) - len(results)
        view = {"id": batch["id"], "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "status": state, "input_file_id": batch.get("input", "file-x"), "created_at": int(time.time()),
                "request_counts": {"total": len(batch["lines"]), "completed": len(results) - sum(
                    1 for r in results.values() if isinstance(r, str)), "failed": failed},
                "output_file_id": None, "error_file_id": None, "metadata": batch.get("metadata")}  # fmt: skip
        if self.ended(batch):
            view["output_file_id"], view["error_file_id"] = self._openai_files(batch)
        return view

    def _openai_files(self, batch: dict[str, Any]) -> tuple[str, str | None]:
        ok, bad = [], []
        for index, (custom_id, _) in enumerate(batch["lines"]):
            result = batch["results"].get(custom_id)
            if isinstance(result, dict):
                ok.append({"id": f"r{index}", "custom_id": custom_id, "error": None,
                           "response": {"status_code": 200, "request_id": "x", "body": result}})  # fmt: skip
            elif isinstance(result, str):
                bad.append({"id": f"e{index}", "custom_id": custom_id, "error": None,
                            "response": {"status_code": 400, "request_id": "x", "body": {"error": {"message": result}}}})
            else:
                code = f"batch_{self._never_ran(batch)}"
                bad.append({"id": f"e{index}", "custom_id": custom_id, "response": None,
                            "error": {"code": code, "message": "This request was not executed."}})  # fmt: skip
        out = self._store(f"out-{batch['id']}", ok)
        return out, self._store(f"err-{batch['id']}", bad) if bad else None

    def _store(self, name: str, lines: list[dict[str, Any]]) -> str:
        self.files[name] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return name

    def anthropic_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        results, ended = batch["results"], self.ended(batch)
        errored = sum(1 for r in results.values() if isinstance(r, str))
        never = len(batch["lines"]) - len(results) if ended else 0
        counts = {"processing": 0 if ended else len(batch["lines"]) - len(results),
                  "succeeded": len(results) - errored, "errored": errored,
                  "canceled": never if batch["state"] == "cancelled" else 0,
                  "expired": never if batch["state"] == "expired" else 0}  # fmt: skip
        cancelled = batch["state"] in ("cancelling", "cancelled")
        return {"id": batch["id"], "type": "message_batch", "request_counts": counts,
                "processing_status": "ended" if ended else "canceling" if cancelled else "in_progress",
                "created_at": "2026-11-22T00:00:00Z", "expires_at": "2026-11-23T00:00:00Z",
                "ended_at": "2026-11-22T01:00:00Z" if ended else None,
                "cancel_initiated_at": "2026-11-22T00:30:00Z" if cancelled else None, "archived_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None}  # fmt: skip

    def anthropic_results(self, batch: dict[str, Any]) -> bytes:
        out = []
        for custom_id, _ in batch["lines"]:
            result = batch["results"].get(custom_id)
            if isinstance(result, str):
                error = {"type": "error", "error": {"type": "invalid_request_error", "message": result}}
                entry: dict[str, Any] = {"type": "errored", "error": error}
            elif result is not None:
                entry = {"type": "succeeded", "message": result}
            else:
                entry = {"type": "canceled" if batch["state"] == "cancelled" else "expired"}
            out.append(json.dumps({"custom_id": custom_id, "result": entry}) + "\n")
        return "".join(out).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeBatches:
        return self.server.fake  # type: ignore[attr-defined]

    def _body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, code: int, body: Any, raw: bool = False) -> None:
        data = body if raw else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/octet-stream" if raw else "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _path(self, method: str) -> str:
        """The route asked for, Azure's ``/openai/…`` read as OpenAI's ``/v1/…`` (as sent: in ``seen``)."""
        raw, _, query = self.path.partition("?")
        raw = raw.rstrip("/")
        path = re.sub(r"^/openai/deployments/[^/]+/chat/completions$", "/v1/chat/completions", raw)
        path = re.sub(r"^/openai/", "/v1/", path)
        with self.fake.lock:
            self.fake.log.append((method, path))
            self.fake.seen.append((method, raw, query, {k.lower(): v for k, v in self.headers.items()}))
        return path

    def _hangs(self, method: str, path: str) -> bool:
        """True (after the fake closed) when this request's phase is scripted to never answer."""
        if path in ("/v1/files",):
            phase = "upload"
        elif method == "POST" and path in ("/v1/batches", "/v1/messages/batches"):
            phase = "create"
        elif re.fullmatch(r"/v1/files/[\w-]+/content|/v1/messages/batches/[\w-]+/results", path):
            phase = "download"
        elif method == "GET" and re.fullmatch(r"/v1(/messages)?/batches/[\w-]+", path):
            phase = "poll"
        else:
            return False
        if phase not in self.fake.hang:
            return False
        self.fake.closing.wait()
        self.close_connection = True
        return True

    def do_POST(self) -> None:
        fake, path, raw = self.fake, self._path("POST"), self._body()
        if self._hangs("POST", path):
            return None
        if path in ("/v1/chat/completions", "/v1/messages"):  # a live call, answered at once
            api = "openai" if path.endswith("completions") else "anthropic"
            with fake.lock:
                fake.live_calls += 1
            body = json.loads(raw)
            return self._send(200, reply_body(api, body, json.dumps(fake.brain(parse_call(api, body))), 0))
        if path == "/v1/files":
            message = email.message_from_bytes(b"Content-Type: " + self.headers["content-type"].encode() + b"\r\n\r\n" + raw)
            content = next(part.get_payload(decode=True) for part in message.get_payload() if part.get_filename())
            form = {part.get_param("name", header="content-disposition"): part.get_payload()
                    for part in message.get_payload() if not part.get_filename()}  # fmt: skip
            with fake.lock:
                fake.uploads.append(form)
                file_id = f"file-{len(fake.files) + 1}"
                fake.files[file_id] = content
            return self._send(200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                                    "filename": "batch.jsonl", "purpose": "batch", "status": "processed"})
        if path in ("/v1/batches", "/v1/messages/batches"):
            return self._create(path, json.loads(raw))
        match = re.fullmatch(r"/v1(?:/messages)?/batches/([\w-]+)/cancel", path)
        if match and match.group(1) in fake.batches:
            batch = fake.batches[match.group(1)]
            fake.cancel(batch)
            return self._send(200, fake.openai_view(batch) if batch["api"] == "openai" else fake.anthropic_view(batch))
        return self._send(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})

    def _create(self, path: str, request: dict[str, Any]) -> None:
        fake = self.fake
        if path == "/v1/batches":
            text = fake.files[request["input_file_id"]].decode()
            lines = [(line["custom_id"], line["body"]) for line in map(json.loads, text.splitlines()) if line]
            batch = fake.new_batch("openai", lines)
        else:
            batch = fake.new_batch("anthropic", [(r["custom_id"], r["params"]) for r in request["requests"]])
        if batch is None:
            return self._send(500, {"error": {"type": "api_error", "message": "the batch could not be created"}})
        if path == "/v1/batches":
            batch["input"], batch["metadata"] = request["input_file_id"], request.get("metadata")
            batch["endpoint"] = request.get("endpoint")
            return self._send(200, fake.openai_view(batch))
        return self._send(200, fake.anthropic_view(batch))

    def do_GET(self) -> None:
        fake, path = self.fake, self._path("GET")
        if self._hangs("GET", path):
            return None
        if match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            return self._send(200, fake.files.get(match.group(1), b""), raw=True)
        if match := re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path):
            return self._send(200, fake.anthropic_results(fake.batches[match.group(1)]), raw=True)
        match = re.fullmatch(r"/v1(/messages)?/batches/([\w-]+)", path)
        if match and match.group(2) in fake.batches:
            with fake.lock:
                if fake.status_errors > 0:
                    fake.status_errors -= 1
                    return self._send(503, {"error": {"type": "overloaded_error", "message": "busy, try later"}})
            batch = fake.batches[match.group(2)]
            fake.advance(batch)
            return self._send(200, fake.openai_view(batch) if batch["api"] == "openai" else fake.anthropic_view(batch))
        return self._send(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})
