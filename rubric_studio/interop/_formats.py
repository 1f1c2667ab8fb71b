"""The import/export formats: one registered definition each, every list derived from them.

A format is a :class:`FormatInfo`: its name, title, file suffix, a one-line description, and
where its exporter, importer and content detector live, written ``"module:attribute"`` so
nothing is imported until the format is used. The command line's ``--to`` / ``--from``
choices, the studio's export and import commands and :func:`rubric_studio.interop.export_rubric`
/ :func:`~rubric_studio.interop.import_rubric` all read :data:`FORMATS`.

Other packages add formats through the entry-point group ``rubric_studio.formats``; each entry
point names a :class:`FormatInfo`::

    # pyproject.toml of a plugin
    [project.entry-points."rubric_studio.formats"]
    house = "house_format:FORMAT"

Entry points are read when the formats are first listed. One that cannot be loaded, is not a
:class:`FormatInfo`, or reuses a built-in name is skipped with one ``warning:`` line
(:mod:`rubric_studio.core.plugins`).

An exporter is ``export(rubric, **options) -> ExportResult``; an importer is
``import_(source, warn) -> Rubric`` (``source`` a parsed :class:`~rubric_studio.interop._common.Source`,
or its raw text when ``reads_text``); a detector is ``detect(data, file) -> bool`` over the parsed
YAML/JSON, asked when the built-in rules of :mod:`rubric_studio.interop.detect` do not decide.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.rubric import Rubric

#: The entry-point group third-party formats register under.
ENTRY_POINT_GROUP = "rubric_studio.formats"


class FormatPluginWarning(UserWarning):
    """Kept for code that filters it; a skipped format plugin is now said as one ``warning:``
    line (:mod:`rubric_studio.core.plugins`)."""


@dataclass
class ExportResult:
    """A rubric written for another tool: what every exporter returns."""

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


def _resolve(reference: str | Callable[..., Any]) -> Callable[..., Any]:
    """The callable a ``"module:attribute"`` reference names (a callable is returned as is)."""
    if callable(reference):
        return reference
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class FormatInfo:
    """One import/export format: what it is, which directions it supports, where its code lives.

    ``exporter`` / ``importer`` / ``detector`` / ``companion_name`` are ``"module:attribute"``
    strings (imported on first use) or callables. ``samples`` says whether the export carries
    the samples beside the rubric as the target's test cases; ``companion_name(output_name)``,
    when set, names the file beside the export that holds them (so they need ``-o FILE``).
    """

    name: str
    title: str
    suffix: str
    description: str
    exporter: str | Callable[..., Any] | None = None
    importer: str | Callable[..., Any] | None = None
    detector: str | Callable[..., Any] | None = None
    reads_text: bool = False
    samples: bool = False
    companion_name: str | Callable[[str], str] | None = None

    @property
    def can_export(self) -> bool:
        return self.exporter is not None

    @property
    def can_import(self) -> bool:
        return self.importer is not None

    def export(self, rubric: Rubric, **options: Any) -> ExportResult:
        """Run the exporter; the result carries this format's suffix."""
        if self.exporter is None:
            raise ValueError(f"format {self.name!r} cannot export")
        result = _resolve(self.exporter)(rubric, **options)
        if not isinstance(result, ExportResult):
            raise TypeError(f"the {self.name} exporter returned {type(result).__name__}, not ExportResult")
        result.suggested_suffix = result.suggested_suffix or self.suffix
        return result

    def import_(self, source: Any, warn: Any) -> Rubric:
        """Run the importer on a parsed source (raw text when ``reads_text``)."""
        if self.importer is None:
            raise ValueError(f"format {self.name!r} cannot import")
        return _resolve(self.importer)(source, warn)

    def detect(self, data: Any, file: str) -> bool:
        """True when the parsed ``data`` is this format's (False without a detector)."""
        return bool(self.detector is not None and _resolve(self.detector)(data, file))

    def companion_for(self, output_name: str) -> str | None:
        """The companion file's name beside an export written as ``output_name`` (None: no companion)."""
        return None if self.companion_name is None else _resolve(self.companion_name)(output_name)


