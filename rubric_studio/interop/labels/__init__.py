"""Human labels in and out of the tools teams label with: CSV / JSON Lines tables (:mod:`._table`)
and Label Studio (:mod:`._label_studio`). Reading gives label changes to write with
:func:`rubric_studio.core.labels.apply_changes`; bad input raises RubricError with line and column.
"""

from __future__ import annotations

from rubric_studio.interop.labels._common import FIXED, ImportedLabels
from rubric_studio.interop.labels._label_studio import labeling_config, read_export, read_users, tasks
from rubric_studio.interop.labels._table import TABLE_FORMATS, export_table, read_table

__all__ = ["FIXED", "TABLE_FORMATS", "ImportedLabels", "export_table", "labeling_config", "read_export",
           "read_table", "read_users", "tasks"]
