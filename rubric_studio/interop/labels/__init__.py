"""Human labels in and out of the tools teams label with: CSV / JSON Lines tables (:mod:`._table`)
and Label Studio (:mod:`._label_studio`; its server's user e-mails: :mod:`._server`). Reading gives
label changes to write with :func:`rubric_studio.core.labels.apply_changes`; bad input raises
RubricError with line and column.
"""

from __future__ import annotations

from rubric_studio._lazy import public_dir
from rubric_studio.interop.labels._common import FIXED, ImportedLabels, SampleIds
from rubric_studio.interop.labels._label_studio import labeling_config, read_export, read_users, tasks
from rubric_studio.interop.labels._server import ServerError, check_server_url, check_token, server_users
from rubric_studio.interop.labels._table import TABLE_FORMATS, export_table, read_table

__all__ = ["FIXED", "TABLE_FORMATS", "ImportedLabels", "SampleIds", "ServerError", "check_server_url", "check_token",
           "export_table", "labeling_config", "read_export", "read_table", "read_users", "server_users", "tasks"]
__dir__ = public_dir(__name__)
