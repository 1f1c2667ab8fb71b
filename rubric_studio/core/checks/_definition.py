"""What defines a deterministic check type: :class:`CheckType`, with its editor fields
(:class:`EditorField`) and, per export format, an exporter or a :class:`CannotExport` reason.

The definitions themselves are registered in :mod:`~rubric_studio.core.checks._registry`; this
module holds only the shapes and the table of registered definitions, so that the evaluators can
find a spec's definition without importing the registry (which imports them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubric_studio.core.checks._eval import Evaluator

__all__ = ["TIMEOUT_FIELD", "CannotExport", "CheckType", "EditorField", "definition_of", "resolve"]

#: Export formats whose exporters turn a check into the target's assertions.
ASSERTION_FORMATS = ("promptfoo", "agentv")


@dataclass(frozen=True)
class EditorField:
    """One control of the editor's check form.

    ``key`` is the check parameter it edits; ``kind`` how its text is read (int, float, bool,
    text, json, json-value, pattern, flags, function, command, words, choice); ``choices`` the
    values of a choice. A bool or choice equal to ``default`` removes the key.
    """

    key: str
    kind: str = "text"
    label: str = ""
    hint: str = ""
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()


#: The timeout control every check type shares (last in the form).
TIMEOUT_FIELD = EditorField("timeout", "float", "timeout", "seconds", above=0, maximum=600)


@dataclass(frozen=True)
class CannotExport:
    """A format that cannot express the check type: exporting it warns with ``reason``.

    ``{type}`` and ``{target}`` in the reason become the check type and the format's name.
    """

    reason: str


#: An exporter: ``(request, spec) -> assertions``, or ``"module:function"`` naming one (loaded when
#: first used, so a definition in the core can name an exporter that lives in the interop layer).
Exporter = Callable[[Any, Any], list[dict[str, Any]]] | str
#: Builds the evaluator of one spec (``base_dir`` is the rubric's folder, for code checks).
Builder = Callable[[Any, Path | None], Evaluator]


@dataclass(frozen=True)
class CheckType:
    """Everything about one check type; adding a type is adding one of these.

    ``model`` is the pydantic spec (``type: Literal[name]``, extra keys forbidden); its
    validators are the validation hints. ``fields`` are the editor's controls in order,
    ``hint`` the line beside the form's title, ``defaults`` what a new check starts with.
    ``exports`` maps a format to an exporter or a :class:`CannotExport`; a format left out
    cannot express the type either, so no export drops a check without a warning.
    ``binary`` says a met check always scores 1 (exports rely on it).
    """

    name: str
    model: type[BaseModel]
    evaluator: Builder
    hint: str = ""
    fields: tuple[EditorField, ...] = ()
    exports: Mapping[str, Exporter | CannotExport] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    binary: bool = False

    @property
    def params(self) -> tuple[str, ...]:
        """The spec's keys as written in a file, in the model's order (``type`` and ``timeout`` aside)."""
        return tuple(f.alias or n for n, f in self.model.model_fields.items() if n not in ("type", "timeout"))

    @property
    def default_timeout(self) -> float:
        return self.model.model_fields["timeout"].default

    def exporter(self, fmt: str) -> Callable[[Any, Any], list[dict[str, Any]]] | CannotExport:
        """The exporter for ``fmt``, or why the type cannot be exported there."""
        found = self.exports.get(fmt)
        if found is None:
            return CannotExport("{type} check has no {target} form; not exported")
        return resolve(found) if isinstance(found, str) else found


def resolve(reference: str) -> Any:
    """The object ``"package.module:name"`` names."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


#: name -> definition, in registration order (built-ins first). Filled by the registry.
REGISTERED: dict[str, CheckType] = {}
#: spec model -> definition.
BY_MODEL: dict[type[BaseModel], CheckType] = {}


def definition_of(spec: BaseModel) -> CheckType:
    """The registered definition of a validated spec."""
    found = BY_MODEL.get(type(spec))
    if found is None:
        raise TypeError(f"{type(spec).__name__} is not a registered check type")
    return found
