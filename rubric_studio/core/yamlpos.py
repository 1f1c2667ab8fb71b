"""YAML loading that remembers where every value came from.

``load_with_positions`` returns plain Python data plus a :class:`Positions` map from
a path (a tuple of mapping keys and sequence indexes) to the 1-based line and column
of that node, so validation errors can point at the exact spot in the user's file.
Duplicate mapping keys are reported (PyYAML silently keeps the last one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from rubric_studio.core.problems import Problem, RubricError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
    def __init__(self, file: str):
        self.positions = Positions(file)
        self.problems: list[Problem] = []
        self._constructor = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node, path: Path_) -> Any:
        self.positions.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            self._constructor.flatten_mapping(node)
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
                if key is None and not isinstance(key_node, yaml.ScalarNode):
                    self.problems.append(
                        Problem(
                            self.positions.file,
                            key_node.start_mark.line + 1,
                            key_node.start_mark.column + 1,
                            "mapping keys must be plain values, not lists or mappings",
                        )
                    )
                    continue
                child = (*path, key)
                if key in result:
                    first_line = self.positions.keys[child][0]
                    self.problems.append(
                        Problem(
                            self.positions.file,
                            key_node.start_mark.line + 1,
                            key_node.start_mark.column + 1,
                            f"duplicate key {key!r} (first set on line {first_line}); each key may appear once",
                        )
                    )
                    continue
                self.positions.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                result[key] = self.build(value_node, child)
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        return self._scalar(node)

    def _scalar(self, node: yaml.Node) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as exc:
            self.problems.append(
                Problem(self.positions.file, node.start_mark.line + 1, node.start_mark.column + 1, str(exc))
            )
            return None


def yaml_syntax_problem(file: str, exc: yaml.YAMLError) -> Problem:
    """Turn a PyYAML error into a Problem that names line, column and the cause."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {what}"
    if context:
        message += f" ({context})"
    if mark is None:
        return Problem(file, None, None, message)
    return Problem(file, mark.line + 1, mark.column + 1, message)


def load_with_positions(text: str, file: str) -> tuple[Any, Positions, list[Problem]]:
    """Parse one YAML document; raise RubricError on a syntax error."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise RubricError([yaml_syntax_problem(file, exc)]) from None
    builder = _Builder(file)
    if node is None:
        return None, builder.positions, builder.problems
    data = builder.build(node, ())
    return data, builder.positions, builder.problems
