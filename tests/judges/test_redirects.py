"""A judge's requests stay with its server: a redirect is never followed, whatever the provider or API.

A first server on 127.0.0.1 answers every request with 301, 302, 307 or 308 to a second server,
which records what reaches it: it must see no request at all (the SDKs on their own follow to any
host and resend the request, on 307/308 with the samples in its body). The cell is an error naming
where the redirect pointed, never a verdict. See docs/concepts/trust.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rubric_studio.cli import main

RUBRIC = "name: r\ncriteria:\n  - {id: a, outcome: Mentions the refund policy}\n"
SAMPLES = '{"id": "s0", "output": "We refund within 30 days."}\n'
SECRET = "sk-secret-key-0123456789"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.seen: list[dict[str, str]] = []
        self.status = 302
        self.location = ""
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append(dict(self.headers.items()))
        if self.server.location:
            self.send_response(self.server.status)
            self.send_header("Location", self.server.location + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"error": {"message": "the second server"}}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer


@pytest.fixture
def servers() -> Iterator[tuple[_Server, _Server]]:
    first, second = _Server(_Handler), _Server(_Handler)
    first.location = second.url
    yield first, second
    for server in (first, second):
        server.shutdown()
        server.server_close()


PROVIDERS = {
    "openai": ("openai:gpt-4o-mini", "OPENAI_API_KEY", "/v1"),
    "anthropic": ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY", ""),
    "azure": ("azure:my-deployment", "AZURE_OPENAI_API_KEY", ""),
}


def run_grade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, url: str, *extra: str):
    judge, key_var, suffix = PROVIDERS[provider]
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "OPENAI_BASE_URL",
                 "ANTHROPIC_BASE_URL", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(key_var, SECRET)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("RUBRIC_STUDIO_BATCH_POLL", "0.01")
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text(SAMPLES)
    cache = ["--cache-path", str(tmp_path / "c.sqlite")] if "--batch-api" in extra else ["--no-cache"]
    return main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", judge, "--base-url",
                 url + suffix, *cache, "--format", "json", "--timeout", "10", *extra])


@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_no_judge_request_follows_a_redirect_to_another_server(tmp_path, monkeypatch, capsys, servers, provider,
                                                               status):
    first, second = servers
    first.status = status
    code = run_grade(tmp_path, monkeypatch, provider, first.url)
    out = capsys.readouterr().out
    assert second.seen == [], f"{provider} sent {len(second.seen)} request(s) on to the second server"
    assert first.seen and any(SECRET in " ".join(headers.values()) for headers in first.seen)
    assert code == 3
    cell = json.loads(out)["samples"][0]["criteria"][0]
    assert cell["status"] == "error"
    assert f"redirects to {second.url}" in cell["error"] and "never sent on" in cell["error"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_api_upload_never_follows_a_redirect(tmp_path, monkeypatch, capsys, servers, provider):
    first, second = servers
    code = run_grade(tmp_path, monkeypatch, provider, first.url, "--batch-api")
    assert second.seen == []
    assert first.seen
    assert code in (2, 3), capsys.readouterr()
