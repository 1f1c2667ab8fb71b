"""Code and tests cite the project's own documentation, never a document outside the repository.

A module or a test that follows a documented contract says where it is written down: a page of
the docs and, when it is one part of the page, the heading's anchor —
``docs/concepts/scoring.md#penalties``. These tests keep every such citation in ``rubric_studio/``,
``tests/`` and ``bench/`` pointing at a page that exists and a heading it has, with anchors formed
as the site forms them (Python-Markdown's ``toc`` slugs, or an explicit ``{ #id }``), and keep out
citations of the product spec the project started from, which is not in the repository: the next
maintainer cannot open it, so what it said that the code relies on belongs in the docs.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: The word that cited the outside spec ("... §3"), spelled apart so this file does not cite it.
_OUTSIDE_SPEC = re.compile(r"\b" + "BRI" + r"EF\b")
_CITATION = re.compile(r"(?<![\w/.-])docs/(?P<page>[\w./-]+?\.md)(?:#(?P<anchor>[\w-]+))?")
_TEXT_SUFFIXES = {".py", ".md", ".txt", ".yaml", ".yml", ".toml", ".json", ".jsonl", ".tcss", ".html", ".js",
                  ".css", ".cfg", ".ini", ".sh"}  # fmt: skip
#: Folders of other projects' files (fixtures) and generated ones, which cite nothing of ours.
_NOT_OURS = {"__pycache__", "__snapshots__", "fixtures"}


def _text_files(*folders: Path, skip: set[str] = frozenset()) -> Iterator[Path]:
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            ours = not skip & set(path.relative_to(ROOT).parts)
            if ours and path.suffix in _TEXT_SUFFIXES and path.is_file():
                yield path


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return
    yield from enumerate(text.splitlines(), start=1)


# -- anchors as the site forms them -------------------------------------------------------------------
_FENCE = re.compile(r"^ {0,3}(?P<mark>`{3,}|~{3,})")
_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)(?:\s+#+)?\s*$")
_ATTR_LIST = re.compile(r"\s*\{:?(?P<attrs>[^}]*)\}\s*$")
_ATTR_ID = re.compile(r"(?:^|\s)#(?P<id>[\w-]+)")
_HTML_ID = re.compile(r"""<[a-zA-Z][^>]*\sid=["'](?P<id>[^"']+)["']""")
_COUNTED = re.compile(r"^(?P<base>.*)_(?P<n>[0-9]+)$")
_BUILT_ID = re.compile(r"""\sid=["']([^"']+)["']""")


def slug(heading: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading (its default ``slugify``, over the text
    the heading renders to: link targets, code marks, emphasis and tags dropped)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", html.unescape(text)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _unique(anchor: str, taken: set[str]) -> str:
    """``toc``'s rule for a repeated anchor: ``name``, then ``name_1``, ``name_2`` ..."""
    while anchor in taken or not anchor:
        counted = _COUNTED.match(anchor)
        anchor = f"{counted['base']}_{int(counted['n']) + 1}" if counted else f"{anchor}_1"
    return anchor


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every anchor of a docs page: its headings' and the ids given by attribute lists or HTML."""
    found: set[str] = set()
    fence: str | None = None
    for _, line in _lines(page):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened["mark"][0] == fence[0] and len(opened["mark"]) >= len(fence) \
                    and not line.strip().strip(fence[0]):  # fmt: skip
                fence = None
            continue
        if opened:
            fence = opened["mark"]
            continue
        found.update(m["id"] for m in _HTML_ID.finditer(line))
        heading = _HEADING.match(line)
        attrs = _ATTR_LIST.search(line)
        given = _ATTR_ID.search(attrs["attrs"]) if attrs else None
        if heading:
            found.add(given["id"] if given else _unique(slug(heading["text"]), found))
        elif given:
            found.add(given["id"])
    return frozenset(found)


