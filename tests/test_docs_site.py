"""The documentation site's generated parts stay true: the CLI page matches the parser, every
JSON Schema is a valid schema that rejects a malformed report, and each is checked against real
output by a documented command (``tests/test_documented_commands.py`` validates it). The built
site works offline: no page, stylesheet or script of it asks another host for anything, and in a
real browser with the network cut off the statistics page shows its formulas as mathematics."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest

from tests.doccommands import all_blocks

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = sorted((ROOT / "docs" / "reference" / "schemas").glob("*.schema.json"))


def test_the_cli_reference_is_generated_from_the_current_parser():
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_cli.py"), "--check"], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_cli_reference_lists_every_command():
    from rubric_studio.cli import SUBCOMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    assert all(f"## rubric-studio {command}\n" in page for command in SUBCOMMANDS)


def test_there_is_a_schema_for_grade_calibrate_and_probe():
    assert {p.name.split(".")[0] for p in SCHEMAS} >= {"grade", "calibrate", "probe"}


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_a_report_schema_is_valid_and_rejects_a_malformed_report(path: Path):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"usage": "none"}, schema)


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_schema_is_checked_against_real_output_by_a_documented_command(path: Path):
    name = path.name.split(".")[0]
    assert any(block.schema == name and not block.skip for block in all_blocks()), name


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert [p for p in pages if p not in nav] == []


# -- offline ----------------------------------------------------------------------------------------
#: ``<link rel>`` values that name a document without fetching it (``canonical``, ``author`` ...);
#: any other (stylesheet, preconnect, preload, icon, manifest ...) makes the browser ask.
_NAMING_RELS = {"canonical", "alternate", "author", "license", "help", "me", "next", "prev", "search", "bookmark"}
#: The attributes a browser fetches from, per element (``<a href>`` is a link a reader follows, not a fetch).
_FETCHED = {"script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "frame": ("src",),
            "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
            "embed": ("src",), "object": ("data",), "input": ("src",), "image": ("href", "xlink:href"),
            "use": ("href", "xlink:href"), "feimage": ("href", "xlink:href")}  # fmt: skip
_CSS_URL = re.compile(r"""(?:url\(\s*|@import\s+)["']?\s*(?P<url>(?:[a-z][a-z0-9+.-]*:)?//[^"')\s;]+)""", re.I)
_JS_FETCH = re.compile(
    r"""\b(?:fetch|import|importScripts|Worker|SharedWorker|EventSource|WebSocket|sendBeacon|open)\s*\("""
    r"""(?:\s*["'`][A-Z]+["'`]\s*,)?\s*["'`](?P<url>(?:[a-z][a-z0-9+.-]*:)?//[^"'`\s]+)""", re.I)
_JS_SRC = re.compile(r"""\.(?:src|href)\s*=\s*["'`](?P<url>(?:[a-z][a-z0-9+.-]*:)?//[^"'`\s]+)""", re.I)
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _off_machine(url: str) -> bool:
    parts = urlsplit(url.strip())
    if parts.scheme and parts.scheme.lower() not in ("http", "https", "ws", "wss"):
        return False  # data:, blob:, mailto: ... (a relative URL has no scheme and no host: this site)
    return bool(parts.hostname) and parts.hostname not in LOCAL_HOSTS


def _in_css(text: str) -> list[str]:
    return [m["url"] for m in _CSS_URL.finditer(text) if _off_machine(m["url"])]


def _in_js(text: str) -> list[str]:
    found = [m["url"] for pattern in (_JS_FETCH, _JS_SRC) for m in pattern.finditer(text)]
    return [url for url in found if _off_machine(url)]


class _PageScan(HTMLParser):
    """The URLs of another host one HTML page makes the browser fetch."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._inside: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        urls = [values[a] for a in _FETCHED.get(tag, ()) if a in values]
        if tag == "link" and not set(values.get("rel", "").lower().split()) <= _NAMING_RELS:
            urls.append(values.get("href", ""))
        for url in urls:  # a srcset lists "URL width, URL width"
            self.found += [u for u in re.split(r"\s*,\s*|\s+", url) if u and _off_machine(u)]
        self.found += _in_css(values.get("style", ""))
        self._inside = tag if tag in ("style", "script") else None

    def handle_endtag(self, tag: str) -> None:
        self._inside = None

    def handle_data(self, data: str) -> None:
        if self._inside == "style":
            self.found += _in_css(data)
        elif self._inside == "script":
            self.found += _in_js(data)


def offsite_fetches(site: Path) -> list[str]:
    """Every request to another host the built ``site`` would make: ``file: url``, one per find."""
    found: list[str] = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css", ".js", ".svg") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".html", ".svg"):
            scan = _PageScan()
            scan.feed(text)
            urls = scan.found
        else:
            urls = _in_css(text) if path.suffix == ".css" else _in_js(text)
        found += [f"{path.relative_to(site)}: {url}" for url in urls]
    return found


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` writes it (the docs extra: pip install -e '.[docs]')."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    site = tmp_path_factory.mktemp("site")
    # not -q: mkdocs then drops its warnings before --strict counts them, and builds anyway
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return site


def test_the_scan_finds_every_kind_of_request_to_another_host(tmp_path: Path):
    (tmp_path / "index.html").write_text(
        '<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        '<link rel="stylesheet" href="https://cdn.example/a.css"><link rel="preconnect" href="https://fonts.example">'
        '<link rel="canonical" href="https://docs.example/"><script src="//cdn.example/b.js"></script>'
        "<style>@import 'https://cdn.example/c.css';</style><script>fetch('https://api.example/d')</script></head>"
        '<body><a href="https://elsewhere.example/">a link</a><img srcset="/local.png 1x, https://img.example/e.png 2x">'
        '<math xmlns="http://www.w3.org/1998/Math/MathML"></math><div style="background: url(http://img.example/f)">'
        '<script src="http://127.0.0.1:8000/local.js"></script><img src="data:image/png;base64,AAAA"></body></html>')
    (tmp_path / "site.css").write_text('a{background:url("data:image/svg+xml;<svg xmlns=\'http://www.w3.org/2000/svg\'>")}'
                                       "@font-face{src:url(https://fonts.example/g.woff2)}")
    (tmp_path / "site.js").write_text('var u="https://not-fetched.example";import("https://cdn.example/h.js");'
                                      's.src="https://cdn.example/i.js";x.open("GET","https://api.example/j")')
    found = offsite_fetches(tmp_path)
    assert sorted(f.split("/")[-1] for f in found) == ["a.css", "b.js", "c.css", "d", "e.png", "f", "fonts.example",
                                                       "g.woff2", "h.js", "i.js", "j"], found


def test_the_built_site_asks_no_other_host_for_anything(built_site: Path):
    assert offsite_fetches(built_site) == []


def test_the_theme_never_loads_its_optional_scripts_from_another_host(built_site: Path):
    """The theme's script loads a few things from other hosts only when asked to: statistics of a
    GitHub repository (``repo_url``), mermaid for a mermaid diagram. Neither is asked for."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert not re.search(r"^repo_url:", config, re.M)
    pages = [p.read_text() for p in built_site.rglob("*.html")]
    assert not any('class="mermaid"' in page for page in pages)


def test_the_formulas_are_mathml_in_the_built_pages_with_the_math_font_beside_them(built_site: Path):
    statistics = (built_site / "concepts" / "statistics" / "index.html").read_text()
    assert statistics.count("<math") >= 40
    assert 'class="arithmatex"' not in statistics and "\\frac" not in statistics.split("<annotation")[0]
    assert (built_site / "assets" / "fonts" / "STIXTwoMath-Regular.ttf").stat().st_size > 100_000
    assert "assets/fonts/STIXTwoMath-Regular.ttf" in (built_site / "stylesheets" / "math.css").read_text()


def _math_hook():
    pytest.importorskip("latex2mathml", reason="the docs extra is not installed: pip install -e '.[docs]'")
    spec = importlib.util.spec_from_file_location("docs_mathml_hook", ROOT / "docs" / "hooks" / "mathml.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_formula_becomes_mathml_with_its_tex_kept_and_a_bad_one_is_warned(caplog: pytest.LogCaptureFixture):
    hook = _math_hook()
    page = type("Page", (), {"file": type("File", (), {"src_uri": "p.md"})()})()
    html = hook.on_page_content('<p><span class="arithmatex">\\(\\hat p &lt; [-1, 1]\\)</span></p>'
                                '<div class="arithmatex">\\[\\frac{a}{b}\\]</div>', page=page)
    assert html.count("<math") == 2 and 'display="block"' in html and "<mfrac>" in html
    assert '<mover accent="true"><mi>p</mi><mo stretchy="false">\u02c6</mo></mover>' in html  # a hat over its letter
    assert '<mo form="prefix">\u2212</mo><mn>1</mn>' in html  # a sign, not a binary minus
    assert '<annotation encoding="application/x-tex">\\hat p &lt; [-1, 1]</annotation>' in html
    broken = '<span class="arithmatex">\\(\\frac{a}{\\)</span>'
    with caplog.at_level("WARNING", logger="mkdocs.hooks.mathml"):
        assert hook.on_page_content(broken, page=page) == broken
    assert "p.md: a formula cannot be written as MathML" in caplog.text


def _browser_missing() -> str | None:
    if not Path("/usr/bin/chromium").is_file():
        return "Debian's Chromium is not installed at /usr/bin/chromium"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed"
    return None


@pytest.mark.long
def test_offline_in_a_real_browser_every_page_loads_and_the_formulas_render(built_site: Path, tmp_path: Path):
    if (why := _browser_missing()) is not None:
        if os.environ.get("RUBRIC_STUDIO_REQUIRE_BROWSER") == "1":
            pytest.fail(f"RUBRIC_STUDIO_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    picture = tmp_path / "statistics.png"
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "screenshots_docs.py"), "--site", str(built_site),
                           "--out", str(picture), "--all-pages"], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert picture.stat().st_size > 10_000
