"""Bounded YAML 1.2 loading (aliases, depth, size) that remembers where every value came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.yamlpos._compose import YamlLimits
    from rubric_studio.core.yamlpos._fast import load_plain
    from rubric_studio.core.yamlpos._load import Positions, load_with_positions, safe_load
    from rubric_studio.core.yamlpos._scalars import misread_by_yaml11, needs_double_quotes

#: Public name -> the private module that defines it.
_EXPORTS = {
    "load_plain": "_fast",
    "load_with_positions": "_load",
    "misread_by_yaml11": "_scalars",
    "needs_double_quotes": "_scalars",
    "Positions": "_load",
    "safe_load": "_load",
    "YamlLimits": "_compose",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
