"""The registry of judge providers: the built-ins, then third-party ones from entry points.

Every list of providers the product shows or checks is read from here: the ``provider:model``
names (``--judge`` help, "expected one of …"), the key and base-URL variables trust looks at,
the default judge a set key selects, prices, and the docs' provider table.

A third-party provider (a house gateway as a pip package) registers through the entry-point
group :data:`GROUP`, naming a :class:`Provider`::

    [project.entry-points."rubric_studio.providers"]
    gateway = "house_gateway:PROVIDER"

Entry points are read once, on first use (never at import; a built-in name is recognised
without reading them). A plugin that fails to load, is not a Provider, or reuses a name already
taken (a plugin never replaces a built-in) is skipped with one ``warning:`` line naming it and
why (:mod:`rubric_studio.core.plugins`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from importlib.metadata import entry_points
from typing import Any

from rubric_studio.core.providers._builtin import BUILTIN
from rubric_studio.core.providers._spec import Alias, Provider

GROUP = "rubric_studio.providers"
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_plugins: tuple[Provider, ...] | None = None
_loaded: dict[str, Any] = {}


def registered() -> tuple[Provider, ...]:
    """Every provider: the built-ins, then the plugins (loaded on the first call)."""
    global _plugins
    if _plugins is None:
        _plugins = tuple(_load_plugins())
    return BUILTIN + _plugins


def forget_plugins() -> None:
    """Read the entry points again on next use (after installing a plugin in a running process)."""
    global _plugins
    _plugins = None


def _load_plugins() -> Iterator[Provider]:
    from rubric_studio.core.plugins import load_contained

    taken = {name: "built-in" for provider in BUILTIN for name in provider.names}
    for point in entry_points(group=GROUP):
        found: list[Provider] = []

        def usable(loaded: Any, point: Any = point, found: list[Provider] = found) -> str | None:
            provider, problem = _checked(loaded, point, taken)
            if provider is not None:
                found.append(provider)
            return problem

        if load_contained("provider", point, usable):
            taken.update({name: found[0].origin for name in found[0].names})
            yield found[0]


def _checked(found: Any, point: Any, taken: Mapping[str, str]) -> tuple[Provider | None, str | None]:
    """The provider an entry point names, or None and why it cannot be used."""
    if not isinstance(found, Provider):
        what = f"the class {found.__name__}" if isinstance(found, type) else f"a {type(found).__name__}"
        return None, f"it names {what}, not a rubric_studio.core.providers.Provider"
    missing = [part for part in ("judge", "body", "capabilities") if not getattr(found, part)]
    if missing:
        return None, f"provider {found.name!r} names no {', '.join(missing)} code (\"module:attr\")"
    for name in found.names:
        if not _NAME.match(name):
            return None, f"provider name {name!r} must be lower-case letters, digits and '-'"
        if name in taken:
            return None, f"the name {name!r} is taken by a {taken[name]} provider, which a plugin cannot replace"
    dist = getattr(getattr(point, "dist", None), "name", None)
    return replace(found, origin=f"plugin {dist or point.value}", batch_api=found.batch is not None), None


def normalize_name(text: str) -> str:
    """A provider name as written (``OpenAI``, ``openai_compatible``) in its registered form."""
    return text.strip().lower().replace("_", "-")


def find(written: str) -> tuple[Provider, Alias | None] | None:
    """The provider (and alias) a ``provider:`` name refers to, or None. A built-in name is found
    without loading any plugin (a plugin never takes a built-in's name)."""
    name = normalize_name(written)
    return _find_in(BUILTIN, name) or _find_in(registered(), name)


def _find_in(providers: tuple[Provider, ...], name: str) -> tuple[Provider, Alias | None] | None:
    for provider in providers:
        if name == provider.name:
            return provider, None
        alias = provider.alias(name)
        if alias is not None:
            return provider, alias
    return None


def unknown(written: str) -> str | None:
    """Why ``written`` (the part before ``:`` of ``provider:model``) names no provider — the
    providers known, plugins included, and the closest one — or None when it names one.
    A built-in name is recognised without loading any plugin."""
    name = normalize_name(written)
    if name in builtin_names() or name in names():
        return None
    import difflib

    known = names()
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown provider {written.strip()!r}; expected one of {', '.join(known)}{hint}"


def get(name: str) -> Provider | None:
    """The provider of a resolved judge (``JudgeConfig.provider``: a provider's own name); a built-in
    one is found without loading any plugin."""
    builtin = next((provider for provider in BUILTIN if provider.name == name), None)
    return builtin or next((provider for provider in registered() if provider.name == name), None)


def load(reference: str) -> Any:
    """The object a ``"module:attr"`` reference names, imported on first use (like an entry point)."""
    if reference not in _loaded:
        module, _, attr = reference.partition(":")
        _loaded[reference] = getattr(importlib.import_module(module), attr)
    return _loaded[reference]


def names() -> tuple[str, ...]:
    """Every name ``provider:model`` accepts, aliases included."""
    return tuple(name for provider in registered() for name in provider.names)


def builtin_names() -> tuple[str, ...]:
    """The names of the built-in providers and aliases (no plugin is loaded: for ``--help``)."""
    return tuple(name for provider in BUILTIN for name in provider.names)


def key_order() -> tuple[str, ...]:
    """Providers a set key selects when no model is named, in order (those with a default model)."""
    return tuple(provider.name for provider in registered() if provider.default_model)


def family(written: str) -> str | None:
    """Whose key a ``provider:`` name spends: the provider's own, or the keyless alias's (none)."""
    found = find(written)
    if found is None:
        return None
    provider, alias = found
    return alias.name if alias is not None and alias.keyless else provider.name


class RegistryView(Mapping[str, Any]):
    """A read-only mapping computed from the registered providers when used (so plugins count too)."""

    def __init__(self, build: Callable[[tuple[Provider, ...]], dict[str, Any]]):
        self._build = build

    def _data(self) -> dict[str, Any]:
        return self._build(registered())

    def __getitem__(self, key: str) -> Any:
        if key in builtin_names():  # no plugin takes a built-in's name: its entry is known without loading them
            return self._build(BUILTIN)[key]
        return self._data()[key]

    def __iter__(self) -> Iterator[str]:
        builtin = self._build(BUILTIN)  # the built-ins come first: plugins load only if the loop goes on
        yield from builtin
        yield from (key for key in self._data() if key not in builtin)

    def __len__(self) -> int:
        return len(self._data())

    def __repr__(self) -> str:
        return f"RegistryView({self._data()!r})"


#: provider -> the variable holding the user's key.
KEY_VARS = RegistryView(lambda all_: {p.name: p.key_var for p in all_})
#: provider -> the variable holding a base URL (endpoint) the user chose.
BASE_URL_VARS = RegistryView(lambda all_: {p.name: p.base_url_var for p in all_})
#: written provider name -> whose key it spends (:func:`family`).
KEY_FAMILY = RegistryView(lambda all_: {name: family(name) for p in all_ for name in p.names})
#: names that never carry a user key (``ollama``).
KEYLESS = RegistryView(lambda all_: {a.name: True for p in all_ for a in p.aliases if a.keyless})


def markdown_table() -> str:
    """The docs' provider table (README "Judges"), one row per name."""
    rows = ["| `--judge` | What | Key | Base URL / endpoint | Default model | Batch API |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for provider in registered():
        extra = "".join(f", `{var}`" for var in provider.settings.values())
        endpoint = f"`{provider.base_url_var}`" + (" (required)" if provider.needs_base_url else "")
        rows.append(f"| `{provider.name}:<{provider.model_word}>` | {provider.summary} | `{provider.key_var}`{extra} | "
                    f"{endpoint} | {provider.default_model or '—'} | {'yes' if provider.batch_api else 'no'} |")
        for alias in provider.aliases:
            key = "none" if alias.keyless else f"`{provider.key_var}` (optional)"
            where = alias.default_base_url or "`--base-url` (required)"
            batch = "yes" if provider.batch_api and alias.batch else "no"
            rows.append(f"| `{alias.name}:<{provider.model_word}>` | {alias.summary} | {key} | {where} | — | {batch} |")
    return "\n".join(rows)
