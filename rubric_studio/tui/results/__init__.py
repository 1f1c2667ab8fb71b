"""The studio's results: the samples × criteria matrix (virtualised), its layout, navigation and
rendering, the results pane and the cell inspector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.tui.results._inspector import (
        Inspector,
        evidence_lines,
        input_highlighted,
        source_words,
    )
    from rubric_studio.tui.results._layout import Column, plan_layout, share
    from rubric_studio.tui.results._matrix import (
        CRIT_MIN,
        HEADER_LINES,
        ID_COMPACT,
        ID_MAX,
        ResultsMatrix,
        cell_mark,
        cell_text,
        column_title,
        fit,
        squeeze,
        verdict_mark,
    )
    from rubric_studio.tui.results._pane import ResultsPane

#: Public name -> the private module that defines it.
_EXPORTS = {
    "cell_mark": "_matrix",
    "cell_text": "_matrix",
    "Column": "_layout",
    "column_title": "_matrix",
    "CRIT_MIN": "_matrix",
    "evidence_lines": "_inspector",
    "fit": "_matrix",
    "HEADER_LINES": "_matrix",
    "ID_COMPACT": "_matrix",
    "ID_MAX": "_matrix",
    "input_highlighted": "_inspector",
    "Inspector": "_inspector",
    "plan_layout": "_layout",
    "ResultsMatrix": "_matrix",
    "ResultsPane": "_pane",
    "share": "_layout",
    "source_words": "_inspector",
    "squeeze": "_matrix",
    "verdict_mark": "_matrix",
}
__all__ = [
    "cell_mark",
    "cell_text",
    "Column",
    "column_title",
    "CRIT_MIN",
    "evidence_lines",
    "fit",
    "HEADER_LINES",
    "ID_COMPACT",
    "ID_MAX",
    "input_highlighted",
    "Inspector",
    "plan_layout",
    "ResultsMatrix",
    "ResultsPane",
    "share",
    "source_words",
    "squeeze",
    "verdict_mark",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
