"""Import and export rubrics for the eval tools people already run (BRIEF §6).

One module per format (:mod:`.agentv`, :mod:`.promptfoo`, :mod:`.letta`,
:mod:`.docent`, :mod:`.healthbench`, :mod:`.markdown`); each module's docstring
says how the tool scores and how our meaning is kept. Anything a target cannot
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

from dataclasses import dataclass, field
from pathlib import Path

from rubric_studio.core.files import read_user_file
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.trust import NO_TRUST, Trust
from rubric_studio.interop._common import ExportRefused, Source, Warnings
from rubric_studio.interop.native import rubric_to_yaml

__all__ = ["FORMATS", "ExportRefused", "ExportResult", "FormatInfo", "ImportResult", "export_rubric",
           "import_rubric", "rubric_to_yaml"]


@dataclass(frozen=True)
class FormatInfo:
    """What a format is and which directions it supports."""

    name: str
    title: str
    can_export: bool
    can_import: bool
    suffix: str
    description: str


FORMATS: dict[str, FormatInfo] = {
    "agentv": FormatInfo("agentv", "AgentV", True, True, ".eval.yaml",
                         "AgentV eval file: assert strings and llm-rubric criteria"),
    "promptfoo": FormatInfo("promptfoo", "promptfoo", True, True, ".promptfooconfig.yaml",
                            "promptfoo config: llm-rubric and deterministic asserts"),
    "letta": FormatInfo("letta", "Letta evals", True, True, ".suite.yaml",
                        "Letta evals suite with a model_judge grader"),
    "docent": FormatInfo("docent", "Docent", True, True, ".docent.json",
                         "Docent rubric: rubric_text, output_schema, judge_model"),
    "healthbench": FormatInfo("healthbench", "HealthBench", True, True, ".healthbench.jsonl",
                              "HealthBench rubric items (criterion, points, tags)"),
    "markdown": FormatInfo("markdown", "Markdown", True, False, ".md", "review table for pull requests"),
}


@dataclass
class ExportResult:
    """A rubric written for another tool."""

    text: str
    warnings: list[str] = field(default_factory=list)
    suggested_suffix: str = ""
    #: Companion files the exported file names, by name relative to it (AgentV's replay fixtures).
    files: dict[str, str] = field(default_factory=dict)


@dataclass
class ImportResult:
    """A rubric read from another tool's file."""

    rubric: Rubric
    warnings: list[str] = field(default_factory=list)
    detected: str = ""


def _module(name: str):
    from importlib import import_module

    return import_module(f"rubric_studio.interop.{name}")


def export_rubric(rubric: Rubric, target: str, **options: object) -> ExportResult:
    """Write ``rubric`` for ``target`` (a key of :data:`FORMATS`); ``options`` are the target's own
    (``agentv_version=4|5``, ``samples=`` for promptfoo and AgentV). Raises :class:`ExportRefused`
    when the target cannot hold the rubric. Write :attr:`ExportResult.files` beside the exported file."""
    info = FORMATS.get(target)
    if info is None or not info.can_export:
        raise ValueError(f"unknown export target {target!r}; expected one of: {', '.join(FORMATS)}")
    text, warnings, *rest = _module(target).export(rubric, **options)
    return ExportResult(text, list(warnings), info.suffix, dict(rest[0]) if rest else {})


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
    by the rubric trust rule (:mod:`rubric_studio.core.trust`), none unless trusted."""
    from rubric_studio.interop import detect

    if source != "auto" and (source not in FORMATS or not FORMATS[source].can_import):
        importable = [name for name, info in FORMATS.items() if info.can_import]
        raise ValueError(f"unknown import source {source!r}; expected auto or one of: {', '.join(importable)}")
    text, file, base_dir = _read(path_or_text, name)
    if not text.strip():
        raise RubricError([Problem(file, 1, 1, "the file is empty")])
    warn = Warnings()
    fmt = source
    if fmt == "auto":
        detect.refuse_unknown_suffix(file)
        fmt = detect.detect_text(text, file) or ""
    if fmt == "healthbench":
        rubric = _module("healthbench").import_(Source(text, file, base_dir=base_dir), warn)
        return ImportResult(rubric, warn.items, "healthbench")
    parsed = Source.parse_yaml(text, file, base_dir, trust)
    if not fmt:
        fmt = detect.detect_data(parsed.data, file)
    if fmt == "native":
        from rubric_studio.core.loading import parse_rubric

        warn.add("this is already a rubric-studio rubric; nothing to convert")
        return ImportResult(parse_rubric(text, file, base_dir=base_dir), warn.items, "native")
    rubric = _module(fmt).import_(parsed, warn)
    return ImportResult(rubric, warn.items, fmt)
