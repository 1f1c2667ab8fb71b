"""Bounded YAML loading that remembers where every value came from.

Every YAML text a user hands over — rubric, labels, YAML samples, foreign eval files, the
studio's editor text — is parsed here, and nothing is built before these bounds are checked
on the parser's events (:class:`YamlLimits`):

* the text has at most ``max_chars`` characters and no control characters YAML forbids
  (reported with line and column, not a byte offset);
* lists and mappings nest at most ``max_depth`` levels, counting what aliases bring in;
* an alias may not point into the node that contains it (a recursive structure);
* the nodes aliases add (``*name`` and merge keys ``<<: *name`` repeat a whole subtree) may
  not exceed ``alias_ratio`` times the document's own nodes (or ``alias_floor``, for small
  documents), nor ``max_alias_nodes`` in all: a "billion laughs" file of a few lines is
  refused after counting, before anything is expanded.

The composer and the builder walk the document with explicit stacks, so no depth can exhaust
Python's or C's stack. :func:`load_with_positions` returns plain Python data plus a
:class:`Positions` map from a path (a tuple of mapping keys and sequence indexes) to the
1-based line and column of that node, so validation errors can point at the exact spot.
Duplicate mapping keys, integers too long to print and values that cannot be read are
reported as problems. :func:`safe_load` is the short form for loaders that need no positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from rubric_studio.core import yaml_core
from rubric_studio.core.files import line_and_column, unprintable_problem
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.values import LongNumber, ValueProblem, check_plain_value, max_int_digits

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_CORE_TAGS = (yaml_core.NULL_TAG, yaml_core.BOOL_TAG, yaml_core.INT_TAG, yaml_core.FLOAT_TAG)
Path_ = tuple[Any, ...]


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


@dataclass
class Positions:
    """Line/column of every node (values) and of every mapping key (keys)."""

    file: str
    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Path_, *, key: bool = False) -> tuple[int | None, int | None]:
        """Best position for ``path``: the node itself or its nearest ancestor.

        Path elements that are not real keys (pydantic's union tags, for example)
        are skipped so ``('criteria', 0, 'check', 'length', 'max_words')`` still
        finds ``criteria[0].check.max_words``.
        """
        real: list[Any] = []
        for element in path:
            if (*real, element) in self.values:
                real.append(element)
        probe = tuple(real)
        if key and probe in self.keys:
            return self.keys[probe]
        while probe and probe not in self.values:
            probe = probe[:-1]
        return self.values.get(probe, (None, None))

    def problem(self, path: Path_, message: str, *, key: bool = False, severity: str = "error") -> Problem:
        line, column = self.locate(path, key=key)
        return Problem(self.file, line, column, message, severity)


def _at(file: str, mark: Any, message: str) -> Problem:
    return Problem(file, mark.line + 1, mark.column + 1, message)


# ---------------------------------------------------------------------------- composing


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
        return RubricError([_at(self.file, mark, message)])

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


def _compose(text: str, file: str, limits: YamlLimits, core_schema: bool = False) -> yaml.Node | None:
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


# ---------------------------------------------------------------------------- building


class _Builder:
    """Node graph → plain data and positions, with an explicit stack (aliases are expanded here,
    within the bounds the composer checked)."""

    def __init__(self, file: str, core_schema: bool = False):
        self.core_schema = core_schema
        self.positions = Positions(file)
        self.problems: list[Problem] = []
        self._constructor = yaml.constructor.SafeConstructor()
        self._entries_of: dict[int, list[tuple[Any, yaml.Node, yaml.Node]]] = {}

    def problem(self, node: yaml.Node, message: str) -> None:
        self.problems.append(_at(self.positions.file, node.start_mark, message))

    def build(self, root: yaml.Node) -> Any:
        holder: list[Any] = [None]
        stack: list[tuple[yaml.Node, Path_, Any, Any]] = [(root, (), holder, 0)]
        while stack:
            node, path, container, slot = stack.pop()
            self.positions.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
            if isinstance(node, yaml.MappingNode):
                result: dict[Any, Any] = {}
                for key, key_node, value_node in self._entries(node):
                    child = (*path, key)
                    self.positions.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                    result[key] = None  # keeps the key order; the value is filled when popped
                    stack.append((value_node, child, result, key))
                container[slot] = result
            elif isinstance(node, yaml.SequenceNode):
                items: list[Any] = [None] * len(node.value)
                stack.extend((item, (*path, index), items, index) for index, item in enumerate(node.value))
                container[slot] = items
            else:
                container[slot] = self._scalar(node)
        return holder[0]

    def _entries(self, node: yaml.MappingNode) -> list[tuple[Any, yaml.Node, yaml.Node]]:
        """(key, key node, value node) of a mapping, merge keys (``<<``) resolved as YAML says:
        keys written in the mapping win over merged ones, and earlier merged mappings over later ones.

        Computed once per node (an aliased mapping reports its duplicate keys once); the
        composer bounded nesting, aliases to merged mappings included, which bounds the recursion here.
        """
        cached = self._entries_of.get(id(node))
        if cached is not None:
            return cached
        written: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
        sources: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources.extend(self._merge_sources(value_node))
            elif not isinstance(key_node, yaml.ScalarNode):
                self.problem(key_node, "mapping keys must be plain values, not lists or mappings")
            else:
                key = self._scalar(key_node)
                if key in written:
                    first_line = written[key][0].start_mark.line + 1
                    self.problem(key_node, f"duplicate key {key!r} (first set on line {first_line}); "
                                           "each key may appear once")
                else:
                    written[key] = (key_node, value_node)
        merged: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
        for source in sources:
            for key, key_node, value_node in self._entries(source):
                if key not in written and key not in merged:
                    merged[key] = (key_node, value_node)
        entries = [(key, *pair) for key, pair in (*merged.items(), *written.items())]
        self._entries_of[id(node)] = entries
        return entries

    def _merge_sources(self, value_node: yaml.Node) -> list[yaml.Node]:
        """The mappings a merge key (``<<: *a`` or ``<<: [*a, *b]``) brings in, in order of precedence."""
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        if all(isinstance(source, yaml.MappingNode) for source in sources):
            return sources
        self.problem(value_node, "a merge key (<<) expects a mapping or a list of mappings (usually *anchor)")
        return [source for source in sources if isinstance(source, yaml.MappingNode)]

    def _scalar(self, node: yaml.Node) -> Any:
        try:
            value = yaml_core.construct(node) if self.core_schema and node.tag in _CORE_TAGS else None
            if value is None:
                value = self._constructor.construct_object(node, deep=True)
            if type(value) is int:
                check_plain_value(value)
            return value
        except ValueProblem as exc:
            self.problem(node, str(exc))
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            if node.tag == _INT_TAG and max_int_digits() and len(node.value) > max_int_digits():
                try:
                    check_plain_value(LongNumber(len(node.value.lstrip("+-"))))
                except ValueProblem as long_number:
                    self.problem(node, str(long_number))
                    return None
            shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            self.problem(node, f"cannot read {shown!r} as a {node.tag.rsplit(':', 1)[-1]}: {exc}")
        return None


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


def load_with_positions(
    text: str, file: str, *, limits: YamlLimits = DEFAULT_LIMITS, core_schema: bool = False
) -> tuple[Any, Positions, list[Problem]]:
    """Parse one YAML document within ``limits``; ``core_schema`` reads plain scalars by YAML 1.2's
    core schema, as promptfoo and AgentV do (:mod:`.yaml_core`), instead of PyYAML's 1.1 rules.

    Raises RubricError when the text is not YAML or is out of bounds (nothing is built then);
    returns the data, its positions, and the problems of single values (duplicate keys,
    unreadable scalars), which leave the value ``None`` or skip the key.
    """
    if len(text) > limits.max_chars:
        raise RubricError([Problem(file, None, None, f"YAML text longer than {limits.max_chars:,} characters; "
                                                     "refused")])
    unprintable = unprintable_problem(text, file, yaml=True)
    if unprintable is not None:
        raise RubricError([unprintable])
    node = _compose(text, file, limits, core_schema)
    builder = _Builder(file, core_schema)
    if node is None:
        return None, builder.positions, builder.problems
    return builder.build(node), builder.positions, builder.problems


def safe_load(text: str, file: str, *, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of one YAML document, within ``limits``; RubricError listing every problem otherwise."""
    data, _, problems = load_with_positions(text, file, limits=limits)
    if problems:
        raise RubricError(problems)
    return data