def broken_citations(lines: list[tuple[str, str]]) -> list[str]:
    """The citations among ``(where, line)`` pairs whose page or anchor does not exist, one line each."""
    broken = []
    for where, line in lines:
        for cited in _CITATION.finditer(line):
            page = DOCS / cited["page"]
            if not page.is_file():
                broken.append(f"{where}: {cited[0]}: no such page")
            elif cited["anchor"] and cited["anchor"] not in anchors(page):
                broken.append(f"{where}: {cited[0]}: no heading with that anchor on the page "
                              f"(it has {', '.join(sorted(anchors(page)))})")  # fmt: skip
    return broken


def _cited_lines() -> list[tuple[str, str]]:
    """The lines that may cite a docs page (this file's broken examples excepted)."""
    folders = (ROOT / "rubric_studio", ROOT / "tests", ROOT / "bench")
    return [(f"{path.relative_to(ROOT)}:{number}", line)
            for path in _text_files(*folders, skip=_NOT_OURS) if path != Path(__file__).resolve()
            for number, line in _lines(path) if "docs/" in line]  # fmt: skip


# -- tests ----------------------------------------------------------------------------------------------
def test_nothing_cites_the_spec_kept_outside_the_repository():
    folders = [ROOT / name for name in ("rubric_studio", "tests", "bench", "docs")]
    files = [*_text_files(*folders, skip={"__pycache__"}), *sorted(ROOT.glob("*.md"))]
    cited = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in files for number, line in _lines(path) if _OUTSIDE_SPEC.search(line)]  # fmt: skip
    assert cited == [], "cite the docs page (and heading) stating the contract instead:\n" + "\n".join(cited)


def test_every_cited_docs_page_and_heading_exists():
    cited = _cited_lines()
    assert any(_CITATION.search(line) for _, line in cited)  # the scan sees the citations there are
    assert broken_citations(cited) == []


def test_a_citation_of_a_missing_page_or_heading_is_reported():
    assert broken_citations([("a.py:1", "see docs/concepts/scoring.md#penalties.")]) == []
    scoring_anchors = ", ".join(sorted(anchors(DOCS / "concepts" / "scoring.md")))
    line = "the rule of docs/concepts/scoring.md#no-such-rule, and docs/no-page.md"
    found = broken_citations([("a.py:2", line)])
    assert found == [
        "a.py:2: docs/concepts/scoring.md#no-such-rule: no heading with that anchor on the page "
        f"(it has {scoring_anchors})",
        "a.py:2: docs/no-page.md: no such page",
    ]


@pytest.mark.parametrize(("heading", "anchor"), [
    ("The studio's code", "the-studios-code"),
    ("Adding an import/export format", "adding-an-importexport-format"),
    ("`rubric-studio grade` and **JSON**", "rubric-studio-grade-and-json"),
    ("Cohen's kappa", "cohens-kappa"),
    ("[Trust](trust.md) and keys", "trust-and-keys"),
])  # fmt: skip
def test_a_heading_slug_is_the_one_toc_forms(heading: str, anchor: str):
    assert slug(heading) == anchor


def test_the_anchors_read_here_are_the_ones_the_site_builds():
    """Every page rendered with the site's own Markdown extensions (``mkdocs.yml``) has exactly the
    anchors :func:`anchors` reads from its source, so a citation checked here resolves on the site."""
    markdown = pytest.importorskip("markdown")
    pytest.importorskip("pymdownx")
    import yaml

    extensions, configs = [], {}
    for entry in yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["markdown_extensions"]:
        name, config = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        extensions.append(name)
        configs[name] = config or {}
    renderer = markdown.Markdown(extensions=extensions, extension_configs=configs)
    differ = {}
    for page in sorted(DOCS.rglob("*.md")):
        built = set(_BUILT_ID.findall(renderer.reset().convert(page.read_text(encoding="utf-8"))))
        read = anchors(page)
        if built != read:
            name = page.relative_to(DOCS).as_posix()
            differ[name] = {"only built": sorted(built - read), "only read": sorted(read - built)}
    assert differ == {}
