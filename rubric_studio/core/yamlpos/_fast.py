"""Reading a large, plain YAML file fast: libyaml end to end, for files read and not edited.

:func:`load_plain` parses with PyYAML's ``CSafeLoader`` (composition in C) instead of the
event-by-event composer that :func:`~rubric_studio.core.yamlpos._load.load_with_positions`
runs in Python to check its bounds and remember positions — about ten times faster on a
labels sidecar of a thousand annotators. It answers only for texts where the two readings are
the same data and the bounds cannot be reached, and says ``None`` ("read it the careful way")
for anything else:

* a text over ``max_chars`` or holding a control character YAML forbids;
* anything that may be an anchor (``&name``) — so no alias and no merge of an alias can
  repeat a node (no "billion laughs") — or an explicit tag (``!!omap``, ``!python/...``),
  which the two readings build differently; both checks look at the raw text and may say
  ``None`` for a note that only looks like one (a slower read, never a different one);
* a duplicate mapping key (the careful reading reports it with its line);
* any error: a syntax error, an integer too long to read, nesting deep enough for libyaml's
  own limit or Python's recursion limit (the careful reading words each with a position).

Callers that need positions for a problem (a label that does not read) read the text again the
careful way then; a clean file is read once.
"""

from __future__ import annotations

import gc
import re
from typing import Any

import yaml

from rubric_studio.core.files import unprintable_problem
from rubric_studio.core.values import ValueProblem, check_plain_value
from rubric_studio.core.yamlpos._compose import DEFAULT_LIMITS, YamlLimits

__all__ = ["load_plain"]

_CLoader = getattr(yaml, "CSafeLoader", None)
#: ``&`` or ``!`` where YAML would start an anchor or a tag: at a line start, after blank space
#: or a flow indicator, before a name character.
_ANCHOR_OR_TAG = re.compile(r"(?:^|[\s\[{,])[&!][^\s\[\]{},]", re.MULTILINE)


class _Declined(Exception):
    """The fast reading cannot vouch for this text."""


_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"

if _CLoader is not None:

    class _Loader(_CLoader):  # type: ignore[misc, valid-type]
        """libyaml's composer, with plain scalars resolved once per distinct text (a sidecar
        repeats ``pass``, ``met`` and small numbers thousands of times)."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._resolved: dict[str, str] = {}

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            if kind is yaml.ScalarNode and implicit[0]:
                tag = self._resolved.get(value)
                if tag is None:
                    tag = self._resolved[value] = super().resolve(kind, value, implicit)
                return tag
            return super().resolve(kind, value, implicit)


def _build(root: yaml.Node) -> Any:
    """Node graph → data with an explicit stack; strings are taken as they are, other scalars
    built by PyYAML's safe constructor (YAML 1.1, as the careful reading does)."""
    constructor = yaml.constructor.SafeConstructor()
    holder: list[Any] = [None]
    stack: list[tuple[yaml.Node, Any, Any]] = [(root, holder, 0)]
    scalar, mapping = yaml.ScalarNode, yaml.MappingNode

    def value_of(node: yaml.Node) -> Any:
        if node.tag == _STR:
            return node.value
        if node.tag == _MERGE:
            raise _Declined
        value = constructor.construct_object(node)
        if type(value) is int:
            try:
                check_plain_value(value)
            except ValueProblem:
                raise _Declined from None
        return value

    while stack:
        node, into, slot = stack.pop()
        kind = type(node)
        if kind is scalar:
            into[slot] = value_of(node)
        elif kind is mapping:
            built: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if type(key_node) is not scalar:
                    raise _Declined  # a list or mapping as a key
                key = value_of(key_node)
                if key in built:
                    raise _Declined  # a key written twice (or two spellings of one key)
                built[key] = None  # keeps the key order; the value is filled when popped
                stack.append((value_node, built, key))
            into[slot] = built
        else:
            items: list[Any] = [None] * len(node.value)
            stack.extend((item, items, index) for index, item in enumerate(node.value))
            into[slot] = items
    return holder[0]


def load_plain(text: str, *, limits: YamlLimits = DEFAULT_LIMITS) -> tuple[bool, Any]:
    """``(True, data)`` when the fast reading can vouch for ``text`` (see the module docstring),
    else ``(False, None)``: read it with :func:`~rubric_studio.core.yamlpos._load.load_with_positions`.

    The cyclic garbage collector is paused while the nodes are built (none of them forms a
    cycle; its passes over a hundred thousand young nodes took most of the time)."""
    if _CLoader is None or len(text) > limits.max_chars or _ANCHOR_OR_TAG.search(text):
        return False, None
    if unprintable_problem(text, "", yaml=True) is not None:
        return False, None
    collecting = gc.isenabled()
    gc.disable()
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        return True, None if root is None else _build(root)
    except (_Declined, yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError, MemoryError):
        return False, None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()
