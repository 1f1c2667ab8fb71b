"""The import/export format names the command line offers, read from the format registry.

Listing the formats reads the plugins' entry points; a plugin that is skipped is said once on
stderr as ``warning: ...`` (not as a Python warning with a source line).
"""

from __future__ import annotations

import sys
import warnings


def format_names(direction: str) -> list[str]:
    """The registered formats that can ``"export"`` or ``"import"``, in registration order."""
    from rubric_studio.cli.common import echo
    from rubric_studio.interop import FORMATS, FormatPluginWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FormatPluginWarning)
        names = FORMATS.exporters() if direction == "export" else FORMATS.importers()
    for warning in caught:
        if issubclass(warning.category, FormatPluginWarning):
            echo(f"warning: {warning.message}", sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return names
