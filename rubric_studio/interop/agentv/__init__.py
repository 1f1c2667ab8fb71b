"""AgentV eval files: export (v4 and v5 shapes, samples as replay test cases) and import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.interop.agentv._agentv import CATALOG_FILE, CONFIG_FILE, export
    from rubric_studio.interop.agentv._read import import_
    from rubric_studio.interop.agentv._samples import FIXTURE_SCHEMA, SAMPLES_TARGET, fixtures_name

#: Public name -> the private module that defines it.
_EXPORTS = {
    "CATALOG_FILE": "_agentv",
    "CONFIG_FILE": "_agentv",
    "export": "_agentv",
    "FIXTURE_SCHEMA": "_samples",
    "fixtures_name": "_samples",
    "import_": "_read",
    "SAMPLES_TARGET": "_samples",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
