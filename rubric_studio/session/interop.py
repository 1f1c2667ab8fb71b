"""Export and import as session commands: what to write where, and what did not carry over.

* :func:`plan_export` turns the saved rubric (what is graded) into another tool's file,
  ``<stem><suffix>`` beside the rubric, with the warnings about what the target cannot express.
* :func:`plan_import` turns an imported rubric into a native one, ``<stem>.imported.yaml``
  beside the source, with the command that opens it.
* :func:`write_file` writes either one atomically, never over a file that changed since the
  user saw it (the UI asks before replacing an existing file, whose
  :func:`~rubric_studio.core.atomic.disk_state` it read first).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rubric_studio.core.atomic import ChangedOnDisk, DiskState, write_text_safely
from rubric_studio.interop import FORMATS, ImportResult, export_rubric, rubric_to_yaml

if TYPE_CHECKING:
    from rubric_studio.session.studio import StudioSession

IMPORT_SUFFIX = ".imported.yaml"


class InteropRefused(Exception):
    """An export or import that cannot be done, with the reason to show and how loudly."""

    def __init__(self, message: str, severity: str = "error") -> None:
        super().__init__(message)
        self.severity = severity


@dataclass(frozen=True)
class FilePlan:
    """A file to write: where, what, and what the user should know about it."""

    path: Path
    text: str
    title: str  # the other tool's name
    warnings: list[str] = field(default_factory=list)
    unsaved_edits: bool = False  # an export of the saved rubric while the editor holds edits
    command: str = ""  # the command that opens an imported rubric


def shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def export_target(rubric_path: Path, target: str) -> Path:
    return rubric_path.with_name(rubric_path.stem + FORMATS[target].suffix)


def import_target(source: Path) -> Path:
    return source.with_name(source.stem + IMPORT_SUFFIX)


def plan_export(session: StudioSession, target: str) -> FilePlan:
    """The file exporting the saved rubric for ``target`` (a key of FORMATS) would write."""
    info = FORMATS[target]
    rubric = session.rubric
    if rubric is None or session.file_problems.get("rubric"):
        raise InteropRefused("The rubric has problems (see the banner): fix them before exporting.")
    try:
        result = export_rubric(rubric, target)
    except Exception as exc:  # an exporter bug must be a message, not a traceback
        raise InteropRefused(f"Export to {info.title} failed: {exc}") from None
    return FilePlan(export_target(session.rubric_path, target), result.text, info.title, list(result.warnings),
                    unsaved_edits=session.document.dirty)


def resolve_import_path(session: StudioSession, text: str) -> Path | None:
    """The file a typed path names: as typed (from the working directory), else beside the rubric."""
    if not text:
        return None
    path = Path(os.path.expanduser(text))
    candidates = [path] if path.is_absolute() else [path, session.rubric_path.parent / path]
    return next((c for c in candidates if c.is_file()), None)


def plan_import(source: Path, result: ImportResult) -> FilePlan:
    """The native rubric file an import of ``source`` writes."""
    try:
        text = rubric_to_yaml(result.rubric)
    except Exception as exc:
        raise InteropRefused(f"Could not convert {shown_path(source)}: {exc}") from None
    path = import_target(source)
    title = FORMATS[result.detected].title if result.detected in FORMATS else (result.detected or "unknown")
    return FilePlan(path, text, title, list(result.warnings),
                    command=f"rubric-studio {shlex.quote(shown_path(path))}")


def write_file(plan: FilePlan, expect: DiskState) -> None:
    """Write ``plan`` only while ``path`` is still as ``expect`` (InteropRefused otherwise)."""
    try:
        write_text_safely(plan.path, plan.text, expect=expect)
    except ChangedOnDisk:
        raise InteropRefused(f"{shown_path(plan.path)} changed on disk meanwhile; nothing written "
                             "(export again to replace it).", "warning") from None
    except OSError as exc:
        raise InteropRefused(f"Could not write {shown_path(plan.path)}: {exc}") from None
