"""Writing exported files: plain data as tidy YAML (multi-line text as ``|`` blocks, strings
YAML 1.1 would misread quoted, whole floats as integers) and as indented JSON.

The format modules build plain dicts and lists and hand them here to be written.
"""

from __future__ import annotations

import io
import json
from typing import Any

from rubric_studio.core.yamlpos import misread_by_yaml11
from rubric_studio.interop._common import num


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    return yaml


def prepare(value: Any) -> Any:
    """Plain data → ruamel nodes: multi-line strings as ``|`` blocks, floats tidy."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import LiteralScalarString

    if hasattr(value, "fa"):  # already prepared (keeps flow style)
        return value
    if isinstance(value, dict):
        out = CommentedMap()
        for key, item in value.items():
            out[key] = prepare(item)
        return out
    if isinstance(value, list):
        seq = CommentedSeq()
        seq.extend(prepare(item) for item in value)
        return seq
    if isinstance(value, str) and "\n" in value and not any(line != line.rstrip() for line in value.split("\n")):
        return LiteralScalarString(value)  # | keeps a final newline, |- when there is none
    if isinstance(value, str) and misread_by_yaml11(value):
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return DoubleQuotedScalarString(value)  # `yes`, `on`, `012`: strings here, not what YAML 1.1 makes of them
    if isinstance(value, float):
        return num(value)
    return value


def flow(node: Any) -> Any:
    """Mark a prepared mapping/sequence to be written inline (``{a: 1}`` / ``[a, b]``)."""
    node.fa.set_flow_style()
    return node


def dump_yaml(data: Any, header: str = "") -> str:
    """YAML text of ``data`` (already prepared or plain), with ``header`` as # comments."""
    buffer = io.StringIO()
    if header:
        for line in header.rstrip("\n").split("\n"):
            buffer.write(f"# {line}".rstrip() + "\n")
    _yaml().dump(data if hasattr(data, "fa") else prepare(data), buffer)
    return buffer.getvalue()


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
