"""Package surfaces that import their private modules on first use.

A package's ``__init__`` names what it offers and which private module defines it; the module is
imported only when a name is first used, so importing a package costs nothing and no two packages
depend on each other's import order (the pattern of Textual's ``textual.widgets``)::

    if TYPE_CHECKING:
        from package._document import RubricDocument
        from package._merge import merge3

    _EXPORTS = {"RubricDocument": "_document", "merge3": "_merge"}
    __all__ = list(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

``dir(package)`` (and so tab completion) lists the public names only, and
``from package import *`` imports exactly ``__all__``. ``_EXPORTS`` is the one list: ``__all__``
is read from it, and the ``if TYPE_CHECKING:`` block (for type checkers, which do not run
``__getattr__``) imports the same names from the same modules, as a test checks. The top-level
package alone writes its ``__all__`` out: the documentation's API page reads it from the source.
A package that only groups modules names them with :func:`lazy_submodules`; a package that
imports eagerly takes :func:`public_dir`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports", "lazy_submodules", "public_dir"]


def public_dir(package: str) -> Callable[[], list[str]]:
    """A ``__dir__`` for ``package`` that lists its ``__all__``, sorted.

    Returns:
        The function to assign to the package's ``__dir__``.
    Raises:
        Nothing here; the returned function raises ``KeyError`` if ``package`` is not imported.
    """

    def __dir__() -> list[str]:
        return sorted(getattr(sys.modules[package], "__all__", ()))

    return __dir__


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each exported name is read from its private
    module (relative to ``package``) on first use and then kept in the package's namespace.

    Returns:
        ``(__getattr__, __dir__)``; ``__dir__`` lists the exported names and ``__all__``, nothing
        private and none of the names the package's own imports bring in.
    Raises:
        The returned ``__getattr__`` raises ``AttributeError`` for a name that is not exported, and
        whatever importing the defining module raises.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(exports) | set(getattr(sys.modules[package], "__all__", ())))

    return __getattr__, __dir__


def lazy_submodules(package: str, names: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package that groups modules: ``package.name`` imports
    the submodule ``name`` on first use.

    Returns:
        ``(__getattr__, __dir__)``; ``__dir__`` lists ``names``.
    Raises:
        The returned ``__getattr__`` raises ``AttributeError`` for a name not in ``names``.
    """
    public = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in public:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return importlib.import_module(f"{package}.{name}")

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
