"""``rubric-studio serve`` for real: a process on a free port, its links, a label through the API,
Ctrl-C folding the journal; bad input refused with exit 2 before anything listens."""

from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import signal
import ssl
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests._timing import scaled
from tests.web.conftest import RUBRIC, sample_rows, write_samples

ROOT = Path(__file__).resolve().parents[2]


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), RUBRIC_STUDIO_HOME=str(folder / "home"))
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    write_samples(tmp_path / "r.samples.jsonl", sample_rows())
    return tmp_path


class Server:
    """A running ``serve`` process and the lines it printed."""

    def __init__(self, folder: Path, *args: str) -> None:
        command = [sys.executable, "-m", "rubric_studio", "serve", "r.yaml", "--port", "0", *args]
        self.process = subprocess.Popen(command, cwd=folder, env=_env(folder), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def printed(self, count: int) -> list[str]:
        return [self.lines.get(timeout=scaled(30)) for _ in range(count)]

    def stop(self, how: int = signal.SIGINT) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(how)
        try:
            code = self.process.wait(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        return code, self.process.stderr.read()


def _request(link: str, method: str = "GET", path: str | None = None, headers: dict | None = None, body=None):
    parts = urlsplit(link)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=scaled(10))
    target = path if path is not None else f"{parts.path}?{parts.query}"
    connection.request(method, target, body=json.dumps(body) if body is not None else None, headers=headers or {})
    answer = connection.getresponse()
    try:
        return answer.status, dict(answer.getheaders()), answer.read().decode()
    finally:
        connection.close()


@pytest.mark.timeout(120)
def test_serve_prints_one_link_per_person_and_the_link_opens_the_page(project: Path):
    server = Server(project, "--annotators", "alice,bob", "--lead", "carol")
    try:
        lines = server.printed(3)
        assert [line.split(": ", 1)[0] for line in lines] == ["alice", "bob", "carol"]
        links = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in lines}
        assert all(urlsplit(link).hostname == "127.0.0.1" and "token=" in link for link in links.values())
        status, headers, _ = _request(links["bob"])
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"].split(";")[0]
        status, _, page = _request(links["bob"], path="/", headers={"Cookie": cookie})
        assert status == 200 and 'data-person="bob"' in page
        assert _request(links["bob"], path="/api/progress")[0] == 401
        token = urlsplit(links["alice"]).query.split("token=")[1]
        status, _, body = _request(links["alice"], "PUT", "/api/labels/s1", {"Authorization": f"Bearer {token}",
                                                                             "Content-Type": "application/json"},
                                   {"verdict": "fail", "note": "via the API"})
        assert status == 200, body
    finally:
        code, errors = server.stop()
    assert code == 0, errors
    sidecar = (project / "r.labels.yaml").read_text()
    assert "note: via the API" in sidecar  # folded from the journal on Ctrl-C


def test_a_terminate_signal_stops_it_as_ctrl_c_does(project: Path):
    """A service manager's SIGTERM: labels folded into the sidecar, "stopped", exit 0."""
    server = Server(project, "--annotators", "alice")
    try:
        link = server.printed(1)[0].split(": ", 1)[1]
        token = urlsplit(link).query.split("token=")[1]
        status, _, _ = _request(link, "PUT", "/api/labels/s1", {"Authorization": f"Bearer {token}",
                                                                "Content-Type": "application/json"}, {"verdict": "pass"})
        assert status == 200
    finally:
        code, errors = server.stop(signal.SIGTERM)
    assert code == 0 and "stopped; labels are in" in errors, errors
    assert "verdict: pass" in (project / "r.labels.yaml").read_text()


@pytest.mark.timeout(120)
def test_kept_tokens_keep_their_links_and_revoke_shuts_one_out(project: Path):
    tokens = project / "people.tokens"
    first = Server(project, "--annotators", "alice,bob", "--tokens", str(tokens))
    try:
        links = dict(line.split(": ", 1) for line in first.printed(2))
    finally:
        assert first.stop()[0] == 0
    assert all(urlsplit(link).query.split("token=")[1] not in tokens.read_text() for link in links.values())
    second = Server(project, "--annotators", "alice,bob,cara", "--tokens", str(tokens))
    try:
        lines = second.printed(3)
        assert lines[2].startswith("cara: http://127.0.0.1:")
        port = urlsplit(lines[2].split(": ", 1)[1]).port
        for name, line in zip(("alice", "bob"), lines[:2], strict=True):  # the address to use now, no token
            assert line.startswith(f"{name}: their link from an earlier run, as http://127.0.0.1:{port}/?token=…")
            assert str(tokens) in line
        old_alice = links["alice"].replace(f":{urlsplit(links['alice']).port}/", f":{port}/")
        assert _request(old_alice)[0] == 303  # alice's token from the first run still opens
        revoked = subprocess.run([sys.executable, "-m", "rubric_studio", "serve", "r.yaml", "--tokens", str(tokens),
                                  "--revoke", "alice"], cwd=project, env=_env(project), capture_output=True, text=True,
                                 timeout=scaled(60))
        assert revoked.returncode == 0 and "alice: removed" in revoked.stdout
        assert _request(old_alice)[0] == 401  # at once, in the running server
    finally:
        assert second.stop()[0] == 0


