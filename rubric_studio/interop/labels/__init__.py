"""Human labels in and out of the tools teams label with: CSV / JSON Lines tables (:mod:`._table`)
and Label Studio (:mod:`._label_studio`; its server's user e-mails: :mod:`._server`; a grading
report's verdicts as its predictions: :mod:`._grade_report`). Reading gives
label changes to write with :func:`rubric_studio.core.labels.apply_changes`; bad input raises
RubricError with line and column. Each module is imported on first use (:mod:`._server` brings
urllib and ssl, which only ``--label-studio-url`` needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.interop.labels._common import FIXED, ImportedLabels, SampleIds
    from rubric_studio.interop.labels._grade_report import REPORT_MAX_BYTES, GradeReport, read_grade_report
    from rubric_studio.interop.labels._label_studio import (
        TasksFile,
        labeling_config,
        read_export,
        read_users,
        tasks,
        tasks_file,
    )
    from rubric_studio.interop.labels._server import ServerError, check_server_url, check_token, server_users
    from rubric_studio.interop.labels._table import TABLE_FORMATS, export_table, read_table

#: Public name -> the private module that defines it.
_EXPORTS = {
    "FIXED": "_common",
    "ImportedLabels": "_common",
    "SampleIds": "_common",
    "GradeReport": "_grade_report",
    "REPORT_MAX_BYTES": "_grade_report",
    "read_grade_report": "_grade_report",
    "TasksFile": "_label_studio",
    "labeling_config": "_label_studio",
    "read_export": "_label_studio",
    "read_users": "_label_studio",
    "tasks": "_label_studio",
    "tasks_file": "_label_studio",
    "ServerError": "_server",
    "check_server_url": "_server",
    "check_token": "_server",
    "server_users": "_server",
    "TABLE_FORMATS": "_table",
    "export_table": "_table",
    "read_table": "_table",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
