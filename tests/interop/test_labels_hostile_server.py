"""``labels import --label-studio-url``: only http(s) URLs, the token never leaves the server's origin
(real local servers on 127.0.0.1: one redirecting, one recording what reaches it), and every bad
reply is exit 2 with a message that never shows the token."""

from __future__ import annotations

import json
import shutil
import socketserver
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rubric_studio.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXPORT = Path(__file__).resolve().parent / "fixtures" / "label_studio" / "support_reply.export.json"
LEGACY = "legacy-secret-token-1234"
PERSONAL = "eyJhbGciOiJIUzI1NiJ9.eyJzZWNyZXQiOjF9.personal-secret-signature"
USERS = [{"id": 1, "email": "admin@example.com"}, {"id": 3, "email": "carol@example.com"}]

#: (status, headers, body) for a request: (method, path, the handler's headers).
Reply = tuple[int, dict[str, str], bytes]


class Recorder:
    """A real HTTP server on 127.0.0.1 that answers with ``answer`` and records every request it gets."""

    def __init__(self, answer: Callable[[str, str], Reply]) -> None:
        self.answer = answer
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                if size:
                    self.rfile.read(size)
                recorder.requests.append((self.command, self.path, dict(self.headers.items())))
                status, headers, body = recorder.answer(self.command, self.path)
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def carrying_token(self) -> list[str]:
        return [path for _, path, headers in self.requests
                if "authorization" in {k.lower() for k in headers} or LEGACY in json.dumps(headers)]


@contextmanager
def serving(answer: Callable[[str, str], Reply]) -> Iterator[Recorder]:
    recorder = Recorder(answer)
    thread = threading.Thread(target=recorder.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.server.shutdown()
        recorder.server.server_close()
        thread.join()


def _json(data: object, status: int = 200) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(data).encode()


def _users_or_access(method: str, path: str) -> Reply:
    return _json({"access": "fresh-access-token"} if method == "POST" else USERS)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path, dirs_exist_ok=True)
    (tmp_path / "support_reply.labels.yaml").unlink()
    return tmp_path / "support_reply.yaml"


def _run(project: Path, url: str, token: str, monkeypatch) -> int:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    return main(["labels", "import", str(project), str(EXPORT), "--label-studio-url", url])


def _failed(project: Path, capsys, *what: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and LEGACY not in err and PERSONAL not in err, err
    for part in what:
        assert part in err, err
    assert not project.with_name("support_reply.labels.yaml").exists()
    return err


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/", "gopher://x", "127.0.0.1:8080",
                                 "http://", "javascript:alert(1)"])
def test_only_http_and_https_urls_are_taken(project, capsys, monkeypatch, url):
    assert _run(project, url, LEGACY, monkeypatch) == 2
    _failed(project, capsys, "--label-studio-url: expected an http:// or https:// URL")


@pytest.mark.parametrize("bad", ["\r\nX-Injected: 1", "\n", "\t", "\x1b[2J", "\x7f", " "])
def test_a_url_with_control_characters_is_refused_before_any_request(project, capsys, monkeypatch, bad):
    with serving(_users_or_access) as server:
        assert _run(project, f"{server.url}/{bad}x", LEGACY, monkeypatch) == 2
    _failed(project, capsys, "--label-studio-url:", "control character or space")
    assert server.requests == []


@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("token", [LEGACY, PERSONAL])
def test_no_request_with_the_token_follows_a_redirect_to_another_server(project, capsys, monkeypatch, status, token):
    with serving(_users_or_access) as second, serving(lambda method, path: (
            (200, {"Content-Type": "application/json"}, b'{"access": "fresh-access-token"}') if method == "POST"
            else (status, {"Location": f"{second.url}{path}"}, b""))) as first:
        assert _run(project, first.url, token, monkeypatch) == 2
    assert second.carrying_token() == [] and second.requests == []
    assert [path for _, path, _ in first.requests][-1] == "/api/users/"
    _failed(project, capsys, f"redirected to another server ({second.url})", "not sent there")


