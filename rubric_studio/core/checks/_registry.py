"""The registry of check types: the built-ins, then third-party types from the entry-point group
``rubric_studio.checks``, loaded once, the first time anything asks which types exist.

Every list of check types derives from here: the ``check:`` validation (:data:`CheckSpec`),
the loader's hints and "did you mean", the document's key order, the editor's fields and the
exports. A plugin's entry point names a :class:`CheckType` (or a list of them, or a function
returning either). A plugin that fails to load, or whose definition is wrong, is skipped with
one ``warning:`` line (:mod:`rubric_studio.core.plugins`); it cannot replace a type that is
already registered. Checking a ``check:`` of a built-in type reads no plugin: the entry points
are read when a type is not a built-in one, or when every type is listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, get_args

from pydantic import PlainValidator, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from rubric_studio.core.checks._builtin import BUILTIN
from rubric_studio.core.checks._definition import BY_MODEL, REGISTERED, CheckType
from rubric_studio.core.checks._spec import CheckModel

__all__ = [
    "CHECK_TYPES",
    "ENTRY_POINT_GROUP",
    "CheckPluginWarning",
    "CheckSpec",
    "LiveMapping",
    "LiveSequence",
    "check_type",
    "check_types",
    "refresh_plugins",
    "register",
]

ENTRY_POINT_GROUP = "rubric_studio.checks"
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_state = {"builtin": False, "loaded": False, "version": 0}


class CheckPluginWarning(UserWarning):
    """Kept for code that filters it; a skipped plugin is now said as one ``warning:`` line
    (:mod:`rubric_studio.core.plugins`)."""


def _invalid(definition: Any) -> str | None:
    """Why ``definition`` cannot be registered, or None."""
    if not isinstance(definition, CheckType):
        return f"expected a CheckType, got {type(definition).__name__}"
    if not isinstance(definition.name, str) or not _NAME.match(definition.name):
        return f"check type name {definition.name!r} is not lower_snake_case"
    if definition.name in REGISTERED:
        return f"check type {definition.name!r} is already registered; a plugin cannot replace it"
    if not (isinstance(definition.model, type) and issubclass(definition.model, CheckModel)):
        return f"check type {definition.name!r}: its model is not a CheckModel"
    tag = definition.model.model_fields.get("type")
    if tag is None or get_args(tag.annotation) != (definition.name,):
        return f"check type {definition.name!r}: its model needs type: Literal[{definition.name!r}]"
    if not callable(definition.evaluator):
        return f"check type {definition.name!r}: its evaluator is not callable"
    return None


def register(definition: CheckType) -> None:
    """Add a check type; ValueError when it is malformed or its name is taken."""
    problem = _invalid(definition)
    if problem:
        raise ValueError(problem)
    REGISTERED[definition.name] = definition
    BY_MODEL[definition.model] = definition
    _state["version"] += 1


def _plugin_definitions(loaded: Any) -> list[Any]:
    value = loaded() if callable(loaded) and not isinstance(loaded, type) else loaded
    return list(value) if isinstance(value, list | tuple) else [value]


def _load_plugins() -> None:
    from importlib.metadata import entry_points

    from rubric_studio.core.plugins import load_contained

    def register_all(loaded: Any) -> str | None:
        try:
            for definition in _plugin_definitions(loaded):
                register(definition)
        except ValueError as exc:  # a definition that is wrong: the message says what
            return str(exc)
        return None

    seen: set[tuple[str, str]] = set()
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if (point.name, point.value) in seen:
            continue
        seen.add((point.name, point.value))
        load_contained("check-type", point, register_all)


def _ensure_builtin() -> None:
    """The built-in types, registered without reading any plugin."""
    if not _state["builtin"]:
        _state["builtin"] = True
        for definition in BUILTIN:
            if definition.name not in REGISTERED:
                register(definition)


def _ensure() -> None:
    _ensure_builtin()
    if _state["loaded"]:
        return
    _state["loaded"] = True
    _load_plugins()


def refresh_plugins() -> None:
    """Forget the plugin types and read the entry points again (after installing a plugin)."""
    builtin = {d.name for d in BUILTIN}
    for name in [n for n in REGISTERED if n not in builtin]:
        BY_MODEL.pop(REGISTERED.pop(name).model, None)
    _state["loaded"] = False
    _state["version"] += 1
    _ensure()


def check_types() -> tuple[CheckType, ...]:
    """Every registered check type, built-ins first."""
    _ensure()
    return tuple(REGISTERED.values())


def check_type(name: str) -> CheckType | None:
    """The registered check type called ``name`` (built in or from a plugin); returns None when
    there is none. Raises nothing."""
    _ensure()
    return REGISTERED.get(name)


class LiveSequence(Sequence[Any]):
    """A tuple computed from the registry, recomputed when a type is registered."""

    def __init__(self, compute: Callable[[], tuple[Any, ...]]):
        self._compute = compute
        self._cache: tuple[int, tuple[Any, ...]] | None = None

    def _value(self) -> tuple[Any, ...]:
        _ensure()
        if self._cache is None or self._cache[0] != _state["version"]:
            self._cache = (_state["version"], self._compute())
        return self._cache[1]

    def __getitem__(self, index: Any) -> Any:
        return self._value()[index]

    def __len__(self) -> int:
        return len(self._value())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._value())

    def __contains__(self, item: object) -> bool:
        return item in self._value()

    def __repr__(self) -> str:
        return repr(self._value())


class LiveMapping(Mapping[str, Any]):
    """A mapping computed from the registry, recomputed when a type is registered."""

    def __init__(self, compute: Callable[[], dict[str, Any]]):
        self._items = LiveSequence(lambda: tuple(compute().items()))

    def _dict(self) -> dict[str, Any]:
        return dict(self._items)

    def __getitem__(self, key: str) -> Any:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return repr(self._dict())


CHECK_TYPES: Sequence[str] = LiveSequence(lambda: tuple(REGISTERED))
"""The names of the registered check types, built-ins first."""


def _same_error(kind: str, ctx: Any, message: str) -> bool:
    """Whether pydantic's own error ``kind`` (with ``ctx``) says ``message``."""
    try:
        probe = ValidationError.from_exception_data("probe", [{"type": kind, "loc": (), "input": None,
                                                               **({"ctx": ctx} if ctx else {})}])
    except (KeyError, TypeError, ValueError):
        return False
    return probe.errors(include_url=False)[0]["msg"] == message


