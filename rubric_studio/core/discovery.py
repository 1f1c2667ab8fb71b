"""Finding the files that belong with a rubric when the user names only the rubric.

For ``foo.yaml`` the samples are the first that exists of ``foo.samples.jsonl``,
``foo.samples.yaml``, ``foo.samples.yml``, ``foo.samples.csv``, ``foo.samples/``
or ``samples/`` beside it; the labels sidecar is ``foo.labels.yaml``.
"""

from __future__ import annotations

from pathlib import Path

from rubric_studio.core.labels import labels_path_for

SAMPLE_CANDIDATES = (
    "{stem}.samples.jsonl",
    "{stem}.samples.yaml",
    "{stem}.samples.yml",
    "{stem}.samples.csv",
    "{stem}.samples.json",
    "{stem}.samples",
    "samples",
)

__all__ = ["find_samples_for", "labels_path_for", "SAMPLE_CANDIDATES"]


def find_samples_for(rubric_path: str | Path) -> Path | None:
    """The samples source beside a rubric, or None."""
    path = Path(rubric_path)
    for pattern in SAMPLE_CANDIDATES:
        candidate = path.with_name(pattern.format(stem=path.stem))
        if candidate.exists():
            return candidate
    return None
