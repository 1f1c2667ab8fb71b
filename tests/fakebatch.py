"""A fake of both providers' Batch APIs: real HTTP on 127.0.0.1, for the official SDKs.

OpenAI: ``POST /v1/files`` (multipart upload of the JSONL), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/files/{id}/content``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
``POST /v1/messages/batches/{id}/cancel``, ``GET /v1/messages/batches/{id}/results``.

Each request line is answered by :func:`tests.fakellm.keyword_brain` (or ``brain=``), in the
same reply shapes as the live fake; live calls (``/v1/chat/completions``, ``/v1/messages``)
are answered too, so a batch run and a live run can share one base URL. Scriptable: ``polls`` (how many status polls a batch
stays in progress), ``failing`` (line indexes that error), ``expire`` (the batch expires
with only its first half done).
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


def _openai_completion(body: dict[str, Any], payload: dict[str, Any], number: int) -> dict[str, Any]:
    out = json.dumps(payload)
    return {
        "id": f"chatcmpl-batch-{number}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": out, "refusal": None},
                     "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(out) // 4,
                  "total_tokens": len(json.dumps(body)) // 4 + len(out) // 4},
    }  # fmt: skip


def _anthropic_message(body: dict[str, Any], payload: dict[str, Any], number: int) -> dict[str, Any]:
    tool = (body.get("tools") or [{}])[0].get("name", "judgement")
    return {
        "id": f"msg_batch_{number}", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
        "content": [{"type": "tool_use", "id": f"toolu_batch_{number}", "name": tool, "input": payload}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": len(json.dumps(payload)) // 4},
    }  # fmt: skip


class FakeBatches:
    """Both Batch APIs; ``base_url_openai`` / ``base_url_anthropic`` as for the live fake."""

    def __init__(self, *, polls: int = 1, failing: set[int] | None = None, expire: bool = False,
                 brain: Callable[[Any], dict[str, Any]] = keyword_brain):
        self.polls, self.failing, self.expire, self.brain = polls, failing or set(), expire, brain
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str]] = []
        self.lines_submitted = 0
        self.live_calls = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeBatches:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
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

    def created(self) -> int:
        return sum(1 for method, path in self.log if method == "POST" and path.endswith("batches"))

    # -- batches ----------------------------------------------------------------------
    def new_batch(self, api: str, lines: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        with self._lock:
            number = len(self.batches) + 1
            self.lines_submitted += len(lines)
        prefix = "batch_" if api == "openai" else "msgbatch_"
        batch = {"id": f"{prefix}{number}", "api": api, "lines": lines, "polls": self.polls, "state": "in_progress"}
        self.batches[batch["id"]] = batch
        return batch

    def finish(self, batch: dict[str, Any]) -> None:
        """Answer every line (the first half only when expiring) once the polls ran out."""
        if batch["state"] != "in_progress":
            return
        if batch["polls"] > 0:
            batch["polls"] -= 1
            return
        lines = batch["lines"][: len(batch["lines"]) // 2] if self.expire else batch["lines"]
        batch["results"] = {cid: self._answer(batch["api"], index, body) for index, (cid, body) in enumerate(lines)}
        batch["state"] = "expired" if self.expire else "ended"

    def _answer(self, api: str, index: int, body: dict[str, Any]) -> dict[str, Any] | str:
        if index in self.failing:
            return "the request was malformed: max_tokens too large"
        payload = self.brain(parse_call(api, body))
        return (_openai_completion if api == "openai" else _anthropic_message)(body, payload, index)

    def openai_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        state = {"in_progress": "in_progress", "ended": "completed", "expired": "expired",
                 "cancelled": "cancelled"}[batch["state"]]  # fmt: skip
        results = batch.get("results", {})
        failed = sum(1 for r in results.values() if isinstance(r, str))
        view = {"id": batch["id"], "object": "batch", "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "status": state, "input_file_id": batch["input"], "created_at": int(time.time()),
                "request_counts": {"total": len(batch["lines"]), "completed": len(results) - failed, "failed": failed},
                "output_file_id": None, "error_file_id": None}  # fmt: skip
        if batch["state"] != "in_progress":
            ok = [json.dumps({"id": f"r{i}", "custom_id": cid, "error": None,
                              "response": {"status_code": 200, "request_id": "x", "body": r}})
                  for i, (cid, r) in enumerate(results.items()) if not isinstance(r, str)]  # fmt: skip
            bad = [json.dumps({"id": f"e{i}", "custom_id": cid, "error": None,
                               "response": {"status_code": 400, "request_id": "x", "body": {"error": {"message": r}}}})
                   for i, (cid, r) in enumerate(results.items()) if isinstance(r, str)]  # fmt: skip
            view["output_file_id"] = self._store(f"out-{batch['id']}", ok)
            view["error_file_id"] = self._store(f"err-{batch['id']}", bad) if bad else None
        return view

    def _store(self, name: str, lines: list[str]) -> str:
        self.files[name] = "".join(line + "\n" for line in lines).encode()
        return name

    def anthropic_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        results = batch.get("results", {})
        ended = batch["state"] != "in_progress"
        errored = sum(1 for r in results.values() if isinstance(r, str))
        missing = len(batch["lines"]) - len(results) if ended else 0
        counts = {"processing": 0 if ended else len(batch["lines"]), "succeeded": len(results) - errored,
                  "errored": errored, "canceled": missing if batch["state"] == "cancelled" else 0,
                  "expired": missing if batch["state"] == "expired" else 0}  # fmt: skip
        return {"id": batch["id"], "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": "2026-11-22T00:00:00Z", "expires_at": "2026-11-23T00:00:00Z",
                "ended_at": "2026-11-22T01:00:00Z" if ended else None, "cancel_initiated_at": None,
                "archived_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None}  # fmt: skip

    def anthropic_results(self, batch: dict[str, Any]) -> bytes:
        out = []
        results = batch.get("results", {})
        for cid, _ in batch["lines"]:
            if cid in results and isinstance(results[cid], str):
                error = {"type": "error", "error": {"type": "invalid_request_error", "message": results[cid]}}
                result: dict[str, Any] = {"type": "errored", "error": error}
            elif cid in results:
                result = {"type": "succeeded", "message": results[cid]}
            else:
                result = {"type": "canceled" if batch["state"] == "cancelled" else "expired"}
            out.append(json.dumps({"custom_id": cid, "result": result}) + "\n")
        return "".join(out).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

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

    def do_POST(self) -> None:
        fake: FakeBatches = self.server.fake  # type: ignore[attr-defined]
        path = self.path.split("?")[0].rstrip("/")
        fake.log.append(("POST", path))
        raw = self._body()
        if path in ("/v1/chat/completions", "/v1/messages"):  # a live call, answered at once
            api = "openai" if path.endswith("completions") else "anthropic"
            fake.live_calls += 1
            body = json.loads(raw)
            payload = fake.brain(parse_call(api, body))
            return self._send(200, (_openai_completion if api == "openai" else _anthropic_message)(body, payload, 0))
        if path == "/v1/files":
            message = email.message_from_bytes(b"Content-Type: " + self.headers["content-type"].encode() + b"\r\n\r\n" + raw)
            content = next(part.get_payload(decode=True) for part in message.get_payload() if part.get_filename())
            fake.files[f"file-{len(fake.files) + 1}"] = content
            return self._send(200, {"id": f"file-{len(fake.files)}", "object": "file", "bytes": len(content),
                                    "created_at": int(time.time()), "filename": "batch.jsonl", "purpose": "batch",
                                    "status": "processed"})  # fmt: skip
        if path == "/v1/batches":
            request = json.loads(raw)
            lines = [json.loads(line) for line in fake.files[request["input_file_id"]].decode().splitlines() if line]
            batch = fake.new_batch("openai", [(line["custom_id"], line["body"]) for line in lines])
            batch["input"] = request["input_file_id"]
            return self._send(200, fake.openai_view(batch))
        if path == "/v1/messages/batches":
            request = json.loads(raw)
            batch = fake.new_batch("anthropic", [(r["custom_id"], r["params"]) for r in request["requests"]])
            return self._send(200, fake.anthropic_view(batch))
        match = re.fullmatch(r"/v1(?:/messages)?/batches/([\w-]+)/cancel", path)
        if match and match.group(1) in fake.batches:
            batch = fake.batches[match.group(1)]
            batch["state"] = "cancelled"
            view = fake.openai_view if batch["api"] == "openai" else fake.anthropic_view
            return self._send(200, view(batch))
        return self._send(404, {"error": {"message": f"no route {path}"}})

    def do_GET(self) -> None:
        fake: FakeBatches = self.server.fake  # type: ignore[attr-defined]
        path = self.path.split("?")[0].rstrip("/")
        fake.log.append(("GET", path))
        if match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            return self._send(200, fake.files.get(match.group(1), b""), raw=True)
        if match := re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path):
            return self._send(200, fake.anthropic_results(fake.batches[match.group(1)]), raw=True)
        if (match := re.fullmatch(r"/v1(/messages)?/batches/([\w-]+)", path)) and match.group(2) in fake.batches:
            batch = fake.batches[match.group(2)]
            fake.finish(batch)
            return self._send(200, fake.openai_view(batch) if batch["api"] == "openai" else fake.anthropic_view(batch))
        return self._send(404, {"error": {"message": f"no route {path}"}})
