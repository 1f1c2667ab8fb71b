"""Sample text made into HTML that cannot run, load or mislead anything in the browser.

A sample is someone else's text: a model's answer that may hold ``<script>``, ``<img onerror>``,
``javascript:`` links, raw HTML in Markdown, or bidirectional controls that make text read
differently from what it is. Here it becomes an HTML fragment the page inserts as is:

* Markdown is rendered by markdown-it-py with raw HTML off (``<b>`` shows as text); a link
  stays a link only for ``http``, ``https`` and ``mailto`` (opened in a new tab, no referrer,
  no follow) — any other link shows its text and its target as text; an image is never loaded,
  it shows as ``[image: alt]``.
* JSON (an output that parses as an object or array) is pretty-printed as escaped text.
* A chat transcript (``messages``) is shown turn by turn, each turn's content as Markdown.
* Bidirectional controls and control characters (but newline and tab) become visible marks
  such as ``⟨U+202E⟩`` before anything else happens (:func:`visible_controls`), also in the
  plain texts the page shows (criteria, rationales, notes, names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

LINK_SCHEMES = ("http", "https", "mailto")
#: C0 controls but TAB and LF, DEL, C1 controls, the bidirectional marks, embeddings, overrides and
#: isolates, the Arabic letter mark, zero-width characters (space, joiners, word joiner, the byte
#: order mark: "pass\u200bword" must not read as "password"), the line and paragraph separators,
#: lone surrogates and the two non-characters.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064"
                     "\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]")


def visible_controls(text: Any) -> str:
    """``text`` with every control or bidirectional character shown as a mark like ``⟨U+202E⟩``
    (newlines and tabs kept; a Windows line end is a newline)."""
    string = text if isinstance(text, str) else str(text)
    string = string.replace("\r\n", "\n")
    if _HIDDEN.search(string) is None:
        return string
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", string)


def _markdown() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "breaks": True})  # a line break in a reply is one
    parser.add_render_rule("image", _image_as_text)
    parser.core.ruler.push("safe_links", _safe_links)
    return parser


def _image_as_text(renderer: Any, tokens: list[Token], index: int, options: Any, env: Any) -> str:
    token = tokens[index]
    alt = "".join(child.content for child in token.children or []) or token.content
    return str(escape(f"[image: {alt}]"))


def link_allowed(href: str) -> bool:
    """Whether a Markdown link may stay a link: an absolute http, https or mailto address."""
    try:
        scheme = urlsplit(href.strip()).scheme.lower()
    except ValueError:
        return False
    return scheme in LINK_SCHEMES


def _safe_links(state: Any) -> None:
    """Every link: an allowed one opens in a new tab without referrer; any other becomes its text
    followed by its target, as text."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        dropped: list[str] = []
        for token in block.children:
            if token.type == "link_open":
                href = str(token.attrGet("href") or "")
                if link_allowed(href):
                    token.attrSet("rel", "noopener noreferrer nofollow")
                    token.attrSet("target", "_blank")
                    dropped.append("")
                    children.append(token)
                else:
                    dropped.append(href)
                continue
            if token.type == "link_close" and dropped:
                href = dropped.pop()
                if not href:
                    children.append(token)
                    continue
                text = Token("text", "", 0)
                text.content = f" ⟨{href}⟩"
                children.append(text)
                continue
            children.append(token)
        block.children = children


_PARSER = _markdown()


def markdown_html(text: Any) -> Markup:
    """Markdown as a safe HTML fragment (see the module docstring)."""
    return Markup(_PARSER.render(visible_controls(text or "")))


def json_html(text: str) -> Markup | None:
    """``text`` pretty-printed when it is a JSON object or array, else None."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    pretty = json.dumps(data, indent=2, ensure_ascii=False)
    return Markup('<pre class="json"><code>') + escape(visible_controls(pretty)) + Markup("</code></pre>")


def text_html(text: Any) -> Markup:
    """A sample text as HTML: pretty JSON when it is JSON, else Markdown."""
    string = "" if text is None else text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return json_html(string) or markdown_html(string)


_ROLES = ("system", "user", "assistant", "tool", "developer")


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts; anything
    else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, str) or (isinstance(p, dict) and "text" in p) for p in content):
        return "\n".join(p if isinstance(p, str) else str(p["text"]) for p in content)
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def turn_html(message: Any) -> Markup:
    """One turn of a transcript: its role, then its content (and tool calls, as JSON)."""
    if not isinstance(message, Mapping):
        return Markup('<div class="turn role-other">') + text_html(json.dumps(message, default=str)) + Markup("</div>")
    role = str(message.get("role", "?"))
    kind = role if role in _ROLES else "other"
    parts = [Markup(f'<div class="turn role-{kind}"><div class="role">'), escape(visible_controls(role)),
             Markup("</div>"), text_html(content_text(message.get("content")))]
    if message.get("tool_calls"):
        parts.append(json_html(json.dumps(message["tool_calls"], default=str)) or Markup(""))
    parts.append(Markup("</div>"))
    return Markup("").join(parts)


def transcript_html(messages: list[Any]) -> Markup:
    """Turns of a transcript, one after the other."""
    return Markup("").join(turn_html(message) for message in messages)


def _graded_turn(messages: list[Any]) -> int | None:
    """The index of the last assistant turn (the one graded by default)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], Mapping) and messages[index].get("role") == "assistant":
            return index
    return None


def sample_html(sample: Any) -> dict[str, str]:
    """A sample's fragments for the page: ``input`` (what it answered: the input, the transcript
    before the graded turn), ``output`` (the graded text) and ``reference`` (its expected answer);
    an empty string for a part it lacks."""
    parts: list[Markup] = []
    if sample.input:
        parts.append(text_html(sample.input))
    if sample.messages:
        graded = _graded_turn(sample.messages)
        before = sample.messages if graded is None else sample.messages[:graded]
        if before:
            parts.append(Markup('<div class="transcript">') + transcript_html(before) + Markup("</div>"))
    output = text_html(sample.output)
    if sample.tool_calls:
        output += Markup('<h4 class="tool-calls">Tool calls</h4>') + (json_html(json.dumps(sample.tool_calls, default=str))
                                                                     or Markup(""))
    return {"input": str(Markup("").join(parts)), "output": str(output),
            "reference": str(text_html(sample.ground_truth)) if sample.ground_truth else ""}
