"""A lazy package surface writes its public names once, in ``_EXPORTS`` (``rubric_studio/_lazy.py``):
``__all__`` is derived from it, and the ``if TYPE_CHECKING:`` block type checkers read (they never
run ``__getattr__``) imports exactly those names from the same modules. Read from the source, so a surface that drifts fails here."""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rubric_studio"
TOP = "rubric_studio"


@dataclass
class Surface:
    """What a lazy ``__init__`` says, read from its source."""

    package: str
    #: public name -> the module ``_EXPORTS`` names, absolute.
    exports: dict[str, str]
    #: public name -> the module its ``if TYPE_CHECKING:`` import reads it from, absolute.
    typing: dict[str, str]
    #: the ``__all__`` assignment, as written.
    all_source: str
    #: what the typing block holds besides plain ``from module import name`` lines.
    strays: list[str]


def _package_name(path: Path) -> str:
    return ".".join(path.parent.relative_to(ROOT).parts)


def read_surface(path: Path, package: str | None = None) -> Surface | None:
    """The surface of ``path`` (an ``__init__.py``), or None when it is not a lazy one."""
    package = package or _package_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assigned = {
        node.targets[0].id: node
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    if "_EXPORTS" not in assigned:
        return None
    exports = {
        name: f"{package}.{module}" for name, module in ast.literal_eval(assigned["_EXPORTS"].value).items()
    }
    typing: dict[str, str] = {}
    strays: list[str] = []
    for node in tree.body:
        if not (
            isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        ):
            continue
        for statement in node.body:
            if not (isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0):
                strays.append(ast.unparse(statement))
                continue
            for alias in statement.names:
                if alias.asname not in (None, alias.name):
                    strays.append(ast.unparse(statement))
                typing[alias.asname or alias.name] = statement.module
    all_node = assigned.get("__all__")
    return Surface(package, exports, typing, ast.unparse(all_node.value) if all_node else "", strays)


def _lazy_surfaces() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("__init__.py")) if read_surface(path) is not None]


SURFACES = _lazy_surfaces()


def typing_block_drift(surface: Surface) -> list[str]:
    """How the typing block differs from ``_EXPORTS``, one line each (empty: it restates it exactly)."""
    lines = [f"{surface.package}: the typing block imports {name} from {module}, which _EXPORTS does not list"
             for name, module in sorted(surface.typing.items()) if name not in surface.exports]  # fmt: skip
    for name, module in sorted(surface.exports.items()):
        if name not in surface.typing:
            lines.append(
                f"{surface.package}: _EXPORTS lists {name} ({module}); the typing block does not import it"
            )
        elif surface.typing[name] != module:
            lines.append(f"{surface.package}: {name} is read from {module} (_EXPORTS) but typed from "
                         f"{surface.typing[name]}; name the module that defines it in both")  # fmt: skip
    return lines + [
        f"{surface.package}: the typing block holds more than imports: {s}" for s in surface.strays
    ]


def test_every_lazy_surface_is_found():
    names = {_package_name(path) for path in SURFACES}
    assert {TOP, "rubric_studio.core.labels", "rubric_studio.core.providers", "rubric_studio.web"} <= names
    assert len(SURFACES) >= 20


@pytest.mark.parametrize("path", SURFACES, ids=_package_name)
def test_the_typing_block_imports_exactly_the_exports_from_the_same_modules(path: Path):
    surface = read_surface(path)
    assert surface is not None
    assert typing_block_drift(surface) == []


@pytest.mark.parametrize("path", SURFACES, ids=_package_name)
def test_all_is_derived_from_the_exports(path: Path):
    surface = read_surface(path)
    assert surface is not None
    package = importlib.import_module(surface.package)
    if surface.package == TOP:
        # Written out (grouped by topic) because the docs' API page reads it from the source.
        assert sorted(package.__all__) == sorted([*surface.exports, "__version__"])
    else:
        assert surface.all_source == "list(_EXPORTS)", f"{surface.package}: write __all__ = list(_EXPORTS)"
        assert package.__all__ == list(surface.exports)


def test_a_drifted_typing_block_is_named(tmp_path: Path):
    init = tmp_path / "__init__.py"
    init.write_text("from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n"
                    "    from pkg._a import gone, kept\n"
                    "    from pkg._b import moved\n"
                    "    X = 1\n"
                    '_EXPORTS = {"kept": "_a", "moved": "_a", "new": "_c"}\n'
                    "__all__ = list(_EXPORTS)\n")  # fmt: skip
    surface = read_surface(init, package="pkg")
    assert surface is not None
    assert typing_block_drift(surface) == [
        "pkg: the typing block imports gone from pkg._a, which _EXPORTS does not list",
        "pkg: moved is read from pkg._a (_EXPORTS) but typed from pkg._b; name the module that defines it in both",
        "pkg: _EXPORTS lists new (pkg._c); the typing block does not import it",
        "pkg: the typing block holds more than imports: X = 1",
    ]