def _tagged(error: ValidationError, tag: str) -> ValidationError:
    """``error`` with the type's name in front of each location, as a tagged union reports it."""
    details: list[InitErrorDetails] = []
    for item in error.errors(include_url=False):
        kind: Any = item["type"]
        ctx = item.get("ctx")
        if not _same_error(kind, ctx, item["msg"]):  # a custom error: keep its type and message as they were
            kind = PydanticCustomError(kind, item["msg"])  # no context: the message is not templated
            ctx = None
        detail: Any = {"type": kind, "loc": (tag, *item["loc"]), "input": item["input"]}
        if ctx:
            detail["ctx"] = ctx
        details.append(detail)
    return ValidationError.from_exception_data(error.title, details)


def _validate_check(value: Any) -> CheckModel:
    """A ``check:`` mapping as its registered type's spec (errors as pydantic's tagged union gives them)."""
    _ensure_builtin()
    if isinstance(value, CheckModel) and type(value) in BY_MODEL:
        return value
    if isinstance(value, CheckModel):
        value = value.model_dump(by_alias=True, exclude_unset=True) | {"type": value.type}
    if not isinstance(value, Mapping):
        raise PydanticCustomError("model_attributes_type",
                                  "Input should be a valid dictionary or object to extract fields from")
    if "type" not in value:
        raise PydanticCustomError("union_tag_not_found", "Unable to extract tag using discriminator {discriminator}",
                                  {"discriminator": "'type'"})
    tag = value["type"]
    definition = REGISTERED.get(tag) if isinstance(tag, str) else None
    if definition is None:  # not a built-in type: perhaps a plugin's
        _ensure()
        definition = REGISTERED.get(tag) if isinstance(tag, str) else None
    if definition is None:
        expected = ", ".join(repr(name) for name in REGISTERED)
        raise PydanticCustomError(
            "union_tag_invalid",
            "Input tag '{tag}' found using {discriminator} does not match any of the expected tags: {expected_tags}",
            {"discriminator": "'type'", "tag": str(tag), "expected_tags": expected})
    try:
        return definition.model.model_validate(value)
    except ValidationError as exc:
        raise _tagged(exc, definition.name) from None


if TYPE_CHECKING:
    CheckSpec = CheckModel
else:
    CheckSpec = Annotated[Any, PlainValidator(_validate_check)]
    """A criterion's ``check:``: validated by the model its ``type`` names in the registry."""
