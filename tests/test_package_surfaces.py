"""Every package surface of ``rubric_studio`` is discoverable: ``__all__`` names what it offers,
``dir()`` (and so tab completion) lists exactly that, ``from package import *`` imports exactly that,
and every public function and class says what it does; the top-level API also says what it returns
and raises."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import rlcompleter

import pytest

import rubric_studio

PACKAGES = ["rubric_studio"] + sorted(
    info.name for info in pkgutil.walk_packages(rubric_studio.__path__, "rubric_studio.") if info.ispkg
)
NOT_PUBLIC = {"Any", "TYPE_CHECKING", "annotations", "_EXPORTS", "importlib", "sys"}


def test_every_package_is_found():
    assert {"rubric_studio.core", "rubric_studio.core.checks", "rubric_studio.tui.results", "rubric_studio.cli"} <= set(
        PACKAGES
    )


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_surface_lists_its_public_names_only(name: str):
    package = importlib.import_module(name)
    public = getattr(package, "__all__", None)
    assert isinstance(public, list) and public, f"{name} has no __all__"
    assert len(set(public)) == len(public), f"{name}.__all__ repeats a name"
    assert "__dir__" in vars(package), f"{name} has no __dir__"
    listed = dir(package)
    assert set(listed) == set(public), f"{name}: dir() and __all__ differ: {set(listed) ^ set(public)}"
    assert not (set(listed) & NOT_PUBLIC)
    assert all(not n.startswith("_") or n == "__version__" for n in listed), listed
    for public_name in public:
        assert getattr(package, public_name) is not None or public_name.isupper(), f"{name}.{public_name}"


@pytest.mark.parametrize("name", PACKAGES)
def test_import_star_imports_exactly_the_public_names(name: str):
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)  # noqa: S102 - the statement under test
    namespace.pop("__builtins__", None)
    assert set(namespace) == set(importlib.import_module(name).__all__)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_function_and_class_has_a_docstring(name: str):
    package = importlib.import_module(name)
    missing = [n for n in package.__all__
               if (inspect.isfunction(obj := getattr(package, n)) or inspect.isclass(obj))
               and not (inspect.getdoc(obj) or "").strip()]
    assert missing == [], f"{name}: no docstring on {missing}"


@pytest.mark.parametrize("name", [n for n in rubric_studio.__all__ if inspect.isfunction(getattr(rubric_studio, n))])
def test_every_top_level_function_says_what_it_returns_and_raises(name: str):
    doc = inspect.getdoc(getattr(rubric_studio, name)) or ""
    assert "Returns:" in doc and "Raises:" in doc, f"rubric_studio.{name}: {doc[:80]!r}"


def test_tab_completion_offers_the_public_api():
    completer = rlcompleter.Completer({"rubric_studio": rubric_studio})
    offered = set()
    state = 0
    while (match := completer.complete("rubric_studio.load_", state)) is not None:
        offered.add(match.rstrip("("))
        state += 1
    assert offered == {"rubric_studio.load_labels", "rubric_studio.load_rubric", "rubric_studio.load_samples"}


def test_a_misspelt_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="load_rubrik"):
        rubric_studio.load_rubrik  # noqa: B018
    with pytest.raises(AttributeError, match="nothing_here"):
        importlib.import_module("rubric_studio.core").nothing_here  # noqa: B018
