"""The layering rules: core imports no Textual and no SDK; engine and judges no Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
            "for m in pkgutil.iter_modules(c.__path__):\n"
            "    importlib.import_module('rubric_studio.core.' + m.name)\n"
            "print('\\n'.join(sys.modules))"
        )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {name.split(".")[0] for name in out.split()}


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_layer_does_not_import_forbidden_packages(module: str):
    loaded = _loaded_after_import(module)
    leaked = [name for name in FORBIDDEN[module] if name in loaded]
    assert leaked == [], f"{module} imports {leaked}"
