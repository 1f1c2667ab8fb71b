"""Writing a grading run's report: table, JSON/JSONL streams, Markdown, JUnit, HTML (where it goes:
:mod:`rubric_studio.cli.output`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.cli.report._formats import failure_message, usage_text
    from rubric_studio.cli.report._humans import annotator_labels, humans_section, render_humans
    from rubric_studio.cli.report._json_stream import JsonlSink, JsonSink
    from rubric_studio.cli.report._pass_rate import StreamedRateLabels, rate_labels
    from rubric_studio.cli.report._run import report_run, say_member_failures, say_stopped

#: Public name -> the private module that defines it.
_EXPORTS = {
    "annotator_labels": "_humans",
    "failure_message": "_formats",
    "humans_section": "_humans",
    "JsonlSink": "_json_stream",
    "JsonSink": "_json_stream",
    "rate_labels": "_pass_rate",
    "StreamedRateLabels": "_pass_rate",
    "render_humans": "_humans",
    "report_run": "_run",
    "say_member_failures": "_run",
    "say_stopped": "_run",
    "usage_text": "_formats",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
