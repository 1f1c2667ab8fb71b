"""How a rubric file looks, so an edit can keep its look.

:func:`detect_style` finds the ruamel.yaml indentation (mapping, sequence, offset) that
reproduces a file best; :func:`styled` turns a plain value into a ruamel node quoted and
laid out like the value it replaces (single or double quotes, literal ``|`` or folded
``>`` blocks with their line width, flow ``[a, b]`` or block lists). A new string that
YAML 1.1 would read as something else (``yes``, ``012``) is double-quoted.
"""

from __future__ import annotations

import io
from collections import Counter
from typing import TYPE_CHECKING, Any

from rubric_studio.core.yamlpos import misread_by_yaml11

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import FoldedScalarString

__all__ = ["detect_style", "make_yaml", "plain", "same", "styled"]

_WIDE = 10**9
_DEFAULT_INDENT = (2, 4, 2)
_COMMON_INDENTS = ((2, 2, 0), (4, 4, 2), (4, 6, 4))


def make_yaml(mapping: int = 2, sequence: int = 4, offset: int = 2) -> YAML:
    """A round-trip ruamel.yaml with this indentation that keeps quotes and never wraps lines."""
    from ruamel.yaml import YAML

    yaml = YAML()  # round-trip
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.preserve_quotes = True
    yaml.width = _WIDE
    return yaml


def plain(value: Any) -> Any:
    """ruamel's round-trip objects as plain Python values."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def same(old: Any, new: Any) -> bool:
    """Equal values of the same kind (``1`` is not ``True``, ``2`` is not ``2.0``)."""
    old, new = plain(old), plain(new)
    return type(old) is type(new) and old == new


def _fold_positions(text: str, width: int) -> list[int]:
    """Where a folded (``>``) scalar breaks ``text`` into lines of at most ``width``."""
    candidates = [
        p
        for p, ch in enumerate(text)
        if ch == " " and 0 < p < len(text) - 1 and text[p - 1] != " " and text[p + 1] != " "
    ]
    folds: list[int] = []
    start = 0
    previous: int | None = None
    for position in [*candidates, len(text)]:
        if position - start > width and previous is not None and previous > start:
            folds.append(previous)
            start = previous + 1
        previous = position
    return folds


def _fold_width(old: FoldedScalarString, indent: int) -> int:
    folds = getattr(old, "fold_pos", None) or []
    text = str(old)
    if folds:
        bounds = [-1, *folds, len(text)]
        return max(max(bounds[k + 1] - bounds[k] - 1 for k in range(len(bounds) - 1)), 40)
    return max(78 - indent, 40)


def _styled_str(value: str, old: Any, indent: int) -> str:
    from ruamel.yaml.scalarstring import (
        DoubleQuotedScalarString,
        FoldedScalarString,
        LiteralScalarString,
        PlainScalarString,
        SingleQuotedScalarString,
    )

    if isinstance(old, str) and str(old) == value:
        return old
    if isinstance(old, str) and not str(old) and "\n" not in value and not misread_by_yaml11(value):
        # The quotes an empty value needs are no style the user chose (ruamel would keep them).
        return PlainScalarString(value)
    if "\n" in value.rstrip("\n") or (value.endswith("\n") and isinstance(old, LiteralScalarString)):
        return LiteralScalarString(value)
    if isinstance(old, FoldedScalarString):
        new = FoldedScalarString(value)
        new.fold_pos = _fold_positions(value, _fold_width(old, indent))
        return new
    if isinstance(old, LiteralScalarString):
        return LiteralScalarString(value)
    if isinstance(old, SingleQuotedScalarString):
        return SingleQuotedScalarString(value)
    if isinstance(old, DoubleQuotedScalarString) or misread_by_yaml11(value):
        return DoubleQuotedScalarString(value)
    return value


def styled(value: Any, old: Any = None, *, indent: int = 4, flow: bool = False) -> Any:
    """``value`` as a ruamel node that looks like ``old`` did (quoting, flow or block)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if old is not None and same(old, value):
        return old
    if isinstance(value, str):
        return _styled_str(value, old, indent)
    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            previous = old.get(key) if isinstance(old, dict) else None
            mapping[key] = styled(item, previous, indent=indent + 2, flow=isinstance(item, list))
        if isinstance(old, CommentedMap) and old.fa.flow_style():
            mapping.fa.set_flow_style()
        elif isinstance(old, CommentedMap):
            mapping.fa.set_block_style()
        return mapping
    if isinstance(value, list | tuple):
        seq = CommentedSeq(styled(item, indent=indent + 2) for item in value)
        use_flow = old.fa.flow_style() if isinstance(old, CommentedSeq) else flow
        if use_flow and all(not isinstance(item, dict | list) for item in value):
            seq.fa.set_flow_style()
        else:
            seq.fa.set_block_style()
        return seq
    return value


def _indent_candidates(text: str) -> list[tuple[int, int, int]] | None:
    """Indentations to try for ``text``: the default, ruamel's guess, the common ones
    (None when ruamel cannot even guess: not YAML yet)."""
    candidates = [_DEFAULT_INDENT]
    try:
        from ruamel.yaml.util import load_yaml_guess_indent

        _, indent, block_seq_indent = load_yaml_guess_indent(text)
        if indent is not None and block_seq_indent is not None:
            candidates.append((indent, indent + block_seq_indent, block_seq_indent))
    except Exception:  # not YAML (yet)
        return None
    return list(dict.fromkeys([*candidates, *_COMMON_INDENTS]))


def _line_difference(text: str, rendered: str) -> int:
    """How many lines one text has that the other lacks (counted with repeats)."""
    mine, theirs = Counter(text.splitlines()), Counter(rendered.splitlines())
    return sum(((mine - theirs) + (theirs - mine)).values())


def detect_style(text: str) -> tuple[YAML, str | None]:
    """The ruamel configuration that reproduces ``text`` best (2/4/2 first), and its
    rendering of ``text`` (None when ``text`` cannot be rendered: the default is kept).

    Call it only for text the bounded loader accepts: ruamel bounds neither aliases nor nesting.
    """
    candidates = _indent_candidates(text)
    if candidates is None:
        return make_yaml(), None
    best: tuple[int, YAML, str] | None = None
    for mapping, sequence, offset in candidates:
        yaml = make_yaml(mapping, sequence, offset)
        try:
            data = yaml.load(text)
            out = io.StringIO()
            yaml.dump(data, out)
        except Exception:  # duplicate keys and the like: keep the default
            return make_yaml(), None
        rendered = out.getvalue()
        if rendered == text:
            return yaml, rendered
        score = _line_difference(text, rendered)
        if best is None or score < best[0]:
            best = (score, yaml, rendered)
    assert best is not None
    return best[1], best[2]
