"""The layering rules: core imports no Textual and no SDK; engine and judges no Textual; a run that
sends no judge request (fully cached) imports no provider SDK."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._timing import scaled
from tests.fakellm import FakeLLM

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "rubric_studio.core": ("textual", "openai", "anthropic"),
    "rubric_studio.engine.grader": ("textual", "openai", "anthropic"),
    "rubric_studio.engine.api": ("textual", "openai", "anthropic"),
    "rubric_studio.judges": ("textual", "openai", "anthropic"),
    "rubric_studio.cli": ("textual", "openai", "anthropic", "ruamel", "rich", "pydantic"),
}


def _loaded_after_import(module: str) -> set[str]:
    code = f"import sys, importlib; importlib.import_module({module!r}); print('\\n'.join(sys.modules))"
    if module == "rubric_studio.core":
        code = (
            "import sys, importlib, pkgutil, rubric_studio.core as c\n"
            "for m in pkgutil.walk_packages(c.__path__, 'rubric_studio.core.'):\n"
            "    importlib.import_module(m.name)\n"
            "print('\\n'.join(sys.modules))"
        )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {name.split(".")[0] for name in out.split()}


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_layer_does_not_import_forbidden_packages(module: str):
    loaded = _loaded_after_import(module)
    leaked = [name for name in FORBIDDEN[module] if name in loaded]
    assert leaked == [], f"{module} imports {leaked}"


# -- the warm path: a run that sends no request imports no provider SDK -------------------

RUN_CLI = """
import sys
from rubric_studio.cli import main
code = main(sys.argv[1:])
print("SDKS", sorted({name.split('.')[0] for name in sys.modules} & {'openai', 'anthropic'}), file=sys.stderr)
sys.exit(code)
"""
MODELS = {"openai": "openai:gpt-4o-mini", "anthropic": "anthropic:claude-haiku-4-5"}


def _sdks_imported_by(command: list[str], folder: Path) -> str:
    """Run the CLI in a fresh process; the SDKs it imported, as printed (``SDKS [...]``)."""
    env = {name: value for name, value in os.environ.items() if not name.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(RUBRIC_STUDIO_HOME=str(folder / "home"), RUBRIC_STUDIO_CACHE=str(folder / "cache.sqlite"),
               OPENAI_API_KEY="k", ANTHROPIC_API_KEY="k", PYTHONPATH=str(ROOT))  # fmt: skip
    done = subprocess.run([sys.executable, "-c", RUN_CLI, *command], capture_output=True, text=True, timeout=scaled(90),
                          env=env, cwd=folder)  # fmt: skip
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_provider_sdk_is_imported_only_by_a_run_that_sends(provider: str, tmp_path: Path):
    """Cold ``grade`` sends and imports its SDK; a warm ``grade`` and ``calibrate`` send nothing and import none."""
    (tmp_path / "r.yaml").write_text("name: warm\ncriteria:\n  - {id: hello, outcome: Says hello}\n")
    (tmp_path / "s.jsonl").write_text("".join(f'{{"id": "s{i}", "output": "hello {i}"}}\n' for i in range(3)))
    (tmp_path / "r.labels.yaml").write_text("s0: {verdict: pass}\ns1: {verdict: fail}\n")
    with FakeLLM() as server:
        url = server.base_url_openai if provider == "openai" else server.base_url_anthropic
        args = ["r.yaml", "s.jsonl", "--judge", MODELS[provider], "--base-url", url]
        assert _sdks_imported_by(["grade", *args], tmp_path) == f"SDKS [{provider!r}]"
        assert server.calls() == 3
        assert _sdks_imported_by(["grade", *args], tmp_path) == "SDKS []"
        assert _sdks_imported_by(["calibrate", *args], tmp_path) == "SDKS []"
        assert server.calls() == 3  # the warm runs were served from the cache