@pytest.mark.parametrize(("args", "words"), [
    ([], "--annotators is required"),
    (["--annotators", "alice,bob", "--overlap", "3"], "--overlap must be from 1 to the number of annotators (2)"),
    (["--annotators", "alice,alice"], "named twice"),
    (["--annotators", "alice", "--lead", "alice"], "named twice"),
    (["--annotators", "adjudicated"], "the lead's labels are written under"),
    (["--annotators", "alice", "--certfile", "c.pem"], "--certfile and --keyfile go together"),
    (["--annotators", "alice", "--results", "nope.json"], "nope.json"),
    (["--annotators", "alice", "--results", "r.yaml"], "not valid JSON"),
    (["--annotators", "alice", "--revoke", "bob"], "--revoke needs --tokens"),
    (["--annotators", "alice", "--port", "99999"], "expected a port from 0 to 65535"),
])
def test_bad_input_is_exit_2_with_one_line(project: Path, args: list[str], words: str):
    done = subprocess.run([sys.executable, "-m", "rubric_studio", "serve", "r.yaml", "--port", "0", *args], cwd=project,
                          env=_env(project), capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


def test_a_broken_rubric_is_exit_2_naming_the_place(project: Path):
    (project / "r.yaml").write_text(RUBRIC.replace("outcome: Warm tone", "outcom: Warm tone"))
    done = subprocess.run([sys.executable, "-m", "rubric_studio", "serve", "r.yaml", "--annotators", "a", "--port", "0"],
                          cwd=project, env=_env(project), capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 2 and "r.yaml:7:5:" in done.stderr and done.stdout == ""


def test_samples_found_beside_the_rubric_that_link_elsewhere_are_refused(project: Path, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "private.jsonl"
    write_samples(elsewhere, sample_rows())
    (project / "r.samples.jsonl").unlink()
    (project / "r.samples.jsonl").symlink_to(elsewhere)
    done = subprocess.run([sys.executable, "-m", "rubric_studio", "serve", "r.yaml", "--annotators", "a", "--port", "0"],
                          cwd=project, env=_env(project), capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 2 and "not read: the samples found beside the rubric" in done.stderr
    assert done.stdout == ""


@pytest.mark.timeout(120)
def test_another_host_warns_that_traffic_is_plain_http(project: Path):
    server = Server(project, "--annotators", "alice", "--host", "0.0.0.0")
    try:
        server.printed(1)
    finally:
        code, errors = server.stop()
    assert code == 0
    assert "warning: listening on 0.0.0.0: traffic (tokens, labels) is plain HTTP" in errors


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"]])
def test_help_does_not_import_the_web_stack(argv: list[str], tmp_path: Path):
    code = ("import sys\nfrom rubric_studio.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'starlette', 'uvicorn', 'jinja2', 'markdown_it'}),"
            " file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv], env=_env(tmp_path), capture_output=True, text=True,
                          timeout=scaled(60))
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "serve" in done.stdout


@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a test certificate")
def test_certfile_and_keyfile_serve_https_with_a_secure_cookie(project: Path):
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                           "-keyout", "key.pem", "-out", "cert.pem"], cwd=project, capture_output=True, timeout=scaled(60))
    assert made.returncode == 0, made.stderr
    server = Server(project, "--annotators", "alice", "--certfile", "cert.pem", "--keyfile", "key.pem")
    try:
        link = server.printed(1)[0].split(": ", 1)[1]
        parts = urlsplit(link)
        assert parts.scheme == "https"
        connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=scaled(10),
                                                 context=ssl._create_unverified_context())
        connection.request("GET", f"/?{parts.query}")
        answer = connection.getresponse()
        cookie = answer.getheader("set-cookie")
        connection.close()
        assert answer.status == 303 and "; Secure" in cookie
    finally:
        code, errors = server.stop()
    assert code == 0 and "plain HTTP" not in errors


def test_replies_are_not_held_back_by_the_browsers_delayed_acknowledgement():
    """Every accepted connection inherits TCP_NODELAY from the listener: a reply's headers and body,
    written apart, leave at once (without it each request waited 40 ms for a delayed ACK)."""
    import socket

    from rubric_studio.cli.serve import _listen

    listener = _listen("127.0.0.1", 0)
    try:
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        try:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            accepted.close()
            client.close()
    finally:
        listener.close()
