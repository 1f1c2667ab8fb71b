"""Writing exported files: plain data as tidy YAML (multi-line text as ``|`` blocks, strings
YAML 1.1 would misread quoted, whole floats as integers) and as indented JSON.

The format modules build plain dicts and lists and hand them here to be written. What is written
reads back as the same data in YAML 1.1 readers (PyYAML, how rubric files are read) and YAML 1.2
readers (ruamel, js-yaml in promptfoo and AgentV): ruamel writes by 1.2's rules, so the strings
where 1.1 reads differently are quoted here -

* words 1.1 resolves to something else (``yes``, ``on``, ``1:20``), or js-yaml's core schema does
  where ruamel would not (``.1e5``), and text holding CR, NEL (U+0085) or the Unicode line and
  paragraph separators, which 1.1 takes for line breaks in plain, single-quoted and block scalars:
  double-quoted (:func:`~rubric_studio.core.yamlpos.needs_double_quotes`, the rule every YAML
  writer here quotes by);
* inside ``[...]`` / ``{...}`` (:func:`flow`), text with ``,?[]{}``, a ``:`` that ends a word, a
  `` #`` or a first character that is an indicator: each ends or opens a plain scalar there in
  1.1 (``{pattern: https?://}``).

Header comments are split at every line break either version knows, so a rubric name holding a
line separator cannot end a comment early.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from rubric_studio.core.safe_text import json_safe
from rubric_studio.core.yamlpos import needs_double_quotes
from rubric_studio.interop._common import num

#: Every line break a YAML reader of either version knows (for header comments).
_ANY_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
#: What ends a plain scalar anywhere inside a flow collection for a YAML 1.1 reader.
_FLOW_STOPS = frozenset(",?[]{}")
#: ``:`` before a space, the end or a flow indicator (a key's end), and `` #`` (a comment).
_FLOW_ENDS = re.compile(r":(?:$|[\s,\[\]{}])|\s#")
#: Characters that cannot start a plain scalar (YAML's indicators).
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    return yaml


def _double_quoted(value: str) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(value)


def _text(value: str) -> Any:
    """A string as the node that reads back the same in YAML 1.1 and 1.2 (block context)."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    if needs_double_quotes(value):
        return _double_quoted(value)  # `yes`, `on`, `012`: strings here, not what YAML 1.1 makes of them
    if "\n" in value and _literal_ok(value):
        return LiteralScalarString(value)  # | keeps a final newline, |- when there is none
    return value


def _literal_ok(value: str) -> bool:
    """Can ``value`` be a ``|`` block? Not with spaces or tabs ending a line (a block drops none, but
    editors do), nor with a first line that starts with a space or is empty (the block's indentation
    would be guessed from it), nor with more than one final newline."""
    lines = value.split("\n")
    return (not any(line != line.rstrip() for line in lines) and bool(lines[0])
            and not lines[0][0].isspace() and not value.endswith("\n\n"))


def _key(key: Any) -> Any:
    return _text(key) if isinstance(key, str) and "\n" not in key else key


def prepare(value: Any) -> Any:
    """Plain data → ruamel nodes: multi-line strings as ``|`` blocks, floats tidy, strings YAML 1.1
    would read differently quoted (keys too)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if hasattr(value, "fa"):  # already prepared (keeps flow style)
        return value
    if isinstance(value, dict):
        out = CommentedMap()
        for key, item in value.items():
            out[_key(key)] = prepare(item)
        return out
    if isinstance(value, list):
        seq = CommentedSeq()
        seq.extend(prepare(item) for item in value)
        return seq
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, float):
        return num(value)
    return value


def _flow_safe(value: str) -> bool:
    """Does a YAML 1.1 reader read ``value`` back whole as a plain scalar inside ``[...]`` / ``{...}``?"""
    return (bool(value) and value == value.strip() and value[0] not in _INDICATORS
            and not any(ch in _FLOW_STOPS for ch in value) and not _FLOW_ENDS.search(value))


def _flow_item(value: Any) -> Any:
    """A plain string that a 1.1 reader would cut short in a flow collection, double-quoted."""
    if isinstance(value, str) and type(value) is str and not _flow_safe(value):
        return _double_quoted(value)
    if isinstance(value, str) and "\n" in value:
        return _double_quoted(str(value))  # a | block cannot stand inside [...] or {...}
    return value


def flow(node: Any) -> Any:
    """Mark a prepared mapping/sequence to be written inline (``{a: 1}`` / ``[a, b]``), quoting what a
    YAML 1.1 reader would not read back whole there."""
    if isinstance(node, dict):
        items = [(_flow_item(key), _flow_item(value)) for key, value in node.items()]
        node.clear()
        for key, value in items:
            node[key] = value
    else:
        for index, value in enumerate(node):
            node[index] = _flow_item(value)
    node.fa.set_flow_style()
    return node


def header_comment(header: str) -> str:
    """``header`` as ``#`` comment lines, split at every line break either YAML version knows."""
    if not header:
        return ""
    return "".join(f"# {line}".rstrip() + "\n" for line in _ANY_BREAK.split(header.rstrip("\n")))


def dump_yaml(data: Any, header: str = "") -> str:
    """YAML text of ``data`` (already prepared or plain), with ``header`` as # comments."""
    buffer = io.StringIO()
    buffer.write(header_comment(header))
    _yaml().dump(data if hasattr(data, "fa") else prepare(data), buffer)
    return buffer.getvalue()


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def jsonl_line(record: Any) -> str:
    """One JSON Lines record (no newline): non-ASCII text as is, but NEL and the Unicode line and
    paragraph separators escaped, as readers that split lines the Unicode way would break there
    (with the other characters a terminal acts on: :func:`~rubric_studio.core.safe_text.json_safe`)."""
    return json_safe(json.dumps(record, ensure_ascii=False))
