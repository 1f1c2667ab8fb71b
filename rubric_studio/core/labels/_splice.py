"""Editing a large sidecar entry by entry: only the entries a change touches are parsed and written.

The round-trip YAML editor (:mod:`rubric_studio.core.labels._store`) reads and writes the whole
document: 80 s for a sidecar of 100,000 labels. A sidecar as rubric-studio writes it, and as
people edit it, is a block mapping whose entries each begin with a line at column 0 (the
sample id); every other line of an entry — its fields, other annotators, block notes, the
comment and blank lines after it — is indented or a comment. Such a file is cut at those
lines, each touched entry is edited as a document of its own by the same editor (comments
kept exactly as in a whole-file edit), new entries are added after the last one, and the
untouched text is kept byte for byte.

Anything else — directives, several documents, anchors, aliases, tags, merge keys, a flow
mapping at the top, a sequence at column 0, a quoted value or flow collection that goes on to the
next line (its next lines may start at column 0 without starting an entry), an entry that does
not read as the one key its first line promised — is left to the whole-document editor.
"""

from __future__ import annotations

import re

import yaml

_DOCUMENT_MARKS = re.compile(r"^(?:%|---|\.\.\.)", re.M)
#: An anchor, alias or tag where a node starts, or a merge key: the whole-document editor's job.
_NODE_PROPERTIES = re.compile(r"(?:^|[:\[{,\-])[ \t]*[&*!][^\s,\]}]|<<[ \t]*:", re.M)
_ENTRY_START = re.compile(r"^[^\s#]", re.M)
#: A quoted scalar that starts a value and does not end on its line: its next lines may begin at
#: column 0 without beginning an entry (``note: "asked twice\nrefund: ..."``).
_QUOTE_OPEN_TO_END = re.compile(r"""(?:^|[:,\[{?-])[ \t]*(?:"(?:[^"\\]|\\.)*|'(?:[^']|'')*)$""")
_PLAIN_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_./\-]*(?: [A-Za-z0-9_./\-]+)*)[ \t]*:(?:[ \t]|$)")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _open_across_lines(text: str) -> bool:
    """Whether a quoted value or a flow collection outside a comment goes on past its line (a line
    at a time, the quick tests first: 130,000 lines in tens of milliseconds)."""
    quotes = '"' in text or "'" in text
    for line in text.split("\n"):
        if quotes and ('"' in line or "'" in line) and not line.lstrip().startswith("#") \
                and _QUOTE_OPEN_TO_END.search(line):
            return True
        if ("{" in line or "[" in line) and not line.lstrip().startswith("#") and \
                (line.count("{") != line.count("}") or line.count("[") != line.count("]")):
            return True
    return False


def _entry_id(line: str) -> str | None:
    """The sample id an entry's first line names (None: it does not read as one key)."""
    plain = _PLAIN_KEY.match(line)
    if plain and plain.group(1).lower() not in _YAML_WORDS:
        return plain.group(1)
    if line[0] in "{[-?|>":
        return None
    try:
        data = yaml.load(line, Loader=_Loader)  # noqa: S506 - the C safe loader, one line
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or len(data) != 1:
        return None
    return str(next(iter(data)))


def entries(text: str) -> tuple[int, list[tuple[int, int]], dict[str, int]] | None:
    """(where the first entry starts, each entry's (start, end), entry index by id); None when the
    file is not one the entry-by-entry edit can take."""
    if _DOCUMENT_MARKS.search(text) or _NODE_PROPERTIES.search(text) or _open_across_lines(text):
        return None
    starts = [m.start() for m in _ENTRY_START.finditer(text)]
    if not starts:
        return None
    spans = [(start, end) for start, end in zip(starts, starts[1:] + [len(text)], strict=True)]
    index: dict[str, int] = {}
    for number, (start, _end) in enumerate(spans):
        line = text[start:text.find("\n", start) if "\n" in text[start:start + 4096] else start + 4096]
        sample_id = _entry_id(line)
        if sample_id is None or sample_id in index:
            return None
        index[sample_id] = number
    return starts[0], spans, index
