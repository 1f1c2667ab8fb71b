"""The shape of the code, read from the source: every import (also those inside functions) obeys
the layers, no two modules hold each other (even lazily, even only for type hints), and
functions stay short. Modules may be as long as their concept needs: there is no size cap.

``tests/test_architecture.py`` checks what importing a layer loads at run time; this file reads
every ``import`` statement, so a lazy import inside a function that would pull Textual into the
session, or the UI into the core, fails here before anyone runs that function.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rubric_studio"

#: package -> top-level names it must never import, anywhere in its modules.
FORBIDDEN = {
    "rubric_studio.core": (
        "textual",
        "openai",
        "anthropic",
        "rubric_studio.tui",
        "rubric_studio.engine",
        "rubric_studio.session",
        "rubric_studio.judges",
        "rubric_studio.cli",
        "starlette", "uvicorn", "jinja2", "rubric_studio.web",
    ),
    "rubric_studio.session": ("textual", "rubric_studio.tui", "rubric_studio.cli", "openai", "anthropic",
                              "starlette", "uvicorn", "jinja2", "rubric_studio.web"),
    "rubric_studio.web": ("textual", "rubric_studio.tui", "rubric_studio.cli", "openai", "anthropic"),
    "rubric_studio.engine": ("textual", "rubric_studio.tui", "rubric_studio.session", "rubric_studio.cli"),
    "rubric_studio.judges": ("textual", "rubric_studio.tui", "rubric_studio.session", "rubric_studio.cli"),
    "rubric_studio.interop": ("textual", "rubric_studio.tui", "rubric_studio.session", "rubric_studio.cli"),
}
MAX_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _lazy_exports(path: Path) -> dict[str, str]:
    """A package surface's ``_EXPORTS`` (public name -> private module), read from its source."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


