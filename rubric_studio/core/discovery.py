"""Finding the files that belong with a rubric when the user names only the rubric.

For ``foo.yaml`` the samples are the first that exists of ``foo.samples.jsonl``,
``foo.samples.yaml``, ``foo.samples.yml``, ``foo.samples.csv``, ``foo.samples/``
or ``samples/`` beside it; the labels sidecar is ``foo.labels.yaml``.
"""

from __future__ import annotations

import os
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

__all__ = ["find_samples_for", "labels_path_for", "refuse_found_elsewhere", "SAMPLE_CANDIDATES"]


def find_samples_for(rubric_path: str | Path) -> Path | None:
    """The samples source beside a rubric, or None."""
    path = Path(rubric_path)
    for pattern in SAMPLE_CANDIDATES:
        candidate = path.with_name(pattern.format(stem=path.stem))
        if candidate.exists():
            return candidate
    return None


def refuse_found_elsewhere(rubric_path: str | Path, source: Path, *, allow_code: bool = True) -> None:
    """Raise RubricError when the samples found beside a rubric are really somewhere else.

    The user named only the rubric, so the folder decides what is graded: a ``samples``
    folder or ``foo.samples.jsonl`` that is a link to another place (``samples -> ~/Documents``),
    a hard link, or a file where credentials are kept would put that content into the judge
    requests unasked. Naming the source on the command line, or ``--allow-code``, takes it
    (``allow_code``: whether the command has that option, so the message offers it).
    """
    from rubric_studio.core.folders import outside_reason
    from rubric_studio.core.problems import Problem, RubricError

    folder = Path(rubric_path).resolve().parent
    reason = outside_reason(source.resolve(), folder)
    if reason is not None:
        trust = ", pass --allow-code to trust them for this run" if allow_code else ""
        raise RubricError([Problem(str(source), None, None, (
            f"not read: the samples found beside the rubric {reason} ({source.resolve()}); name them on the "
            f"command line{trust}, or copy them into the folder"))])


def named_link_warning(named: str | Path) -> str | None:
    """One line when a samples file or folder named on the command line is a link (or lies
    under one) whose real place is in a hidden or credentials folder the name does not show
    (``samples.jsonl -> ~/.ssh/id_rsa``, a cloned repository's ``data -> ~/.aws``). It is read
    — the user named it — but the user learns where it really points. None otherwise."""
    from rubric_studio.core.folders import credentials_folder

    shown = Path(os.path.abspath(Path(named).expanduser()))
    try:
        real = shown.resolve()
    except (OSError, RuntimeError):
        return None
    if real == shown:
        return None
    secret = credentials_folder(real)
    if secret is not None and credentials_folder(shown) is None:
        where = f"in {secret}, where credentials are kept"
    else:
        hidden = [index for index, part in enumerate(real.parts) if part.startswith(".") and part not in shown.parts]
        if not hidden:
            return None
        where = f"in the hidden folder {Path(*real.parts[: hidden[0] + 1])}"
    return f"{named} is a link to {real}, {where}; it is read because it was named on the command line"
