"""The studio's results: the samples × criteria matrix (virtualised), its layout, navigation and
rendering, the results pane and the cell inspector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.tui.results._inspector import (
        Inspector,
        evidence_lines,
        input_highlighted,
        source_words,
    )
    from rubric_studio.tui.results._layout import Column, plan_layout, share
    from rubric_studio.tui.results._matrix import HEADER_LINES, ResultsMatrix
    from rubric_studio.tui.results._pane import ResultsPane
    from rubric_studio.tui.results._probe_view import ADDED_STYLE, ProbeFindings, probe_text
    from rubric_studio.tui.results._text import (
        CRIT_MIN,
        ID_COMPACT,
        ID_MAX,
        cell_mark,
        cell_text,
        column_title,
        fit,
        squeeze,
        verdict_mark,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "ADDED_STYLE": "_probe_view",
    "cell_mark": "_text",
    "cell_text": "_text",
    "Column": "_layout",
    "column_title": "_text",
    "CRIT_MIN": "_text",
    "evidence_lines": "_inspector",
    "fit": "_text",
    "HEADER_LINES": "_matrix",
    "ID_COMPACT": "_text",
    "ID_MAX": "_text",
    "input_highlighted": "_inspector",
    "Inspector": "_inspector",
    "plan_layout": "_layout",
    "probe_text": "_probe_view",
    "ProbeFindings": "_probe_view",
    "ResultsMatrix": "_matrix",
    "ResultsPane": "_pane",
    "share": "_layout",
    "source_words": "_inspector",
    "squeeze": "_text",
    "verdict_mark": "_text",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
