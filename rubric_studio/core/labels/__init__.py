"""Human labels: the ``<rubric>.labels.yaml`` sidecar and ``label`` fields of samples, read and
edited in place with comments kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.core.labels._labels import (
        Label,
        LabelChange,
        labels_from_samples,
        labels_path_for,
        load_labels,
        parse_label,
    )
    from rubric_studio.core.labels._store import apply_change, insert_key, round_trip_yaml, set_verdict

#: Public name -> the private module that defines it.
_EXPORTS = {
    "apply_change": "_store",
    "insert_key": "_store",
    "Label": "_labels",
    "LabelChange": "_store",
    "labels_from_samples": "_labels",
    "labels_path_for": "_labels",
    "load_labels": "_labels",
    "parse_label": "_labels",
    "round_trip_yaml": "_store",
    "set_verdict": "_store",
}
__all__ = [
    "apply_change",
    "insert_key",
    "Label",
    "LabelChange",
    "labels_from_samples",
    "labels_path_for",
    "load_labels",
    "parse_label",
    "round_trip_yaml",
    "set_verdict",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
