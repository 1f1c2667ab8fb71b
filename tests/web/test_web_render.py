"""Sample text is hostile: nothing in it runs, loads or misleads once rendered for the page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from rubric_studio.web import markdown_html, visible_controls
from tests.web.conftest import Labeller


class _Elements(HTMLParser):
    """Every element and attribute of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.tags


def assert_inert(html: str) -> None:
    assert "<script" not in html.lower() and "<img" not in html.lower() and "<svg" not in html.lower()
    for tag, attrs in elements(html):
        assert tag in {"p", "a", "strong", "em", "code", "pre", "div", "ul", "ol", "li", "blockquote", "h1", "h2",
                       "h3", "h4", "h5", "h6", "hr", "br"}, tag
        assert not any(name.startswith("on") or name == "style" for name in attrs), (tag, attrs)
        if tag == "a":
            assert attrs["href"].startswith(("http://", "https://", "mailto:")), attrs
            assert attrs["rel"] == "noopener noreferrer nofollow" and attrs["target"] == "_blank"
    for mark in ("\u202e", "\u2066", "\x1b", "\x07", "\u061c"):
        assert mark not in html


def test_the_hostile_sample_is_rendered_inert(labeller: Labeller):
    view = labeller.client("lena").get("/api/samples/hostile").json()
    for part in ("input", "output", "reference"):
        assert_inert(view["html"][part])
    output = view["html"]["output"]
    assert "&lt;script&gt;" in output  # shown as text, not dropped: the annotator judges what the model wrote
    assert "[image: pic]" in output and "tracker.example" not in output  # never loaded
    assert '<a href="https://example.org/a" rel="noopener noreferrer nofollow" target="_blank">ok</a>' in output
    assert "javascript:" not in [attrs.get("href", "") for _, attrs in elements(output)]
    assert "ftp ⟨ftp://host/x⟩" in output  # a link of another scheme: its text and target as text
    assert "[file](file:///etc/passwd)" in output  # one markdown-it refuses outright stays the source text
    assert "RLO⟨U+202E⟩evil⟨U+2066⟩" in output and "ctl⟨U+001B⟩[31m" in output and "alm⟨U+061C⟩" in output
    assert "&lt;b&gt;in&lt;/b&gt;⟨U+202E⟩" in view["html"]["input"]


def test_a_transcript_is_shown_as_turns_and_json_pretty_printed(labeller: Labeller):
    view = labeller.client("lena").get("/api/samples/chat").json()
    turns = view["html"]["input"]
    assert_inert(turns)
    assert [attrs["class"] for tag, attrs in elements(turns) if "turn" in (attrs.get("class") or "")] == [
        "turn role-system", "turn role-other"]  # an unknown role gets no class of its own
    assert "user&lt;script&gt;" in turns and "hi &lt;img src=x onerror=alert(1)&gt;" in turns
    output = view["html"]["output"]
    assert output.startswith('<pre class="json"><code>{\n  &#34;answer&#34;: &#34;&lt;script&gt;x&lt;/script&gt;&#34;')


def test_the_page_text_fields_have_hidden_characters_made_visible(labeller: Labeller):
    labeller.rubric.write_text(labeller.rubric.read_text().replace("Gives the right answer", '"Gives\\u202e the right\\e"'))
    criteria = labeller.client("alice").get("/api/samples/s0").json()["criteria"]
    assert criteria[0]["outcome"] == "Gives⟨U+202E⟩ the right⟨U+001B⟩"


@pytest.mark.parametrize(("text", "shown"), [
    ("a\u202eb", "a⟨U+202E⟩b"), ("x\u200fy\u200e", "x⟨U+200F⟩y⟨U+200E⟩"), ("tab\tnew\nline", "tab\tnew\nline"),
    ("cr\r\nlf", "cr\nlf"), ("lone\rcr", "lone⟨U+000D⟩cr"), ("c1\x85", "c1⟨U+0085⟩"), ("\u2069", "⟨U+2069⟩"),
])
def test_visible_controls(text: str, shown: str):
    assert visible_controls(text) == shown


@pytest.mark.parametrize("source", [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))", "[x](data:text/html,<script>alert(1)</script>)", "[x](vbscript:msgbox)",
    "<a href='javascript:alert(1)'>x</a>", "<svg><script>alert(1)</script></svg>", "![x](javascript:alert(1))",
    "[x](//evil.example/path)", "[x](/api/labels/s0)", "<iframe src=https://evil.example></iframe>",
    "```html\n<script>alert(1)</script>\n```", "[x]: javascript:alert(1)\n\n[click][x]",
])
def test_markdown_keeps_no_active_html(source: str):
    assert_inert(str(markdown_html(source)))
