"""The import/export format names the command line offers, read from the format registry.

``--help`` lists the built-in formats and reads no plugin; a name given is checked against
every registered format, plugins included (a plugin that is skipped is said once on stderr as
``warning: ...``, see :mod:`rubric_studio.core.plugins`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def format_names(direction: str) -> list[str]:
    """The registered formats that can ``"export"`` or ``"import"``, in registration order."""
    from rubric_studio.interop import FORMATS

    return FORMATS.exporters() if direction == "export" else FORMATS.importers()


def builtin_format_names(direction: str) -> list[str]:
    """The built-in formats of ``direction``, read without any plugin."""
    from rubric_studio.interop import FORMATS

    return FORMATS.builtin_names(direction)


def format_choice(direction: str, *extra: str) -> Callable[[str], str]:
    """An argparse ``type=`` accepting a format of ``direction`` (or one of ``extra``): the
    plugins are read only when a name is checked, never for ``--help``."""

    def check(value: str) -> str:
        names = [*extra, *format_names(direction)]
        if value not in names:
            raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(names)})")
        return value

    check.__name__ = "format"
    return check
