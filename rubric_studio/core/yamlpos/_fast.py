"""Reading a large, plain YAML file fast: libyaml's events to data, for files read and not edited.

:func:`load_plain` builds the data from the events of PyYAML's ``CSafeLoader`` (parsing in C) instead of the
event-by-event composer that :func:`~rubric_studio.core.yamlpos._load.load_with_positions`
runs in Python to check its bounds and remember positions — four times faster on a labels
sidecar of a thousand annotators, and no node graph is held. It answers only for texts where the two readings are
the same data and the bounds cannot be reached, and says ``None`` ("read it the careful way")
for anything else:

* a text over ``max_chars`` or holding a control character YAML forbids;
* anything that may be an anchor (``&name``) — so no alias and no merge of an alias can
  repeat a node (no "billion laughs") — or an explicit tag (``!!omap``, ``!python/...``),
  which the two readings build differently; both checks look at the raw text and may say
  ``None`` for a note that only looks like one (a slower read, never a different one);
* a duplicate mapping key (the careful reading reports it with its line);
* lists and mappings nested deeper than ``max_depth``;
* any error: a syntax error, an integer too long to read (the careful reading words each with a
  position).

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
        """libyaml's parser, with plain scalars resolved once per distinct text (a sidecar
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


_NO_KEY = object()


def _scalar(event: Any, loader: Any, constructor: Any) -> Any:
    if event.anchor is not None:
        raise _Declined
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _STR:
        return event.value
    if tag == _MERGE:
        raise _Declined
    value = constructor.construct_object(yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark,
                                                         event.style))
    if type(value) is int:
        try:
            check_plain_value(value)
        except ValueProblem:
            raise _Declined from None
    return value


def _build(loader: Any, max_depth: int) -> Any:
    """The document's data straight from libyaml's events (no node graph is kept: a sidecar of
    100,000 labels peaks at a quarter of the memory); strings are taken as they are, other
    scalars built by PyYAML's safe constructor (YAML 1.1, as the careful reading does)."""
    constructor = yaml.constructor.SafeConstructor()
    get = loader.get_event
    get()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    get()  # DocumentStart
    scalar, mapping, sequence = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[list[Any]] = []  # [the open list or mapping, the key awaiting its value]
    root: Any = None
    while True:
        event = get()
        kind = type(event)
        if kind is scalar:
            value = _scalar(event, loader, constructor)
        elif kind is mapping or kind is sequence:
            if event.anchor is not None or event.tag not in (None, "!"):
                raise _Declined
            value = {} if kind is mapping else []
        elif kind in ends:
            stack.pop()
            continue
        elif kind is yaml.DocumentEndEvent:
            break
        else:
            raise _Declined  # an alias
        if not stack:
            root = value
        else:
            top = stack[-1]
            if type(top[0]) is list:
                top[0].append(value)
            elif top[1] is _NO_KEY:
                if kind is not scalar or value in top[0]:
                    raise _Declined  # a list or mapping as a key, or a key written twice
                top[1] = value
            else:
                top[0][top[1]] = value
                top[1] = _NO_KEY
        if kind is mapping or kind is sequence:
            stack.append([value, _NO_KEY if kind is mapping else None])
            if len(stack) > max_depth:
                raise _Declined
    if not loader.check_event(yaml.StreamEndEvent):
        raise _Declined  # another document
    return root


def load_plain(text: str, *, limits: YamlLimits = DEFAULT_LIMITS) -> tuple[bool, Any]:
    """``(True, data)`` when the fast reading can vouch for ``text`` (see the module docstring),
    else ``(False, None)``: read it with :func:`~rubric_studio.core.yamlpos._load.load_with_positions`.

    The cyclic garbage collector is paused while the data is built (nothing in it forms a cycle;
    its passes over a hundred thousand young objects took most of the time)."""
    if _CLoader is None or len(text) > limits.max_chars:
        return False, None
    if ("&" in text or "!" in text) and _ANCHOR_OR_TAG.search(text):  # `in` first: a quick no for most files
        return False, None
    if unprintable_problem(text, "", yaml=True) is not None:
        return False, None
    collecting = gc.isenabled()
    gc.disable()
    loader = _Loader(text)
    try:
        return True, _build(loader, limits.max_depth)
    except (_Declined, yaml.YAMLError, ValueError, OverflowError, TypeError, RecursionError, MemoryError):
        return False, None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()
