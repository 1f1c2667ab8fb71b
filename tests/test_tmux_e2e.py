"""End to end: the real ``rubric-studio`` command in tmux, a rubric edited from outside.

Runs on a private tmux server (``-L``) so the studio inherits this test's isolated
environment (no API keys, private cache). Skipped when tmux is not installed; CI
installs it with ``apt-get install -y tmux``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._timing import scaled

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.long,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"),
]

ROOT = Path(__file__).resolve().parent.parent


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        # The server (started by the first call) passes this environment to the studio;
        # COLUMNS / LINES from pytest would override the real terminal size.
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check, env=env)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "studio", check=False).stdout

    def wait_for(self, predicate, timeout: float = 20.0, what: str = "") -> str:
        """The screen once ``predicate`` holds for it; ``what`` names what never came if it does not."""
        started = time.monotonic()
        screen = ""
        while time.monotonic() - started < scaled(timeout):
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what or 'the screen'}; the screen was:\n{screen}")


def _command() -> str:
    script = Path(sys.executable).with_name("rubric-studio")
    return str(script) if script.exists() else f"{sys.executable} -m rubric_studio"


@pytest.fixture
def tmux(tmp_path: Path):
    server = Tmux(f"rubric-studio-e2e-{os.getpid()}-{tmp_path.name}")
    yield server
    server.run("kill-server", check=False)


def test_studio_in_tmux_follows_an_outside_edit(tmp_path: Path, tmux: Tmux):
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path / "support_reply")
    rubric = tmp_path / "support_reply" / "support_reply.yaml"
    tmux.run("new-session", "-d", "-s", "studio", "-x", "120", "-y", "35", "-c", str(tmp_path),
             f"{_command()} support_reply/support_reply.yaml")
    # The checks are drawn first; the judge is resolved in the background, then the hint shows.
    screen = tmux.wait_for(lambda s: "refund-with" in s and "score" in s and "OPENAI_API_KEY" in s
                           and "15 samples" in s and "unjudged" in s,
                           what="the first results, the status bar's sample count and the judge hint")
    assert "15 samples" in screen
    assert "unjudged" in screen  # judge cells, and one line on how to configure a judge
    assert " since v" not in screen  # nothing to compare the first run with

    rubric.write_text(rubric.read_text().replace("max_words: 150", "max_words: 60"))
    # the tally grows while the re-grade runs (⟳ in the header): read it once the run is over
    screen = tmux.wait_for(lambda s: any("↓ since v1" in line and "⟳" not in line for line in s.splitlines()),
                           what="the run header's final tally since v1")
    header = next(line for line in screen.splitlines() if "since v1" in line)
    assert "cells 0↑ " in header and " 0↓" not in header

    # An invalid edit shows file:line:col and keeps the results on screen.
    rubric.write_text(rubric.read_text().replace("max_words: 60", "max_wrds: 60"))
    screen = tmux.wait_for(lambda s: "support_reply.yaml:" in s and "max_wrds" in s and "stale" in s,
                           what="the banner with file:line:col and the results marked stale")
    assert "stale" in screen and "refund-with" in screen  # last good results stay

    tmux.run("send-keys", "-t", "studio", "C-q")
    started = time.monotonic()
    while tmux.run("has-session", "-t", "studio", check=False).returncode == 0:
        assert time.monotonic() - started < scaled(10), "ctrl+q did not quit"
        time.sleep(0.05)


def test_a_burst_of_keys_typed_into_a_field_lands_in_order_on_a_busy_machine(tmp_path: Path, tmux: Tmux):
    """Keys sent in one burst (as a fast typist or a loaded machine delivers them): the edit keys
    (ctrl+k, backspace) act between the characters typed around them, not after them."""
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path / "support_reply")
    rubric = tmp_path / "support_reply" / "support_reply.yaml"
    # Should the studio stop, the pane keeps what it printed (and its exit status) for the failure message.
    tmux.run("new-session", "-d", "-s", "studio", "-x", "140", "-y", "40", "-c", str(tmp_path),
             f"{_command()} support_reply/support_reply.yaml; echo studio exited with $?; sleep 120")
    tmux.wait_for(lambda s: "refund-with" in s and "OPENAI_API_KEY" in s, what="the first results and the judge hint")
    tmux.run("send-keys", "-t", "studio", "F2")  # the editor's criteria list
    tmux.wait_for(lambda s: "┃ ✓ resolves-issue" in s, what="the criteria list's cursor on resolves-issue")
    tmux.run("send-keys", "-t", "studio", "Enter")  # edit: the outcome field
    tmux.wait_for(lambda s: "outcome  Directly answers" in s, what="the outcome field being edited")
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(2)]
    try:
        tmux.run("send-keys", "-t", "studio", "Plainly ", "C-k", "answers the question",
                 *["BSpace"] * 8, "customer")
        tmux.wait_for(lambda s: "Plainly answers the customer" in s, timeout=30,
                      what="every key of the burst, in order, in the field")
        tmux.run("send-keys", "-t", "studio", "C-s")
        started = time.monotonic()
        while "Plainly answers the customer" not in rubric.read_text():
            assert time.monotonic() - started < scaled(20), tmux.screen()
            time.sleep(0.05)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    text = rubric.read_text()
    assert "outcome: Plainly answers the customer\n" in text or "outcome: >-\n      Plainly answers the customer\n" in text


def test_keys_typed_right_after_a_key_that_moves_the_focus_go_where_it_leads(tmp_path: Path, tmux: Tmux):
    """F2 (to the editor), enter (edit the criterion) and the text, in one burst from the results table:
    the text lands in the outcome field. (The focus used to move behind the keys typed after it: the
    letters reached the criteria list first, where ``a`` adds a criterion and ``d`` deletes one.)"""
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path / "support_reply")
    rubric = tmp_path / "support_reply" / "support_reply.yaml"
    before = rubric.read_text()
    tmux.run("new-session", "-d", "-s", "studio", "-x", "140", "-y", "40", "-c", str(tmp_path),
             f"{_command()} support_reply/support_reply.yaml; echo studio exited with $?; sleep 120")
    tmux.wait_for(lambda s: "refund-with" in s and "OPENAI_API_KEY" in s and "Criteria" in s,
                  what="the first results, the judge hint and the editor's tabs")
    tmux.run("send-keys", "-t", "studio", "F2", "Enter", "Plainly and daily ")
    screen = tmux.wait_for(lambda s: "outcome  Plainly and daily Directly" in s or "new-criterion" in s,
                           what="the text typed into the outcome field (or a criterion added by its letters)")
    assert "new-criterion" not in screen and "outcome  Plainly and daily Directly" in screen, screen
    assert screen.count(" ×") == before.count("- id:")  # the list has the criteria it had, no more
    tmux.run("send-keys", "-t", "studio", "C-s")
    started = time.monotonic()
    while "Plainly and daily Directly" not in rubric.read_text():
        assert time.monotonic() - started < scaled(20), tmux.screen()
        time.sleep(0.05)
    assert rubric.read_text().count("- id:") == before.count("- id:")


def test_new_at_a_terminal_writes_the_starter_and_opens_the_studio_on_it(tmp_path: Path, tmux: Tmux):
    """The README's "start a rubric of your own", typed at a real terminal: the file is written and the
    studio opens on it (it crashed here once, after writing the file, on an option only the studio had)."""
    (tmp_path / "samples.jsonl").write_text('{"id": "s1", "output": "Hello, your refund is on its way."}\n')
    tmux.run("new-session", "-d", "-s", "studio", "-x", "120", "-y", "35", "-c", str(tmp_path),
             f"{_command()} new my-rubric.yaml samples.jsonl; echo studio exited with $?; sleep 120")
    screen = tmux.wait_for(lambda s: ("my-rubric" in s and "first-criterion" in s and "s1" in s) or "exited with" in s,
                           what="the studio open on the new rubric (or its exit)")
    assert "exited with" not in screen and "Traceback" not in screen, screen
    assert (tmp_path / "my-rubric.yaml").exists()
    tmux.run("send-keys", "-t", "studio", "C-q")
    screen = tmux.wait_for(lambda s: "exited with" in s, what="the studio's exit status after ctrl+q")
    assert "studio exited with 0" in screen and "Traceback" not in screen, screen
