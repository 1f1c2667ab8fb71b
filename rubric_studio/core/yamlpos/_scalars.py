"""YAML 1.2 core-schema scalars, for files other tools read.

PyYAML resolves plain scalars by YAML 1.1 rules: ``yes``/``no``/``on``/``off`` are
booleans, ``012`` is octal, ``1:30`` is 90 and ``2024-01-01`` a date. promptfoo and
AgentV read their files with js-yaml's default (the 1.2 core schema), where all of
those are strings (or a decimal 12). A foreign file must mean here what it means
there — ``value: yes`` in a ``contains`` assertion is the text "yes" — so
:mod:`rubric_studio.core.yamlpos._load` resolves and builds its scalars with these rules
when asked to (``core_schema=True``). Native rubric files keep PyYAML's reading.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import yaml

NULL_TAG = "tag:yaml.org,2002:null"
BOOL_TAG = "tag:yaml.org,2002:bool"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"  # `<<`: not in the core schema, but js-yaml (promptfoo, AgentV) merges

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (NULL_TAG, re.compile(r"(?:~|null|Null|NULL|)\Z")),
    (BOOL_TAG, re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")),
    (INT_TAG, re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")),
    (FLOAT_TAG, re.compile(r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                           r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z")),
)


def resolve(kind: type, value: str, implicit: tuple[bool, bool]) -> str:
    """The tag of an untagged node by the core schema (plain scalars only; quoted ones are strings)."""
    if kind is not yaml.ScalarNode:
        return "tag:yaml.org,2002:seq" if kind is yaml.SequenceNode else "tag:yaml.org,2002:map"
    if implicit[0]:
        if value == "<<":
            return MERGE_TAG
        for tag, pattern in _RULES:
            if pattern.match(value):
                return tag
    return STR_TAG


def construct(node: yaml.ScalarNode) -> object:
    """The value of a core-schema scalar whose tag :func:`resolve` gave (None for other tags)."""
    text = node.value
    if node.tag == NULL_TAG:
        return None
    if node.tag == BOOL_TAG:
        return text.lower() == "true"
    if node.tag == INT_TAG and _RULES[2][1].match(text):
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)
    if node.tag == FLOAT_TAG and _RULES[3][1].match(text):
        lowered = text.lower()
        if lowered.endswith(".inf"):
            return -math.inf if lowered.startswith("-") else math.inf
        if lowered == ".nan":
            return math.nan
        return float(text)
    return None


def misread_by_yaml11(text: str) -> bool:
    """Would PyYAML (YAML 1.1, how rubric files are read) take this text, written as a plain
    scalar, for something other than a string (``yes``, ``on``, ``012``, ``1:30``)? Writers
    quote such strings, so a value set to the text "yes" still loads as "yes"."""
    if len(text) > 64 or "\n" in text:
        return False
    return _yaml11().resolve(yaml.ScalarNode, text, (True, False)) != STR_TAG


#: CR and the line breaks only YAML 1.1 knows (NEL, U+2028, U+2029): outside a double-quoted
#: scalar, where they are escapes, YAML 1.1 and 1.2 readers do not read them back alike.
_UNSAFE_BREAKS = re.compile("[\r\x85\u2028\u2029]")
#: The first characters of the plain scalars ruamel's YAML 1.2 resolver reads as numbers (it takes
#: ``_`` in more places than the core schema: ``08_`` is a number there).
_NUMBER_START = frozenset("+-.0123456789")


def needs_double_quotes(text: str) -> bool:
    """Must ``text`` be written as a double-quoted scalar to read back as this same string in YAML 1.1
    (PyYAML, how rubric files, cards and labels are read) and YAML 1.2 readers (js-yaml's core schema
    in promptfoo and AgentV, ruamel)? Yes when any of them resolves it, written plain, as something
    else (``yes``, ``1:20``, ``012``, ``1e3``, ``.1e5``, ``0o17``, at any length), or it holds a line
    break only a double-quoted scalar keeps. The one rule every writer of YAML here quotes by."""
    if _UNSAFE_BREAKS.search(text):
        return True
    if "\n" in text:  # never a plain scalar: written as a block or quoted anyway
        return False
    plain = (True, False)
    if _yaml11().resolve(yaml.ScalarNode, text, plain) != STR_TAG or resolve(yaml.ScalarNode, text, plain) != STR_TAG:
        return True
    if text[:1] not in _NUMBER_START:
        return False
    from ruamel.yaml.nodes import ScalarNode

    return _ruamel12().resolve(ScalarNode, text, plain) != STR_TAG


@functools.cache
def _yaml11() -> yaml.resolver.Resolver:
    return yaml.resolver.Resolver()


@functools.cache
def _ruamel12() -> Any:
    """ruamel's YAML 1.2 resolver (ruamel is imported only for a text that starts like a number)."""
    from ruamel.yaml.resolver import VersionedResolver

    return VersionedResolver(version=(1, 2))