#: package -> {name: module that defines it}, for packages whose ``__init__`` imports lazily.
LAZY = {name: exports for name, path in MODULES.items()
        if path.name == "__init__.py" and (exports := _lazy_exports(path))}  # fmt: skip


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (annotations only: never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


#: A registry's reference to code, loaded on use like an entry point: ``"rubric_studio.judges.openai:OpenAIJudge"``.
REFERENCE = re.compile(r"(rubric_studio(?:\.\w+)+):(\w+)")


def references_of(path: Path) -> set[tuple[str, str]]:
    """The ``"module:attr"`` references to rubric-studio code in ``path``'s strings: plain, or
    f-strings whose parts are module-level string constants (``f"{_I}.agentv:export"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {node.targets[0].id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}  # fmt: skip
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            parts = [value.value if isinstance(value, ast.Constant) else
                     constants.get(value.value.id) if isinstance(value, ast.FormattedValue)
                     and isinstance(value.value, ast.Name) else None for value in node.values]  # fmt: skip
            text = "".join(parts) if all(isinstance(part, str) for part in parts) else None
        if text is not None and (match := REFERENCE.fullmatch(text)):
            found.add((match[1], match[2]))
    return found


def imports_of(path: Path, *, typing: bool = False, modules: dict[str, Path] = MODULES) -> set[str]:
    """Every module ``path`` imports when some code of it runs (lazy imports included); with
    ``typing``, also those under ``if TYPE_CHECKING:`` (read by type checkers and readers).
    ``modules``: the modules known by name (to tell ``from pkg import submodule``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if typing else _type_checking_lines(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if f"{node.module}.{alias.name}" in modules)  # fmt: skip
            # A name read through a lazy package surface is an import of the module defining it.
            lazy = LAZY.get(node.module, {})
            found.update(f"{node.module}.{lazy[alias.name]}" for alias in node.names if alias.name in lazy)
    # A registry's "module:attr" reference is imported when it is used: a lazy import like any
    # other when it names another layer's code. Within one layer it is how that layer finds its own
    # implementations (the judges' table of built-in provider code, the formats' exporters), which
    # import the layer's shared parts in turn: it must resolve (see below), it is not an edge.
    own = _layer(_module_name(path)) if path.is_relative_to(PACKAGE) else None
    found.update(module for module, _ in references_of(path) if _layer(module) != own)
    return found


def _layer(name: str) -> str:
    """``rubric_studio.judges`` of ``rubric_studio.judges.openai``."""
    return ".".join(name.split(".")[:2])


def _dependencies(name: str, path: Path, modules: dict[str, Path], typing: bool) -> set[str]:
    """The modules of ``modules`` that module ``name`` holds (see :func:`_internal_graph`)."""
    deps = {dep for dep in imports_of(path, typing=typing, modules=modules) if dep in modules and dep != name}
    if typing and name in LAZY:
        # A lazy surface's TYPE_CHECKING block restates its ``_EXPORTS`` for type checkers; each
        # importer of a name already holds the module defining it, so the surface holds none of them.
        own = {dep for dep in deps if dep.startswith(name + ".")}
        deps -= own - imports_of(path, modules=modules)
    # ``from rubric_studio.tui import labeling`` names the submodule, not the package's __init__.
    return {dep for dep in deps if not (modules[dep].name == "__init__.py" and dep in name)}


def _internal_graph(modules: dict[str, Path] = MODULES, *, typing: bool = True) -> dict[str, set[str]]:
    """Module -> the modules it holds: imports anywhere in it (inside functions too) and, with
    ``typing``, imports for type hints only (a cycle of those is still two modules that know each other)."""
    return {name: _dependencies(name, path, modules, typing) for name, path in modules.items()}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_imports_a_forbidden_layer_even_lazily(package: str):
    leaks = []
    for name, path in MODULES.items():
        if name != package and not name.startswith(package + "."):
            continue
        for imported in imports_of(path):
            if any(imported == bad or imported.startswith(bad + ".") for bad in FORBIDDEN[package]):
                leaks.append(f"{name} imports {imported}")
    assert leaks == []


def test_the_lazy_import_scan_sees_imports_inside_functions(tmp_path: Path):
    """The scan itself: an import inside a function counts; one under TYPE_CHECKING does not."""
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import textual\n"
                      "def f():\n    from rubric_studio.tui import app\n")  # fmt: skip
    assert "rubric_studio.tui" in imports_of(source)
    assert "textual" not in imports_of(source)
    assert "textual" in imports_of(source, typing=True)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_even_through_lazy_or_typing_only_imports():
    assert _cycles(_internal_graph()) == []


def _package_of(name: str) -> str:
    """The node ``name`` counts as between packages: a private module behind a lazy package
    surface is its package (its importers reach it through the surface)."""
    parts = name.split(".")
    for end in range(len(parts) - 1, 1, -1):
        package = ".".join(parts[:end])
        if package in LAZY and parts[end].startswith("_"):
            return package
    return name


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` with each lazy package and its private modules as one node."""
    merged: dict[str, set[str]] = {}
    for name, deps in graph.items():
        node = _package_of(name)
        merged.setdefault(node, set()).update(_package_of(dep) for dep in deps)
        merged[node].discard(node)
    for deps in list(merged.values()):
        for dep in deps:
            merged.setdefault(dep, set())
    return merged


def test_no_two_packages_hold_each_other_through_their_surfaces():
    """A package behind a lazy surface is one unit: ``core.rubric`` needing ``core.checks``'s spec
    while ``core.checks`` ran rubrics was a circle no two modules showed."""
    assert _cycles(_package_graph(_internal_graph())) == []


def test_the_package_view_joins_a_surface_and_its_private_modules():
    graph = {"p.a": {"p.pkg._x"}, "p.pkg._x": set(), "p.pkg._y": {"p.a"}, "p.pkg": set()}
    lazy = {"p.pkg": {"X": "_x", "Y": "_y"}}
    original = dict(LAZY)
    LAZY.clear()
    LAZY.update(lazy)
    try:
        assert _cycles(graph) == []  # no two modules hold each other ...
        assert _cycles(_package_graph(graph)) == [["p.a", "p.pkg"]]  # ... but the package and p.a do
    finally:
        LAZY.clear()
        LAZY.update(original)


def test_every_registry_reference_names_code_that_exists():
    """Registries name code by "module:attr" (providers' code, formats' exporters): each must import."""
    references = {ref for path in MODULES.values() for ref in references_of(path)}
    assert len(references) >= 12  # the built-in providers' and formats' code at least
    missing = []
    for module, attr in sorted(references):
        try:
            getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{module}:{attr}: {exc}")
    assert missing == []


def test_a_registry_reference_counts_as_an_import(tmp_path: Path):
    source = tmp_path / "m.py"
    source.write_text('_I = "rubric_studio.interop"\nA = "rubric_studio.judges.openai:OpenAIJudge"\n'
                      'B = f"{_I}.docent:export"\nC = "not rubric_studio.x:y"\n')
    assert references_of(source) == {("rubric_studio.judges.openai", "OpenAIJudge"),
                                     ("rubric_studio.interop.docent", "export")}
    assert {"rubric_studio.judges.openai", "rubric_studio.interop.docent"} <= imports_of(source)


def test_a_cycle_of_type_hints_only_is_a_cycle(tmp_path: Path):
    """Two modules that import each other, one of them only under TYPE_CHECKING, hold each other."""
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
                                   "class A:\n    def __init__(self, b: B) -> None:\n        self.b = b\n")
    (tmp_path / "b.py").write_text("from pkg.a import A\nclass B:\n    a: A\n")
    modules = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py"}
    assert _cycles(_internal_graph(modules)) == [["pkg.a", "pkg.b"]]
    assert _cycles(_internal_graph(modules, typing=False)) == []


def test_a_lazy_surface_restating_its_exports_for_type_checkers_holds_none_of_them():
    """``core.trust``'s TYPE_CHECKING block names its private modules; only its importers hold them."""
    graph = _internal_graph()
    assert not any(dep.startswith("rubric_studio.core.trust.") for dep in graph["rubric_studio.core.trust"])
    assert "rubric_studio.core.trust._folders" in graph["rubric_studio.interop.agentv._files"]


def test_a_name_read_through_a_lazy_package_surface_counts_as_an_import_of_its_module(tmp_path: Path):
    source = tmp_path / "m.py"
    source.write_text("from rubric_studio.core.document import RubricDocument\n")
    assert "rubric_studio.core.document._document" in imports_of(source)


def test_the_cycle_finder_finds_a_lazy_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_functions_stay_short():
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert long == []


def test_only_the_command_line_imports_the_app_even_for_type_hints():
    """Flows and screens get the app as a StudioHost: none reaches back into StudioApp."""
    importers = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "rubric_studio.tui.app":
                importers.append(name)
            elif isinstance(node, ast.ImportFrom) and node.module == "rubric_studio.tui":
                importers.extend(name for alias in node.names if alias.name == "app")
    assert sorted(set(importers)) == ["rubric_studio.cli.studio"]
