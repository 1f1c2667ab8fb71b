"""Open the built documentation site in a real browser with the network cut off: every request to
another host is refused and recorded. Takes the statistics page's picture, formulas and all.

    python docs/screenshots_docs.py                  # builds the site, writes docs/images/docs-statistics.png
    python docs/screenshots_docs.py --site DIR --out FILE --all-pages

The site (built with ``mkdocs build --strict`` into a temporary folder unless ``--site`` names one)
is served on 127.0.0.1 and opened in Debian's Chromium driven by Playwright. Only requests to
127.0.0.1 / localhost and ``data:`` / ``blob:`` URLs go through; any other is aborted and listed.
On the statistics page the formulas must be laid out as mathematics (a fraction's numerator above
its denominator), with no TeX left in the text. ``--all-pages`` opens every page of the site the
same way. Exit 0 when nothing asked for another host and the formulas rendered, 1 otherwise, 2
when the browser or the site is missing. Needs ``/usr/bin/chromium`` (``apt-get install -y
chromium``) and Playwright for Python (``pip install -e '.[test]'``); ``playwright install`` is
never needed.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
PICTURE = ROOT / "docs" / "images" / "docs-statistics.png"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "file"}
STATISTICS = "concepts/statistics/"

#: What the statistics page must show: how many formulas are MathML, whether any TeX is left in
#: the text a reader sees, whether the first fraction is drawn as one (numerator above), and
#: whether the math font the site serves was loaded.
_MATH_STATE = """() => {
  const maths = [...document.querySelectorAll('article math')];
  const frac = document.querySelector('article math mfrac');
  const [top, bottom] = frac ? [...frac.children].map(c => c.getBoundingClientRect()) : [null, null];
  const text = document.querySelector('article').innerText;
  return {
    count: maths.length,
    drawn: maths.filter(m => m.getBoundingClientRect().width > 0).length,
    stacked: !!(top && bottom && top.bottom <= bottom.top + 1 && top.height > 0 && bottom.height > 0),
    tex_left: ['\\\\(', '\\\\[', '$$', '\\\\frac'].filter(s => text.includes(s)),
    font: [...document.fonts].some(f => f.family.replace(/"/g, '') === 'STIX Two Math' && f.status === 'loaded'),
  };
}"""


def is_local(url: str) -> bool:
    """Whether the browser may fetch ``url`` with the network cut off: this machine or inline data."""
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or (parts.hostname or "") in LOCAL_HOSTS


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """``site`` over HTTP on 127.0.0.1 (the search runs in a web worker, which a file: page cannot start)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def build(into: Path) -> None:
    """``mkdocs build --strict`` into ``into``; SystemExit(2) with mkdocs's words when it fails."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(into)], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}")


def pages_of(site: Path) -> list[str]:
    """Every page of the built site, as paths under its root (``concepts/statistics/``)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        pages.append("" if relative == "." else relative + "/")
    return pages


def check(site: Path, picture: Path | None, all_pages: bool) -> list[str]:
    """Open the site offline; what went wrong, one line each (none: offline and the formulas drawn)."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    refused: list[str] = []
    with served(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
            current = {"page": ""}

            def gate(route) -> None:
                url = route.request.url
                if is_local(url):
                    route.continue_()
                else:
                    refused.append(f"{current['page'] or '/'}: {route.request.resource_type} {url}")
                    route.abort("internetdisconnected")

            context.route("**/*", gate)
            page = context.new_page()
            for path in (pages_of(site) if all_pages else [STATISTICS]):
                current["page"] = path
                page.goto(base + path, wait_until="networkidle")
            current["page"] = STATISTICS
            page.goto(base + STATISTICS, wait_until="networkidle")
            page.evaluate("document.fonts.ready")
            state = page.evaluate(_MATH_STATE)
            if state["count"] == 0 or state["drawn"] < state["count"]:
                problems.append(f"{STATISTICS}: {state['drawn']} of {state['count']} formulas drawn as MathML")
            if not state["stacked"]:
                problems.append(f"{STATISTICS}: a fraction is not laid out as one (numerator above denominator)")
            if state["tex_left"]:
                problems.append(f"{STATISTICS}: TeX left in the page's text: {', '.join(state['tex_left'])}")
            if not state["font"]:
                problems.append(f"{STATISTICS}: the math font the site serves (STIX Two Math) did not load")
            if picture is not None:
                picture.parent.mkdir(parents=True, exist_ok=True)
                heading = "document.querySelector('#cohens-kappa').getBoundingClientRect().top"
                page.evaluate(f"() => window.scrollBy(0, {heading} - 70)")  # the section under the header bar
                page.wait_for_timeout(600)  # the header's title fades to the page's as it scrolls
                page.screenshot(path=str(picture))
            context.close()
        finally:
            browser.close()
    return [f"asked another host: {line}" for line in refused] + problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a site already built (default: build one into a temporary folder)")
    parser.add_argument("--out", type=Path, default=PICTURE, help=f"the picture (default: {PICTURE.relative_to(ROOT)})")
    parser.add_argument("--no-picture", action="store_true", help="check only")
    parser.add_argument("--all-pages", action="store_true", help="open every page of the site, not only the statistics")
    args = parser.parse_args(argv)
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("Playwright for Python is missing: pip install -e '.[test]'", file=sys.stderr)
        return 2
    if not CHROMIUM.is_file():
        print(f"Chromium is missing at {CHROMIUM}: apt-get install -y chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(site)
        if not (site / STATISTICS / "index.html").is_file():
            print(f"{site}: not a built site (no {STATISTICS}index.html)", file=sys.stderr)
            return 2
        problems = check(site, None if args.no_picture else args.out, args.all_pages)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems and not args.no_picture:
        print(args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
