"""Where the code of each judge provider is, and the lookup by part.

A plugin's :class:`~rubric_studio.core.providers.Provider` names its code itself (``"module:attr"``
references). A built-in provider's code is its own module in this package, found by the
provider's name: the provider ``name`` of :data:`rubric_studio.core.providers.BUILTIN` is
``rubric_studio.judges.<name>`` (``-`` written ``_``), whose ``CODE`` maps each part to a
``"module:attr"`` reference. So a new built-in provider is that module and its ``Provider(...)``
entry; nothing else lists it.

Imports only the core's registry: the body builders and capability tables look their provider's
part up here, and the provider modules name them in turn (an import of those modules here would
make the two hold each other).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from rubric_studio.core.providers import get, load, names

#: The parts a provider's code has; ``batch`` only for a provider with a Batch API.
PARTS = ("judge", "body", "capabilities", "batch")


def builtin_module(name: str) -> str:
    """The module holding the code of the built-in provider ``name``."""
    return f"{__package__}.{name.replace('-', '_')}"


def builtin_code(name: str) -> Mapping[str, str]:
    """The ``CODE`` table (part -> ``"module:attr"``) of the built-in provider ``name``'s module.

    Raises:
        ValueError: naming the module and what it must define, when it is missing or defines no table.
    """
    module_name = builtin_module(name)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        module = None
    table = getattr(module, "CODE", None)
    if not isinstance(table, Mapping):
        where = module_name.replace(".", "/") + ".py"
        raise ValueError(f"built-in judge provider {name!r} has no code: {where} must define CODE, "
                         f"a dict of {', '.join(PARTS)} -> \"module:attr\"")  # fmt: skip
    return table


def code(name: str, part: str) -> Any:
    """The ``part`` (``judge``, ``batch``, ``body``, ``capabilities``) of the provider ``name``,
    loaded. ValueError for a provider not registered or a part it does not have."""
    provider = get(name)
    reference = None
    if provider is not None:
        own = builtin_code(provider.name) if provider.origin == "built-in" else {}
        reference = own.get(part) or getattr(provider, part, None)
    if not reference:
        raise ValueError(f"judge provider {name!r} has no {part}; registered: {', '.join(names())}")
    return load(reference)
