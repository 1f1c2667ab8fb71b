"""Composing one YAML text into a node graph within bounds, before anything is built.

:func:`compose` reads the parser's events with an explicit stack (no depth can exhaust
Python's or C's stack) and refuses, with line and column, what :class:`YamlLimits` bounds:
nesting too deep (aliases expanded), an alias into the node that contains it, and aliases
that would repeat more nodes than the document's own allow ("billion laughs"). Aliases stay
shared nodes here; :mod:`~rubric_studio.core.yamlpos._load` expands them when it builds the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from rubric_studio.core.files import line_and_column
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.yamlpos import _scalars as yaml_core

__all__ = ["DEFAULT_LIMITS", "YamlLimits", "compose", "problem_at", "yaml_syntax_problem"]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlLimits:
    """Bounds on one YAML text; far above any real rubric, labels or samples file."""

    max_chars: int = 64 * 1024 * 1024
    max_depth: int = 100
    alias_ratio: int = 10
    alias_floor: int = 10_000
    max_alias_nodes: int = 250_000

    def alias_budget(self, own_nodes: int) -> int:
        """How many nodes aliases may add to a document of ``own_nodes`` nodes."""
        return min(self.max_alias_nodes, max(self.alias_floor, self.alias_ratio * own_nodes))


DEFAULT_LIMITS = YamlLimits()


def problem_at(file: str, mark: Any, message: str) -> Problem:
    """A problem at a parser mark (0-based) as 1-based line and column."""
    return Problem(file, mark.line + 1, mark.column + 1, message)


@dataclass(slots=True)
class _Open:
    """A list or mapping whose end event has not come yet.

    For an anchored one, ``counts`` holds the node and alias counters and the deepest level
    seen when it started, to learn at its end how big and how deep an alias to it would be.
    """

    node: yaml.Node
    children: list[yaml.Node]
    anchor: str | None = None
    counts: tuple[int, int, int] = (0, 0, 0)


@dataclass(slots=True)
class _Anchored:
    node: yaml.Node
    size: int  # nodes, once the aliases inside are expanded
    height: int  # levels of lists/mappings (0 for a scalar)


class _Composer:
    """Events → node graph (aliases shared, not copied), refusing what :class:`YamlLimits` bounds."""

    def __init__(self, loader: Any, file: str, limits: YamlLimits, resolve: Any = None):
        self.loader, self.file, self.limits = loader, file, limits
        self.resolve = resolve or loader.resolve
        self.stack: list[_Open] = []
        self.anchors: dict[str, _Anchored] = {}
        self.open_anchors: set[str] = set()
        self.own_nodes = 0
        self.alias_nodes = 0
        self.deepest = 0  # most levels of lists/mappings reached (aliases expanded) since the last anchor opened
        self.biggest_alias: tuple[int, str, Any] | None = None
        self.root: yaml.Node | None = None

    def refuse(self, mark: Any, message: str) -> RubricError:
        return RubricError([problem_at(self.file, mark, message)])

    def document(self) -> yaml.Node | None:
        """The node graph of the next document (its start and end events included)."""
        get_event = self.loader.get_event
        get_event()  # DocumentStart
        handlers = {yaml.ScalarEvent: self.scalar, yaml.AliasEvent: self.alias,
                    yaml.SequenceStartEvent: self.start, yaml.MappingStartEvent: self.start,
                    yaml.SequenceEndEvent: self.end, yaml.MappingEndEvent: self.end}
        event = get_event()
        while type(event) is not yaml.DocumentEndEvent:
            handlers[type(event)](event)
            event = get_event()
        self.check_alias_budget()
        return self.root

    def attach(self, node: yaml.Node) -> None:
        if self.stack:
            self.stack[-1].children.append(node)
        else:
            self.root = node

    def remember(self, anchor: str, node: yaml.Node, size: int, height: int, mark: Any) -> None:
        if anchor in self.anchors:
            raise self.refuse(mark, f"YAML anchor &{anchor} is defined twice; give each anchor its own name")
        self.anchors[anchor] = _Anchored(node, size, height)

    def scalar(self, event: Any) -> None:
        self.own_nodes += 1
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        if event.anchor is not None:
            self.remember(event.anchor, node, 1, 0, event.start_mark)
        if self.stack:  # attach(), inlined: scalars are most of the events
            self.stack[-1].children.append(node)
        else:
            self.root = node

    def start(self, event: Any) -> None:
        self.own_nodes += 1
        level = len(self.stack) + 1
        if level > self.limits.max_depth:
            raise self.refuse(event.start_mark, f"YAML nested deeper than {self.limits.max_depth} levels; refused")
        kind = yaml.MappingNode if type(event) is yaml.MappingStartEvent else yaml.SequenceNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(kind, None, event.implicit)
        opened = _Open(kind(tag, [], event.start_mark, None, flow_style=event.flow_style), [])
        if event.anchor is not None:
            self.remember(event.anchor, opened.node, 0, 0, event.start_mark)  # size and height known at its end
            self.open_anchors.add(event.anchor)
            opened.anchor, opened.counts = event.anchor, (self.own_nodes, self.alias_nodes, self.deepest)
            self.deepest = level
        self.deepest = max(self.deepest, level)
        self.stack.append(opened)

    def end(self, event: Any) -> None:
        opened = self.stack.pop()
        node, children = opened.node, opened.children
        node.end_mark = event.end_mark
        if type(node) is yaml.MappingNode:
            node.value = list(zip(children[::2], children[1::2], strict=True))
        else:
            node.value = children
        if opened.anchor is not None:
            own, aliased, deepest = opened.counts
            size = self.own_nodes - own + self.alias_nodes - aliased + 1
            self.anchors[opened.anchor] = _Anchored(node, size, self.deepest - len(self.stack))
            self.open_anchors.discard(opened.anchor)
            self.deepest = max(deepest, self.deepest)
        self.attach(node)

    def alias(self, event: Any) -> None:
        name, mark = event.anchor, event.start_mark
        if name in self.open_anchors:
            raise self.refuse(mark, f"recursive YAML alias: *{name} points into the node &{name} that contains it; "
                                    "refused")
        target = self.anchors.get(name)
        if target is None:
            raise self.refuse(mark, f"YAML alias *{name} refers to no anchor &{name} defined before it")
        level = len(self.stack) + target.height
        if level > self.limits.max_depth:
            raise self.refuse(mark, f"YAML nested deeper than {self.limits.max_depth} levels once alias *{name} "
                                    "is expanded; refused")
        self.deepest = max(self.deepest, level)
        self.alias_nodes += target.size
        if self.biggest_alias is None or target.size > self.biggest_alias[0]:
            self.biggest_alias = (target.size, name, mark)
        if self.alias_nodes > self.limits.max_alias_nodes:
            self.refuse_aliases()
        self.attach(target.node)

    def check_alias_budget(self) -> None:
        if self.alias_nodes > self.limits.alias_budget(self.own_nodes):
            self.refuse_aliases()

    def refuse_aliases(self) -> None:
        assert self.biggest_alias is not None
        size, name, mark = self.biggest_alias
        budget = self.limits.alias_budget(self.own_nodes)
        raise self.refuse(mark, f"YAML alias expansion too large (aliases add more than {budget:,} nodes to a "
                                f"document of {self.own_nodes:,}; *{name} alone repeats {size:,}); refused")


def compose(text: str, file: str, limits: YamlLimits, core_schema: bool = False) -> yaml.Node | None:
    """The single document of ``text`` as a node graph; RubricError when it is not YAML or out of bounds."""
    loader = _Loader(text)
    try:
        loader.get_event()  # StreamStart
        composer = _Composer(loader, file, limits, yaml_core.resolve if core_schema else None)
        root = None
        if not loader.check_event(yaml.StreamEndEvent):
            root = composer.document()
        if not loader.check_event(yaml.StreamEndEvent):
            mark = loader.peek_event().start_mark
            raise composer.refuse(mark, "YAML syntax error: but found another document "
                                        "(expected a single document in the stream)")
        return root
    except yaml.YAMLError as exc:
        raise RubricError([yaml_syntax_problem(file, exc, text)]) from None
    finally:
        loader.dispose()


def yaml_syntax_problem(file: str, exc: yaml.YAMLError, text: str | None = None) -> Problem:
    """Turn a PyYAML error into a Problem that names line, column and the cause.

    A reader error carries only an offset into the text: with ``text`` it becomes a line and column.
    """
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {what}"
    if "maximum nesting depth" in str(what):  # libyaml's own cap, reached before ours can count
        message, context = f"YAML nested deeper than {DEFAULT_LIMITS.max_depth} levels; refused", None
    if context:
        message += f" ({context})"
    if mark is not None:
        return Problem(file, mark.line + 1, mark.column + 1, message)
    position = getattr(exc, "position", None)
    if isinstance(position, int) and text is not None:
        index = len(text.encode("utf-8")[:position].decode("utf-8", errors="ignore"))
        return Problem(file, *line_and_column(text, index), message)
    return Problem(file, None, None, message)
