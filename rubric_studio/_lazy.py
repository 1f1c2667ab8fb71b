"""Package surfaces that import their private modules on first use.

A package's ``__init__`` names what it offers and which private module defines it; the module is
imported only when a name is first used, so importing a package costs nothing and no two packages
depend on each other's import order (the pattern of Textual's ``textual.widgets``)::

    _EXPORTS = {"RubricDocument": "_document", "merge3": "_merge"}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each exported name is read from its private
    module (relative to ``package``) on first use and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(exports) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
