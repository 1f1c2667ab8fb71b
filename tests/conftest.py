"""Shared fixtures: isolated user folders (cache, secret, prices) and the bundled rubrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# Timing-based deadlines make property tests flaky on a loaded 2-core CI machine.
settings.register_profile("rubric-studio", deadline=None, print_blob=True)
settings.load_profile("rubric-studio")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_RUBRICS = ROOT / "sample_rubrics"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's cache, secret or keys."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(home / "config"))
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(home / "cache" / "judge-cache.sqlite"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """A private copy of sample_rubrics/ that tests may edit."""
    target = tmp_path / "sample_rubrics"
    shutil.copytree(SAMPLE_RUBRICS, target)
    return target
