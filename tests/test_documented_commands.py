"""Every shell command the README and the documentation show runs as written.

Each runnable fenced block (the convention is in ``tests/doccommands.py`` and
``docs/contributing-docs.md``) is one test: its commands run in order in a fresh copy of the
files the documentation refers to, with the judge pointed at the local fake judge
(``tests/fakellm.py``). A page whose blocks build on each other (the tutorial) is one test: its
blocks run in order in one folder that holds only the repository's ``sample_rubrics/``, its file
blocks written where the reader writes them, and the address it gives for a local judge server
served by the fake judge. A command that opens the studio runs at a real terminal in tmux: the
first screen must show, then ``ctrl+q`` quits it. Every command fails the test on a traceback
or an exit code the block does not allow; the block's pinned substrings and JSON Schema are
checked on its output. A new documented command is covered without a test written by hand.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests._timing import scaled
from tests.doccommands import ROOT, Block, DocTestSyntaxError, all_blocks, blocks_of, is_studio
from tests.fakellm import FakeLLM

BLOCKS = all_blocks()
SCHEMAS = ROOT / "docs" / "reference" / "schemas"
TRACEBACK = "Traceback (most recent call last)"
#: Documented commands known to fail on this branch, with the reason (kept short-lived).
KNOWN_BROKEN: dict[str, str] = {}  # command -> why it fails today (an xfail that says so)


def _workspace_template(into: Path) -> Path:
    """The files the documentation's examples name: the bundled rubrics, and ``rubric.yaml`` with its
    samples and labels (the support-reply rubric), ``samples.jsonl`` and a ``samples/`` folder."""
    shutil.copytree(ROOT / "sample_rubrics", into / "sample_rubrics")
    support = ROOT / "sample_rubrics" / "support_reply"
    shutil.copy(support / "support_reply.yaml", into / "rubric.yaml")
    shutil.copy(support / "support_reply.samples.jsonl", into / "rubric.samples.jsonl")
    shutil.copy(support / "support_reply.labels.yaml", into / "rubric.labels.yaml")
    shutil.copy(support / "support_reply.samples.jsonl", into / "samples.jsonl")
    shutil.copytree(ROOT / "sample_rubrics" / "code_review" / "samples", into / "samples")
    return into


@pytest.fixture(scope="module")
def fake_judge():
    with FakeLLM() as server:
        yield server


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _workspace_template(tmp_path_factory.mktemp("doc-workspace"))


def _environment(server: FakeLLM) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(OPENAI_BASE_URL=server.base_url_openai, OPENAI_API_KEY="sk-doc-test",
               ANTHROPIC_BASE_URL=server.base_url_anthropic, ANTHROPIC_API_KEY="sk-ant-doc-test",
               OLLAMA_HOST=server.url, NO_COLOR="1")  # fmt: skip
    return env


def _wrapped(command: str) -> str:
    """``command`` in bash, with the variables earlier commands of the block exported."""
    return f"source ./.doc-env 2>/dev/null; {command}\nstatus=$?; export -p > ./.doc-env; exit $status"


def _run_headless(command: str, cwd: Path, env: dict[str, str], block: Block, last: bool = True) -> str:
    done = subprocess.run(["bash", "-c", _wrapped(command)], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=scaled(60))  # fmt: skip
    output = done.stdout + done.stderr
    assert TRACEBACK not in output, f"{block.id}: `{command}` printed a traceback:\n{output}"
    assert done.returncode in block.exits, (
        f"{block.id}: `{command}` exited {done.returncode}, the doc allows {sorted(block.exits)}:\n{output[-3000:]}")
    if block.schema and last:
        schema = json.loads((SCHEMAS / f"{block.schema}.schema.json").read_text())
        jsonschema.validate(json.loads(done.stdout), schema)
    return output


class _Terminal:
    def __init__(self, socket: str, env: dict[str, str]) -> None:
        self.socket, self.env = socket, env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check,
                              env=self.env)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-S", "-200", "-t", "doc", check=False).stdout

    def wait_for(self, predicate, what: str, timeout: float = 30.0) -> str:
        started = time.monotonic()
        screen = ""
        while time.monotonic() - started < scaled(timeout):
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")


_EXIT = re.compile(r"doc-test-exit=(\d+)")


def _run_in_terminal(command: str, cwd: Path, env: dict[str, str], block: Block) -> str:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    terminal = _Terminal(f"rubric-studio-doc-{os.getpid()}-{secrets.token_hex(4)}", env)
    expected = block.screen or "^q Quit"
    script = (f"source ./.doc-env 2>/dev/null; {command}\nstatus=$?; export -p > ./.doc-env\n"
              "echo doc-test-exit=$status; sleep 600")
    try:
        terminal.run("new-session", "-d", "-s", "doc", "-x", "140", "-y", "40", "-c", str(cwd), "bash", "-c", script)
        screen = terminal.wait_for(lambda s: expected in s or _EXIT.search(s), f"the studio's first screen ({expected!r})")
        assert not _EXIT.search(screen) and TRACEBACK not in screen, (
            f"{block.id}: `{command}` ended before its first screen showed {expected!r}:\n{screen}")
        # Quit once the first grading settled: the status bar shows nothing in flight, twice alike.
        settled: list[str] = []
        terminal.wait_for(lambda s: " 0 in flight" in s and (settled.append(s) or settled[-2:-1] == [s]),
                          "the first grading to settle")
        terminal.run("send-keys", "-t", "doc", "C-q")
        screen = terminal.wait_for(lambda s: _EXIT.search(s), "the studio to quit after ctrl+q")
    finally:
        terminal.run("kill-server", check=False)
    code = int(_EXIT.search(screen).group(1))
    assert TRACEBACK not in screen, f"{block.id}: `{command}` printed a traceback:\n{screen}"
    assert code in block.exits, f"{block.id}: `{command}` exited {code} after ctrl+q:\n{screen}"
    return screen


def _params():
    """One test per distinct block: the same block shown in two places (the README's quick start is
    also the site's Getting started) runs once, its test named after both. The blocks of an
    in-order page are one test, run in order."""
    places: dict[tuple, list[Block]] = {}
    pages: dict[str, list[Block]] = {}
    for block in BLOCKS:
        if block.in_order:
            pages.setdefault(block.file, []).append(block)
            continue
        key = (tuple(block.commands), block.exits, tuple(block.contains), block.screen, block.schema, block.skip)
        places.setdefault(key, []).append(block)
    for same in places.values():
        block = same[0]
        marks = []
        if block.skip:
            marks.append(pytest.mark.skip(reason=f"{block.id}: {block.skip}"))
        yield pytest.param([block], id="+".join(b.id for b in same), marks=marks + _marks([block]))
    for file, blocks in pages.items():
        yield pytest.param(blocks, id=f"{file}:in-order", marks=_marks(blocks))


def _marks(blocks: list[Block]) -> list[pytest.MarkDecorator]:
    marks = []
    bare = [c.split("#")[0].strip() for b in blocks if not b.skip for c in b.commands]
    broken = [KNOWN_BROKEN[c] for c in bare if c in KNOWN_BROKEN]
    if broken:
        marks.append(pytest.mark.xfail(reason=broken[0], strict=False))
    if any(is_studio(c) for b in blocks if not b.skip for c in b.commands):
        marks.append(pytest.mark.tmux)
    return marks


def _as_served(text: str, block: Block, server: FakeLLM) -> str:
    """``text`` with the page's local judge address replaced by the fake judge's."""
    if not block.local_judge:
        return text
    return text.replace(block.local_judge.rstrip("/"), server.base_url_openai.rstrip("/"))


@pytest.mark.long
@pytest.mark.parametrize("blocks", list(_params()))
def test_a_documented_command_block_runs_as_written(blocks: list[Block], fake_judge: FakeLLM, template: Path,
                                                    tmp_path: Path):
    workspace = tmp_path / "ws"
    if blocks[0].in_order:  # a page read start to end (the tutorial) has only what a clone of the repository has
        shutil.copytree(template / "sample_rubrics", workspace / "sample_rubrics")
    else:
        shutil.copytree(template, workspace)
    env = _environment(fake_judge)
    for block in blocks:
        if block.skip:
            continue
        if block.writes is not None:
            (workspace / block.writes).write_text(_as_served(block.text, block, fake_judge), encoding="utf-8")
            continue
        output = ""
        for number, written in enumerate(block.commands, 1):
            command = _as_served(written, block, fake_judge)
            if is_studio(command):
                output += _run_in_terminal(command, workspace, env, block)
            else:
                output += _run_headless(command, workspace, env, block, last=number == len(block.commands))
        for text in block.contains:
            assert text in output, f"{block.id}: the output no longer contains {text!r}:\n{output[-3000:]}"


def test_the_documentation_has_commands_and_studio_commands():
    assert len(BLOCKS) >= 20
    assert any(is_studio(c) for b in BLOCKS if not b.skip for c in b.commands)
    assert {b.file for b in BLOCKS} >= {"README.md", "docs/tutorial.md"}


def test_ci_runs_exactly_the_test_command_the_readme_shows():
    readme = (ROOT / "README.md").read_text()
    chains = [c for b in blocks_of(ROOT / "README.md") for c in b.commands if "pytest" in c]
    assert len(chains) == 1, chains
    test_command = chains[0].split("&&")[-1].strip()
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci_lines, (test_command, readme.count("pytest"))


def test_the_convention_is_enforced(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text("```\nrubric-studio grade r.yaml\n```\n")
    with pytest.raises(DocTestSyntaxError, match="without a language holds a command"):
        blocks_of(page, tmp_path)
    page.write_text('<!-- doc-test: skip="" -->\n```sh\npip install x\n```\n')
    with pytest.raises(DocTestSyntaxError, match="skip needs a reason"):
        blocks_of(page, tmp_path)
    page.write_text('<!-- doc-test: exit=1 contains="a b" -->\n```console\n$ rubric-studio grade r.yaml \\\n'
                    "    --format json\nsome output\n$ rubric-studio r.yaml\n```\n")
    (block,) = blocks_of(page, tmp_path)
    assert block.commands == ["rubric-studio grade r.yaml      --format json", "rubric-studio r.yaml"]
    assert block.exits == {1} and block.contains == ["a b"]
    assert [is_studio(c) for c in block.commands] == [False, True]
    assert is_studio("rubric-studio new x.yaml") and not is_studio("rubric-studio new x.yaml --no-open")


def test_an_in_order_page_keeps_its_file_blocks_and_local_judge(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text('<!-- doc-test: file=r.yaml -->\n```yaml\nname: r\n```\n')
    with pytest.raises(DocTestSyntaxError, match="file=NAME is for pages marked"):
        blocks_of(page, tmp_path)
    page.write_text('<!-- doc-test-page: in-order local-judge="http://127.0.0.1:8080/v1" -->\n\n'
                    '<!-- doc-test: file=r.yaml -->\n```yaml\nname: r\njudge: {base_url: http://127.0.0.1:8080/v1}\n```\n\n'
                    "```yaml\nnot: written\n```\n\n"
                    '```console\n$ rubric-studio grade r.yaml --base-url http://127.0.0.1:8080/v1\n```\n')
    written, run = blocks_of(page, tmp_path)
    assert (written.writes, written.commands, written.text) == (
        "r.yaml", [], "name: r\njudge: {base_url: http://127.0.0.1:8080/v1}\n")
    assert run.in_order and run.local_judge == "http://127.0.0.1:8080/v1" and run.writes is None
    with FakeLLM() as server:
        assert _as_served(run.commands[0], run, server) == f"rubric-studio grade r.yaml --base-url {server.base_url_openai}"
    page.write_text("<!-- doc-test-page: in-order -->\n\n<!-- doc-test: file= -->\n```yaml\nname: r\n```\n")
    with pytest.raises(DocTestSyntaxError, match="file= needs the name"):
        blocks_of(page, tmp_path)
    page.write_text("<!-- doc-test-page: in-order -->\n<!-- doc-test-page: in-order -->\n")
    with pytest.raises(DocTestSyntaxError, match="a second doc-test-page line"):
        blocks_of(page, tmp_path)
    page.write_text("<!-- doc-test-page: sometimes -->\n")
    with pytest.raises(DocTestSyntaxError, match="doc-test expects key=value"):
        blocks_of(page, tmp_path)
    page.write_text("```text\n<!-- doc-test-page: in-order -->\n```\n\n```console\n$ rubric-studio grade r.yaml\n```\n")
    (shown,) = blocks_of(page, tmp_path)  # a page line shown as an example, inside a fence, is not the page's
    assert not shown.in_order


def test_the_tutorial_runs_in_order_from_new_to_a_card_with_a_local_judge():
    tutorial = [b for b in BLOCKS if b.file == "docs/tutorial.md"]
    assert tutorial and all(b.in_order and b.local_judge for b in tutorial)
    commands = [c for b in tutorial if not b.skip for c in b.commands]
    first_new = next(i for i, c in enumerate(commands) if c.startswith("rubric-studio new "))
    card = next(i for i, c in enumerate(commands) if c.startswith("rubric-studio card "))
    assert first_new < card
    assert any(b.writes for b in tutorial)  # the criteria the reader writes are written by the test too
