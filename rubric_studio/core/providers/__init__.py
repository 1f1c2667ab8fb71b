"""Judge providers as data: one :class:`Provider` per provider, built in or from an entry point.

The core reads the declarative part (names, key and base-URL variables, defaults, prices);
the judges layer finds the code (a built-in's own module there, a plugin's ``"module:attr"``
references) when a judge is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.core.providers._builtin import BUILTIN
    from rubric_studio.core.providers._registry import (
        BASE_URL_VARS,
        GROUP,
        KEY_FAMILY,
        KEY_VARS,
        KEYLESS,
        builtin_names,
        family,
        find,
        forget_plugins,
        get,
        key_order,
        load,
        markdown_table,
        names,
        normalize_name,
        registered,
        unknown,
    )
    from rubric_studio.core.providers._spec import STRUCTURED_OUTPUTS, Alias, Provider

#: Public name -> the private module that defines it.
_EXPORTS = {
    "Alias": "_spec",
    "BASE_URL_VARS": "_registry",
    "BUILTIN": "_builtin",
    "builtin_names": "_registry",
    "family": "_registry",
    "find": "_registry",
    "forget_plugins": "_registry",
    "get": "_registry",
    "GROUP": "_registry",
    "KEY_FAMILY": "_registry",
    "key_order": "_registry",
    "KEY_VARS": "_registry",
    "KEYLESS": "_registry",
    "load": "_registry",
    "markdown_table": "_registry",
    "names": "_registry",
    "normalize_name": "_registry",
    "Provider": "_spec",
    "registered": "_registry",
    "STRUCTURED_OUTPUTS": "_spec",
    "unknown": "_registry",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
