"""Setting and deleting keys of ruamel.yaml mappings without losing comment lines.

ruamel keeps the comment and blank lines that follow a value in the comment token of that
value, so deleting a key would delete the comment lines below it too, although they
belong to whatever follows. :func:`delete_key` moves them to the key before;
:func:`set_key` inserts a new key where the canonical order puts it, styled like the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubric_studio.core.document._style import styled

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml.comments import CommentedMap

__all__ = ["append_tail", "delete_key", "set_key", "trailing_lines"]


def trailing_lines(container: Any, key: Any, *, cut: bool = False) -> str:
    """Comment and blank lines ruamel stored with ``container[key]`` that follow its line
    (removed from there with ``cut``, for moving them elsewhere).

    ruamel keeps the lines after an end-of-line comment in that comment's token, so
    deleting the key would delete them too; they belong to whatever follows.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.tokens import CommentToken

    text = ""
    value = container[key]
    if isinstance(value, CommentedMap) and value and not value.fa.flow_style():
        text += trailing_lines(value, list(value.keys())[-1], cut=cut)
    elif isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        text += trailing_lines(value, len(value) - 1, cut=cut)
    slot = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.get(key)
    token = entry[slot] if entry and len(entry) > slot else None
    if isinstance(token, CommentToken) and "\n" in token.value:
        end = token.value.index("\n") + 1
        text += token.value[end:]
        if cut:
            token.value = token.value[:end]
    return text


def append_tail(container: Any, key: Any, text: str) -> None:
    """Emit ``text`` (whole lines) right after the value of ``container[key]``."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    if not text:
        return
    value = container[key]
    if isinstance(value, CommentedMap) and value and not value.fa.flow_style():
        append_tail(value, list(value.keys())[-1], text)
        return
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        append_tail(value, len(value) - 1, text)
        return
    slot = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.setdefault(key, [None, None, None, None])
    while len(entry) <= slot:
        entry.append(None)
    token = entry[slot]
    if isinstance(token, CommentToken):
        token.value = (token.value if token.value.endswith("\n") else token.value + "\n") + text
    else:
        entry[slot] = CommentToken("\n" + text, CommentMark(0), None)


def delete_key(mapping: CommentedMap, key: Any) -> str:
    """Delete ``key``; the comment lines that followed it move to the key before it.

    Returns those lines when there is no key before to carry them.
    """
    if key not in mapping:
        return ""
    keys = list(mapping.keys())
    orphan = trailing_lines(mapping, key)
    del mapping[key]
    position = keys.index(key)
    if orphan and position > 0:
        append_tail(mapping, keys[position - 1], orphan)
        return ""
    return orphan


def set_key(mapping: CommentedMap, key: Any, value: Any, order: tuple[Any, ...], *, indent: int) -> None:
    """Set (or insert in canonical order) ``key``; ``None`` deletes it."""
    if value is None:
        delete_key(mapping, key)
        return
    if key in mapping:
        mapping[key] = styled(value, mapping[key], indent=indent, flow=isinstance(value, list))
        return
    new = styled(value, indent=indent, flow=isinstance(value, list))
    rank = {name: position for position, name in enumerate(order)}
    mine = rank.get(key, len(order))
    keys = list(mapping.keys())
    position = 0
    for index, existing in enumerate(keys):
        if rank.get(existing, len(order)) <= mine:
            position = index + 1
    if mine == len(order):
        position = len(keys)
    mapping.insert(position, key, new)