_I = "rubric_studio.interop"
BUILTIN: tuple[FormatInfo, ...] = (
    FormatInfo("agentv", "AgentV", ".eval.yaml", "AgentV eval file: assert strings and llm-rubric criteria",
               f"{_I}.agentv:export", f"{_I}.agentv:import_", samples=True,
               companion_name=f"{_I}.agentv:fixtures_name"),
    FormatInfo("promptfoo", "promptfoo", ".promptfooconfig.yaml",
               "promptfoo config: llm-rubric and deterministic asserts",
               f"{_I}.promptfoo:export", f"{_I}.promptfoo:import_", samples=True),
    FormatInfo("letta", "Letta evals", ".suite.yaml", "Letta evals suite with a model_judge grader",
               f"{_I}.letta:export", f"{_I}.letta:import_", f"{_I}.detect:is_letta"),
    FormatInfo("docent", "Docent", ".docent.json", "Docent rubric: rubric_text, output_schema, judge_model",
               f"{_I}.docent:export", f"{_I}.docent:import_", f"{_I}.detect:is_docent"),
    FormatInfo("healthbench", "HealthBench", ".healthbench.jsonl", "HealthBench rubric items (criterion, points, tags)",
               f"{_I}.healthbench:export", f"{_I}.healthbench:import_", f"{_I}.detect:is_healthbench",
               reads_text=True),
    FormatInfo("markdown", "Markdown", ".md", "review table for pull requests", f"{_I}.markdown:export"),
)


class FormatRegistry(Mapping[str, FormatInfo]):
    """Format name -> :class:`FormatInfo`: the built-ins, then what :meth:`register` and the
    ``rubric_studio.formats`` entry points add (read on first use)."""

    def __init__(self, builtin: tuple[FormatInfo, ...] = BUILTIN, group: str = ENTRY_POINT_GROUP) -> None:
        self._formats = {info.name: info for info in builtin}
        self._builtin = frozenset(self._formats)
        self._group = group
        self._plugins_loaded = False

    def register(self, info: FormatInfo) -> None:
        """Add a format; a built-in name cannot be replaced (ValueError)."""
        if not isinstance(info, FormatInfo):
            raise TypeError(f"expected a FormatInfo, not {type(info).__name__}")
        if info.name in self._builtin:
            raise ValueError(f"format {info.name!r} is built in and cannot be replaced")
        self._formats[info.name] = info

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin

    def builtin_names(self, direction: str) -> list[str]:
        """The built-in formats that can ``"export"`` or ``"import"`` (no plugin is read: for ``--help``)."""
        infos = [info for name, info in self._formats.items() if name in self._builtin]
        return [info.name for info in infos if (info.can_export if direction == "export" else info.can_import)]

    def exporters(self) -> list[str]:
        """The names ``export`` accepts, in registration order."""
        return [name for name, info in self.items() if info.can_export]

    def importers(self) -> list[str]:
        """The names ``import --from`` accepts (besides ``auto``), in registration order."""
        return [name for name, info in self.items() if info.can_import]

    def __getitem__(self, name: str) -> FormatInfo:
        self._load_plugins()
        return self._formats[name]

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(list(self._formats))

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._formats)

    def _load_plugins(self) -> None:
        """Register the entry points of :attr:`_group` once, warning once about each one skipped."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        from rubric_studio.core.plugins import load_contained

        def register(loaded: Any) -> str | None:
            try:
                self.register(loaded)
            except (TypeError, ValueError) as exc:  # not a FormatInfo, a name taken ...: the message says
                return str(exc)
            return None

        for point in entry_points(group=self._group):
            load_contained("format", point, register)


#: Every format rubric-studio knows, built in or registered.
FORMATS = FormatRegistry()
