"""A real Label Studio server for the round-trip tests: started on 127.0.0.1 (SQLite, a fresh data folder),
driven through its HTTP API, stopped at the end.

``RUBRIC_STUDIO_LABEL_STUDIO`` names the ``label-studio`` command (installed in its own virtual
environment by ``.ci/run``); without it the tests that need the server are skipped.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ENV = "RUBRIC_STUDIO_LABEL_STUDIO"
START_LIMIT = 600.0  # seconds: the first start migrates a new SQLite database (about 25 s alone, minutes on a busy machine)
ADMIN, PASSWORD, TOKEN = "admin@example.com", "admin-pass-1234", "rubric-studio-test-token"


def command() -> str | None:
    """The ``label-studio`` executable named by the environment (None when it is not there)."""
    given = os.environ.get(ENV, "").strip()
    return given if given and Path(given).is_file() and os.access(given, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """One Label Studio process and an API client acting as its admin."""

    def __init__(self, executable: str, data_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir / "server.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [executable, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(self.port),
                 "--data-dir", str(data_dir / "data"), "--username", ADMIN, "--password", PASSWORD,
                 "--user-token", TOKEN, "--enable-legacy-api-token"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_up(self, limit: float = START_LIMIT) -> None:
        ends = time.monotonic() + limit
        while time.monotonic() < ends:
            if self.process.poll() is not None:
                raise RuntimeError(f"label-studio exited ({self.process.returncode}): {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"label-studio was not up within {limit:.0f} s: {self.log_tail()}")

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)

    # -- API ---------------------------------------------------------------------------------
    def call(self, method: str, path: str, body: Any = None, token: str = TOKEN) -> Any:
        request = urllib.request.Request(
            self.url + path, method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read()[:500]!r}") from None
        return json.loads(raw) if raw else None

    def sign_up(self, email: str, password: str) -> str:
        """A new user of the admin's organisation (through its invite link); their API token."""
        invite = self.call("GET", "/api/invite")["invite_url"]
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        url = self.url + invite
        opener.open(url, timeout=60).read()
        csrf = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
        form = urllib.parse.urlencode({"email": email, "password": password, "csrfmiddlewaretoken": csrf}).encode()
        opener.open(urllib.request.Request(url, data=form, headers={"Referer": url}), timeout=60).read()
        with opener.open(f"{self.url}/api/current-user/token", timeout=60) as reply:
            return json.load(reply)["token"]
