"""Import and export rubrics for the eval tools people already run (docs/how-to/interop.md).

One module per format (:mod:`.agentv`, :mod:`.promptfoo`, :mod:`.letta`,
:mod:`.docent`, :mod:`.healthbench`, :mod:`.markdown`), each registered once in
:data:`FORMATS` (:mod:`._formats`; plugins add theirs through the ``rubric_studio.formats``
entry points); each module's docstring says how the tool scores and how our meaning is kept. Anything a target cannot
express comes back as a warning naming the criterion — never dropped silently.

The studio and the CLI call just these::

    from rubric_studio.interop import FORMATS, export_rubric, import_rubric, rubric_to_yaml

    result = export_rubric(rubric, "promptfoo")      # ExportResult(text, warnings, suggested_suffix)
    imported = import_rubric("suite.yaml")           # ImportResult(rubric, warnings, detected)
    yaml_text = rubric_to_yaml(imported.rubric)

Bad foreign input raises :class:`rubric_studio.core.problems.RubricError` whose
problems carry file, line and column.
"""

from __future__ import annotations

from pathlib import Path

from rubric_studio._lazy import public_dir
from rubric_studio.core.files import read_user_file
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.trust import NO_TRUST, Trust
from rubric_studio.interop._common import ExportRefused, Source, Warnings
from rubric_studio.interop._formats import (
    ENTRY_POINT_GROUP,
    FORMATS,
    ExportResult,
    FormatInfo,
    FormatPluginWarning,
    FormatRegistry,
    ImportResult,
)
from rubric_studio.interop.native import rubric_to_yaml

__all__ = ["ENTRY_POINT_GROUP", "FORMATS", "ExportRefused", "ExportResult", "FormatInfo", "FormatPluginWarning",
           "FormatRegistry", "ImportResult", "export_rubric", "import_rubric", "rubric_to_yaml"]


def export_rubric(rubric: Rubric, target: str, **options: object) -> ExportResult:
    """Write ``rubric`` for ``target`` (a key of :data:`FORMATS`); ``options`` are the target's own
    (``agentv_version=4|5``, ``samples=`` for promptfoo and AgentV). Raises :class:`ExportRefused`
    when the target cannot hold the rubric. Write :attr:`ExportResult.files` beside the exported file.

    Returns:
        An :class:`ExportResult` (``.text``, ``.warnings``, ``.files``).
    Raises:
        ValueError: an unknown ``target``.
        ExportRefused: the target cannot hold the rubric.
    """
    info = FORMATS.get(target)
    if info is None or not info.can_export:
        raise ValueError(f"unknown export target {target!r}; expected one of: {', '.join(FORMATS.exporters())}")
    return info.export(rubric, **options)


def _read(path_or_text: str | Path, name: str | None) -> tuple[str, str, Path | None]:
    """(text, file name for messages, base folder) of a path or of literal text."""
    if isinstance(path_or_text, Path) or ("\n" not in path_or_text and len(path_or_text) < 4096
                                          and Path(path_or_text).is_file()):
        path = Path(path_or_text)
        return read_user_file(path, "file"), str(path), path.resolve().parent
    return str(path_or_text), name or "<text>", None


def import_rubric(path_or_text: str | Path, source: str = "auto", *, name: str | None = None,
                  trust: Trust = NO_TRUST) -> ImportResult:
    """Read a rubric from a foreign file (a :class:`~pathlib.Path`, or a str naming an existing file)
    or from its text; ``source`` is a format name or ``"auto"``. ``name`` labels text in messages.
    ``trust`` says which files outside the file's folder it may read (a Letta ``prompt_path``):
    by the rubric trust rule (:mod:`rubric_studio.core.trust`), none unless trusted.

    Returns:
        An :class:`ImportResult`: the rubric, the warnings (what did not carry over) and the format read.
    Raises:
        RubricError: an empty, unreadable or malformed file, with positions.
        ValueError: an unknown ``source``.
    """
    from rubric_studio.interop import detect

    if source != "auto" and (source not in FORMATS or not FORMATS[source].can_import):
        importable = FORMATS.importers()
        raise ValueError(f"unknown import source {source!r}; expected auto or one of: {', '.join(importable)}")
    text, file, base_dir = _read(path_or_text, name)
    if not text.strip():
        raise RubricError([Problem(file, 1, 1, "the file is empty")])
    warn = Warnings()
    fmt = source
    if fmt == "auto":
        detect.refuse_unknown_suffix(file)
        fmt = detect.detect_text(text, file) or ""
    if fmt and FORMATS[fmt].reads_text:
        rubric = FORMATS[fmt].import_(Source(text, file, base_dir=base_dir), warn)
        return ImportResult(rubric, warn.items, fmt)
    parsed = Source.parse_yaml(text, file, base_dir, trust)
    if not fmt:
        fmt = detect.detect_data(parsed.data, file)
    if fmt == "native":
        from rubric_studio.core.loading import parse_rubric

        warn.add("this is already a rubric-studio rubric; nothing to convert")
        return ImportResult(parse_rubric(text, file, base_dir=base_dir), warn.items, "native")
    rubric = FORMATS[fmt].import_(parsed, warn)
    return ImportResult(rubric, warn.items, fmt)


__dir__ = public_dir(__name__)
