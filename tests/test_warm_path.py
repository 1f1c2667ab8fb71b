"""A fully cached run sends no request, so it imports no provider SDK (``grade``,
``calibrate`` and the studio's first screen). Each warm run is a fresh process so
``sys.modules`` shows exactly what it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests._timing import scaled
from tests.fakellm import FakeLLM

ROOT = Path(__file__).resolve().parent
pytestmark = pytest.mark.timeout(120)

RUBRIC = "name: warm\njudge: {model: 'openai:gpt-4o-mini'}\ncriteria:\n  - {id: hello, outcome: Says hello}\n  - {id: short, check: {type: length, max_words: 20}}\n"
WARM_CLI = """
import sys
from rubric_studio.cli import main
code = main(sys.argv[1:])
print("SDKS", sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'anthropic', 'httpx2'}), code, file=sys.stderr)
"""
WARM_STUDIO = """
import asyncio, sys
from rubric_studio.tui.app import StudioApp
from tests._timing import scaled

async def until(condition, what):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(30)
    while not condition():
        if loop.time() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)

async def first_screen():
    app = StudioApp(sys.argv[1], sys.argv[2], base_url=sys.argv[3], watch=False)
    async with app.run_test():
        await until(lambda: app.session.report is not None, "the first run's report")
        print("CALLS", app.session.report.usage.judge_calls, app.session.report.usage.cache_hits, file=sys.stderr)
        # leave once the first screen is whole: the editor, mounted just after it, shows the rubric
        await until(lambda: getattr(app.editor, "ready", False), "the editor mounted after the first screen")
asyncio.run(first_screen())
print("SDKS", sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'anthropic', 'httpx2'}), file=sys.stderr)
"""


@pytest.fixture
def warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A rubric, samples and labels whose judge replies are all in the cache."""
    env = {"RUBRIC_STUDIO_HOME": str(tmp_path / "home"), "RUBRIC_STUDIO_CACHE": str(tmp_path / "c.sqlite"),
           "OPENAI_API_KEY": "k"}  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "r.samples.jsonl").write_text(
        "".join(json.dumps({"id": f"s{i}", "output": f"hello number {i}"}) + "\n" for i in range(4))
    )
    (tmp_path / "r.labels.yaml").write_text("s0: {verdict: pass}\ns1: {verdict: fail}\n")
    with FakeLLM() as server:
        assert main(["grade", str(tmp_path / "r.yaml"), "--base-url", server.base_url_openai, "--format", "json",
                     "-o", str(tmp_path / "cold.json")]) == 0  # fmt: skip
        assert server.calls() == 4
        yield tmp_path, server, {**os.environ, **env, "PYTHONPATH": str(ROOT.parent)}


def run_warm(code: str, args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=scaled(90), env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_a_warm_grade_and_calibrate_import_no_sdk(warm):
    folder, server, env = warm
    rubric = str(folder / "r.yaml")
    for command in (["grade", rubric, "--base-url", server.base_url_openai],
                    ["calibrate", rubric, "--base-url", server.base_url_openai]):  # fmt: skip
        err = run_warm(WARM_CLI, command, env)
        assert "SDKS [] " in err, err
    assert server.calls() == 4  # nothing was sent by the warm runs


def test_the_studio_first_screen_on_a_warm_cache_imports_no_sdk(warm):
    folder, server, env = warm
    err = run_warm(WARM_STUDIO, [str(folder / "r.yaml"), str(folder / "r.samples.jsonl"), server.base_url_openai], env)
    assert "CALLS 0 4" in err and "SDKS []" in err, err
