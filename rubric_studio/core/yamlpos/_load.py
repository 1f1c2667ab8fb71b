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

The composer (:mod:`~rubric_studio.core.yamlpos._compose`, which enforces the bounds) and the
builder here walk the document with explicit stacks, so no depth can exhaust Python's or C's stack. :func:`load_with_positions` returns plain Python data plus a
:class:`Positions` map from a path (a tuple of mapping keys and sequence indexes) to the
1-based line and column of that node, so validation errors can point at the exact spot.
Duplicate mapping keys, integers too long to print and values that cannot be read are
reported as problems. :func:`safe_load` is the short form for loaders that need no positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from rubric_studio.core.files import unprintable_problem
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.values import LongNumber, ValueProblem, check_plain_value, max_int_digits
from rubric_studio.core.yamlpos import _scalars as yaml_core
from rubric_studio.core.yamlpos._compose import (
    DEFAULT_LIMITS,
    YamlLimits,
    compose,
    problem_at,
    yaml_syntax_problem,
)

__all__ = [
    "DEFAULT_LIMITS",
    "Positions",
    "YamlLimits",
    "load_with_positions",
    "safe_load",
    "yaml_syntax_problem",
]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"
_CORE_TAGS = (yaml_core.NULL_TAG, yaml_core.BOOL_TAG, yaml_core.INT_TAG, yaml_core.FLOAT_TAG)
Path_ = tuple[Any, ...]


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
        self.problems.append(problem_at(self.positions.file, node.start_mark, message))

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
    node = compose(text, file, limits, core_schema)
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