@pytest.mark.parametrize("status", [301, 307])
def test_a_redirect_of_the_token_refresh_to_another_server_is_refused(project, capsys, monkeypatch, status):
    with serving(_users_or_access) as second, serving(
            lambda method, path: (status, {"Location": f"{second.url}{path}"}, b"")) as first:
        assert _run(project, first.url, PERSONAL, monkeypatch) == 2
    assert second.requests == [] and first.requests[0][1] == "/api/token/refresh/"
    _failed(project, capsys, f"redirected to another server ({second.url})")


def test_a_redirect_is_followed_within_the_same_server_only(project, capsys, monkeypatch):
    with serving(_users_or_access) as second:
        def answer(method: str, path: str) -> Reply:
            if path == "/api/users/":
                return 301, {"Location": "/v2/api/users/"}, b""  # same origin: followed, with the token
            return 302, {"Location": f"{second.url}/api/users/"}, b""  # 127.0.0.1 too, but another port

        with serving(answer) as first:
            assert _run(project, first.url, LEGACY, monkeypatch) == 2
    assert [(p, h["Authorization"]) for _, p, h in first.requests] == [("/api/users/", f"Token {LEGACY}"),
                                                                        ("/v2/api/users/", f"Token {LEGACY}")]
    assert second.requests == []
    _failed(project, capsys, f"redirected to another server ({second.url})")


@pytest.mark.parametrize(("refresh", "said"), [
    ({"detail": "Token is invalid"}, "no access token"),
    ([1, 2], "no access token"),
    ({"access": 5}, "no access token"),
    ({"access": "bad\r\nX-Injected: 1"}, "no access token"),
])
def test_a_token_refresh_reply_without_access_is_exit_2(project, capsys, monkeypatch, refresh, said):
    with serving(lambda method, path: _json(refresh)) as server:
        assert _run(project, server.url, PERSONAL, monkeypatch) == 2
    _failed(project, capsys, f"{server.url}/api/token/refresh/", said)
    assert all(method == "POST" for method, _, _ in server.requests)


@pytest.mark.parametrize(("body", "said"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 100 levels"),
    (b'{"1": ' + b"9" * 5000 + b"}", "5000 digits"),
    (b"<html>sign in</html>", "not valid JSON"),
])
def test_a_bad_users_reply_is_exit_2_naming_the_reply(project, capsys, monkeypatch, body, said):
    with serving(lambda method, path: (200, {}, body)) as server:
        assert _run(project, server.url, LEGACY, monkeypatch) == 2
    _failed(project, capsys, f"{server.url}/api/users/", said)


class _NotHttp(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")


def test_a_server_that_does_not_speak_http_is_exit_2(project, capsys, monkeypatch):
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _NotHttp) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            assert _run(project, url, LEGACY, monkeypatch) == 2
        finally:
            server.shutdown()
            thread.join()
    _failed(project, capsys, f"{url}/api/users/", "BadStatusLine")


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "abc\x1bdef", "tök"])
def test_a_token_that_cannot_be_a_header_is_refused_without_showing_it(project, capsys, monkeypatch, token):
    with serving(_users_or_access) as server:
        assert _run(project, server.url, token, monkeypatch) == 2
    err = _failed(project, capsys, "$LABEL_STUDIO_API_KEY")
    assert token.strip() not in err and "abc" not in err
    assert server.requests == []


_LOADED = """
import sys
from rubric_studio.cli import main
code = main(["labels", "import", sys.argv[1], sys.argv[2], "--labels", sys.argv[3]])
print(code, sorted(m for m in ("urllib.request", "http.client", "ssl") if m in sys.modules))
"""


@pytest.mark.parametrize("name", ["sheet.csv", "export.json"])
def test_only_the_server_path_loads_an_http_client(project, name):
    source = project.with_name(name)
    if name == "export.json":
        shutil.copyfile(EXPORT, source)
    else:
        source.write_text("id,annotator,verdict\nrefund-within-window,bob,pass\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", _LOADED, str(project), str(source), str(project.with_name("x.yaml"))],
                         capture_output=True, text=True, check=False)
    assert run.stdout.strip() == "0 []", run.stdout + run.stderr
