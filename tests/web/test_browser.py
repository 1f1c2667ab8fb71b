"""The web labeller in a real browser: Debian's Chromium, driven by Playwright, against the real
``rubric-studio serve`` started by its command line in a subprocess.

* An annotator labels by keys and by mouse, and each label lands in the sidecar store as theirs,
  exactly; the token leaves the address bar; the progress advances; nothing of anyone else shows.
* At phone width (390×844) the sample and the controls fit without scrolling sideways, and taps label.
* Hostile samples (tests/hostile/web_samples.jsonl) under a hostile rubric (web_rubric.yaml), seen by
  an annotator and by the lead, poked with the mouse: nothing runs, no dialog opens, no request
  leaves the server, the Content-Security-Policy never has to stop anything (the server escaped it
  all), hidden characters show as marks, and the page's own controls stay visible and work.
* Offline: with every request to another host aborted, the page loads whole and none is even tried.
* The lead sees two annotators' labels side by side and adjudicates from the page.
* A link followed from another site (a mail in a webmail) opens the page.

The module is skipped when /usr/bin/chromium or Playwright is missing, unless
``RUBRIC_STUDIO_REQUIRE_BROWSER=1`` (CI sets it where Chromium is installed): then it fails.
One browser per test process (a module-scoped fixture); Playwright gives it a new, empty
profile (a temporary user data dir); it is never downloaded (no ``playwright install``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests._timing import scaled

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_ENV = "RUBRIC_STUDIO_REQUIRE_BROWSER"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    if not CHROMIUM.is_file():
        return f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


_WHY = _missing()
if _WHY is not None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {_WHY}", pytrace=False)
    pytest.skip(f"browser tests skipped: {_WHY}", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright  # noqa: E402

from rubric_studio.core.labels import ADJUDICATED, Label, labels_path_for, load_labels  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "sample_rubrics" / "support_reply"
HOSTILE = ROOT / "tests" / "hostile"
HOSTILE_SAMPLES = HOSTILE / "web_samples.jsonl"
HOSTILE_RUBRIC = HOSTILE / "web_rubric.yaml"
WAIT_MS = scaled(15) * 1000
#: The characters the page must show as marks such as ⟨U+202E⟩ (docs/reference/web-api.md).
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
HIDDEN_JS = r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"


# -- the server ------------------------------------------------------------------------------------
@dataclass
class Server:
    """A running ``rubric-studio serve``: its links by person, its origin and its rubric."""

    process: subprocess.Popen
    links: dict[str, str]
    origin: str
    rubric: Path

    def token(self, name: str) -> str:
        return parse_qs(urlsplit(self.links[name]).query)["token"][0]

    def labels_of(self, annotator: str) -> dict[str, Label]:
        """Sample id -> ``annotator``'s label, as the sidecar store reads it (journal included)."""
        by_sample = load_labels(labels_path_for(self.rubric)).by_annotator
        return {sample: labels[annotator] for sample, labels in by_sample.items() if annotator in labels}

    def put_label(self, name: str, sample_id: str, body: dict[str, Any]) -> None:
        """Write ``name``'s label through the JSON API, as a script would (Bearer token)."""
        request = urllib.request.Request(f"{self.origin}/api/labels/{quote(sample_id, safe='')}", method="PUT",
                                         data=json.dumps(body).encode(),
                                         headers={"Authorization": f"Bearer {self.token(name)}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=scaled(10)) as answer:
            assert answer.status == 200


def _person_printed(printed: str, people: list[str]) -> str:
    """The person a printed name stands for (the terminal sees hidden characters escaped, ``\\u202e``)."""
    for person in people:
        if printed in (person, HIDDEN.sub(lambda m: m.group().encode("unicode_escape").decode(), person)):
            return person
    raise AssertionError(f"serve printed a link for {printed!r}, not one of {people}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve(folder: Path, rubric: Path, samples: Path | None, annotators: list[str], lead: str,
          extra: tuple[str, ...] = ()) -> Iterator[Server]:
    """``python -m rubric_studio serve`` on a free port; its links read from its standard output;
    stopped at the end (terminate, then kill)."""
    port = _free_port()
    command = [sys.executable, "-m", "rubric_studio", "serve", str(rubric), *([str(samples)] if samples else []),
               "--annotators", ",".join(annotators), "--lead", lead, "--port", str(port), *extra]
    home = folder / "home"
    env = {**os.environ, "RUBRIC_STUDIO_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
           "RUBRIC_STUDIO_CACHE": str(home / "cache" / "judge-cache.sqlite"), "PYTHONIOENCODING": "utf-8"}
    stderr_path = folder / f"serve-{port}.stderr"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, cwd=folder, env=env,
                                   text=True, encoding="utf-8")
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in process.stdout:  # type: ignore[union-attr]
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    links: dict[str, str] = {}
    try:
        while len(links) < len(annotators) + 1:
            try:
                line = lines.get(timeout=scaled(30))
            except queue.Empty:
                line = None
            if line is None:
                pytest.fail(f"serve printed {len(links)} links, then stopped or hung:\n"
                            f"{stderr_path.read_text(errors='replace')}")
            printed, _, link = line.rstrip("\n").partition(": ")
            links[_person_printed(printed, [*annotators, lead])] = link
        origin = f"http://127.0.0.1:{port}"
        assert all(link.startswith(f"{origin}/?token=") for link in links.values()), links
        yield Server(process, links, origin, rubric)
    finally:
        process.terminate()
        try:
            process.wait(timeout=scaled(5))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def copy_support_reply(into: Path) -> Path:
    """The bundled support-reply rubric, its samples and its labels, copied (labels get written)."""
    folder = into / "support_reply"
    shutil.copytree(SUPPORT, folder)
    return folder / "support_reply.yaml"


# -- the browser -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


#: Recorded in every page before its own script runs: what the Content-Security-Policy had to stop.
CSP_WATCH = """
window.addEventListener("securitypolicyviolation", function (event) {
  (window.__cspViolations = window.__cspViolations || []).push(
    event.violatedDirective + " blocked " + (event.blockedURI || "inline") + " at " + (event.sourceFile || "?"));
}, true);
"""


@dataclass
class Watch:
    """Everything a browser context did that a hostile sample could have caused."""

    origin: str
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    popups: list[str] = field(default_factory=list)

    def attach(self, context: BrowserContext) -> None:
        context.on("request", lambda request: self.requests.append(request.url))
        context.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        context.on("dialog", self._dialog)
        context.on("page", self._page)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _page(self, page: Page) -> None:
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("popup", lambda popup: self.popups.append(popup.url))

    def reset(self) -> None:
        """Forget what was seen so far (each hostile sample answers for its own)."""
        for seen in (self.requests, self.console, self.dialogs, self.errors, self.popups):
            seen.clear()

    def foreign_requests(self) -> list[str]:
        """Requests to anything but the server (the page's own ``data:,`` icon aside)."""
        return [url for url in self.requests if not url.startswith(f"{self.origin}/") and url != "data:,"]

    def problems(self) -> list[str]:
        return ([f"request off the server: {url}" for url in self.foreign_requests()]
                + [f"dialog: {text}" for text in self.dialogs]
                + [f"console {text}" for text in self.console if text.startswith("error") or "Refused to" in text
                   or "Content Security Policy" in text]
                + [f"page error: {text}" for text in self.errors]
                + [f"popup: {url}" for url in self.popups])


def open_context(browser: Browser, server: Server, **options: Any) -> tuple[BrowserContext, Watch]:
    context = browser.new_context(**options)
    context.set_default_timeout(WAIT_MS)
    context.add_init_script(CSP_WATCH)
    watch = Watch(server.origin)
    watch.attach(context)
    return context, watch


def log_in(context: BrowserContext, server: Server, name: str) -> Page:
    """Open ``name``'s link in a new page and wait for their first sample."""
    page = context.new_page()
    page.goto(server.links[name])
    wait_for_a_sample(page)
    return page


def wait_for_a_sample(page: Page) -> None:
    page.wait_for_function("() => document.body.dataset.sampleId !== ''")
    wait_for_progress(page)


def wait_for_progress(page: Page) -> None:
    """The counter (and the lead's list of annotators) come from their own request: wait for it."""
    page.wait_for_function("() => / of /.test(document.getElementById('progress').textContent)"
                           " && (!document.getElementById('lead-progress')"
                           "     || document.getElementById('lead-progress').children.length > 0)")


def wait_for_sample(page: Page, sample_id: str) -> None:
    try:
        page.wait_for_function("id => document.body.dataset.sampleId === id", arg=sample_id)
    except Exception as exc:  # say what the page shows instead
        shown = page.evaluate("() => [document.body.dataset.sampleId, document.getElementById('status').textContent]")
        raise AssertionError(f"sample {sample_id!r} did not open; the page shows {shown!r}") from exc


def open_sample(context: BrowserContext, server: Server, sample_id: str) -> Page:
    """A new page at ``/#<id>`` (the page opens the sample its address names)."""
    page = context.new_page()
    page.goto(f"{server.origin}/#{quote(sample_id, safe='')}")
    wait_for_sample(page, sample_id)
    wait_for_progress(page)
    return page


def saved_and_moved(page: Page, before: str) -> None:
    """Wait until the label of ``before`` is saved and the next sample is open."""
    page.wait_for_function(
        "before => document.body.dataset.sampleId !== before"
        " && document.getElementById('status').dataset.state === 'saved'", arg=before)


def saved(page: Page) -> None:
    page.wait_for_function("() => document.getElementById('status').dataset.state === 'saved'")


def pressed(page: Page, selector: str) -> str | None:
    return page.get_attribute(selector, "aria-pressed")


def criterion(sample_criterion: str, value: str) -> str:
    return f'#criteria fieldset[data-criterion="{sample_criterion}"] button[data-value="{value}"]'


def no_sideways_scroll(page: Page) -> tuple[int, int]:
    return tuple(page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]"))


# -- a. an annotator labels by keys and by mouse ------------------------------------------------------
def test_an_annotator_labels_by_keys_and_by_mouse_and_each_label_lands_as_theirs(browser: Browser, tmp_path: Path):
    rubric = copy_support_reply(tmp_path)
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        server.put_label("bob", "refund-within-window", {"verdict": "fail", "note": "bob's private note"})
        context, watch = open_context(browser, server)
        page = log_in(context, server, "alice")

        # The token traded for a cookie the page's script cannot read, and gone from the address bar.
        assert "token" not in page.url and page.url.startswith(f"{server.origin}/")
        assert page.evaluate("() => [location.search, document.cookie]") == ["", ""]
        assert page.get_attribute("body", "data-person") == "alice"
        assert page.get_attribute("body", "data-role") == "annotator"
        # Blind: no lead panel, nobody else's label (bob's, nor the unnamed ones already in the sidecar).
        assert page.query_selector("#lead-panel") is None
        text = page.inner_text("body")
        assert "bob's private note" not in text and "Refund and plan switch both handled" not in text
        assert (pressed(page, "#verdict-fail"), pressed(page, "#verdict-pass"), page.input_value("#note")) == \
               ("false", "false", "")
        assert page.text_content("#progress") == "0 of 15"

        # ? shows the keys, Escape hides them; j / k step without saving.
        first = page.get_attribute("body", "data-sample-id")
        assert first == "refund-within-window"
        page.keyboard.press("?")
        assert page.is_visible("#help")
        page.keyboard.press("Escape")
        assert page.is_hidden("#help")
        page.keyboard.press("j")
        wait_for_sample(page, "refund-late-request")
        page.keyboard.press("ArrowLeft")
        wait_for_sample(page, first)

        expected: dict[str, Label] = {}

        # 1. Keys only: p, criteria by their digits (cycling), a note through n / Escape, Enter.
        for key in ("p", "1", "2", "2", "4", "3", "3", "3"):
            page.keyboard.press(key)
        assert pressed(page, "#verdict-pass") == "true" and pressed(page, "#verdict-fail") == "false"
        assert pressed(page, criterion("resolves-issue", "met")) == "true"
        assert pressed(page, criterion("policy-accurate", "unmet")) == "true"
        assert pressed(page, criterion("tone", "met")) == "false" and pressed(page, criterion("tone", "unmet")) == "false"
        page.keyboard.press("n")
        page.keyboard.type("typed by keys")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        saved_and_moved(page, first)
        expected[first] = Label(verdict="pass", note="typed by keys",
                                criteria={"resolves-issue": "met", "policy-accurate": "unmet", "asks-for-credentials": "met"})
        page.wait_for_function("() => document.getElementById('progress').textContent === '1 of 15'")

        # 2. Mouse only: criterion buttons, the verdict button, a typed note, Save.
        second = page.get_attribute("body", "data-sample-id")
        page.click(criterion("resolves-issue", "unmet"))
        page.click(criterion("tone", "met"))
        page.click("#verdict-fail")
        page.click("#note")
        page.keyboard.type("clicked: <b>not bold</b> ünïcödé")
        page.click("#save")
        saved_and_moved(page, second)
        expected[second] = Label(verdict="fail", note="clicked: <b>not bold</b> ünïcödé",
                                 criteria={"resolves-issue": "unmet", "tone": "met"})
        page.wait_for_function("() => document.getElementById('progress').textContent === '2 of 15'")

        # 3. Mouse, changing its mind: verdict and criterion buttons toggle; an analytic score.
        third = page.get_attribute("body", "data-sample-id")
        for selector in ("#verdict-pass", "#verdict-fail", "#verdict-fail", "#verdict-pass"):
            page.click(selector)
        for selector in (criterion("policy-accurate", "met"), criterion("policy-accurate", "met"),
                         criterion("policy-accurate", "unmet")):
            page.click(selector)
        assert pressed(page, "#verdict-pass") == "true" and pressed(page, criterion("policy-accurate", "met")) == "false"
        page.fill('input[type="number"][data-criterion="tone"]', "8")
        assert pressed(page, criterion("tone", "met")) == "true"
        page.click("#save")
        saved_and_moved(page, third)
        expected[third] = Label(verdict="pass", criteria={"policy-accurate": "unmet", "tone": "met"},
                                criterion_scores={"tone": 8})

        # 4. Keys after the mouse: a click on the page's text, then f, 1 and Enter.
        fourth = page.get_attribute("body", "data-sample-id")
        page.click("#sample-heading")
        for key in ("f", "1", "Enter"):
            page.keyboard.press(key)
        saved_and_moved(page, fourth)
        expected[fourth] = Label(verdict="fail", criteria={"resolves-issue": "met"})

        # 5. A bare verdict: p, Enter.
        fifth = page.get_attribute("body", "data-sample-id")
        page.keyboard.press("p")
        page.keyboard.press("Enter")
        saved_and_moved(page, fifth)
        expected[fifth] = Label(verdict="pass")
        page.wait_for_function("() => document.getElementById('progress').textContent === '5 of 15'")

        assert len(set(expected)) == 5
        stored = server.labels_of("alice")
        for sample_id, label in expected.items():
            got = stored.get(sample_id)
            assert got is not None, f"{sample_id}: no label of alice in the store"
            assert (got.verdict, got.criteria, got.note, got.criterion_scores) == \
                   (label.verdict, label.criteria, label.note, label.criterion_scores), sample_id
        assert set(stored) == set(expected)  # nothing else written under her name
        assert server.labels_of("bob")["refund-within-window"].note == "bob's private note"  # bob's kept
        assert watch.problems() == []
        context.close()


# -- b. phone width ------------------------------------------------------------------------------------
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


def test_at_phone_width_the_sample_and_controls_fit_and_taps_label(browser: Browser, tmp_path: Path):
    rubric = copy_support_reply(tmp_path)
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        context, watch = open_context(browser, server, **PHONE)
        page = log_in(context, server, "bob")
        width, inner = no_sideways_scroll(page)
        assert inner == 390 and width <= inner, f"the page scrolls sideways: {width} > {inner}"
        for selector in ("#sample-output", "#criteria", criterion("resolves-issue", "met"), "#verdict-pass",
                         "#verdict-fail", "#note", "#save", "#prev", "#next", "#progress"):
            box = page.locator(selector).bounding_box()
            assert box is not None and box["width"] > 0, f"{selector} is not shown"
            assert box["x"] >= 0 and box["x"] + box["width"] <= inner + 0.5, f"{selector} sticks out: {box}"
        assert page.inner_text("#sample-output").strip()

        first = page.get_attribute("body", "data-sample-id")
        page.locator(criterion("resolves-issue", "met")).tap()
        page.locator(criterion("asks-for-credentials", "unmet")).tap()
        page.locator("#verdict-pass").tap()
        page.locator("#note").tap()
        page.keyboard.type("tapped on a phone")
        page.locator("#save").tap()
        saved_and_moved(page, first)
        assert page.text_content("#progress") == "1 of 15"
        label = server.labels_of("bob")[first]
        assert (label.verdict, label.criteria, label.note) == \
               ("pass", {"resolves-issue": "met", "asks-for-credentials": "unmet"}, "tapped on a phone")
        width, inner = no_sideways_scroll(page)
        assert width <= inner
        assert watch.problems() == []
        context.close()


# -- c. hostile samples under a hostile rubric ----------------------------------------------------------
def _hostile_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in HOSTILE_SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]


HOSTILE_ROWS = _hostile_rows()
HOSTILE_IDS = [row["id"] for row in HOSTILE_ROWS]
#: An annotator whose name is itself hostile (it shows on the page and in the lead's table).
HOSTILE_ANNOTATOR = "ann<img src=x onerror=window.__pwned=50>\u202e"
LEAD = "lena"
#: What the annotator types as a note: the lead's table must show it as text, marks included.
HOSTILE_NOTE = '<img src=x onerror="window.__pwned=40"> \u202eeton {{ 7*7 }}'
RATIONALE = '<img src=x onerror="window.__pwned=60"> judge says \u202eon'
#: Texts each sample's output must show as they are (escaped, not dropped, not run).
SHOWN = {
    "script-tag": ["<script>window.__pwned=1</script>"],
    "img-onerror": ['<img src=x onerror="window.__pwned=2">'],
    "svg-onload": ['<svg onload="window.__pwned=4">'],
    "iframe-srcdoc": ['<iframe srcdoc="<script>parent.__pwned=5</script>">'],
    "markdown-javascript-link": ["click me", "javascript:window.__pwned=3"],
    "markdown-embedded-html": ['<div onclick="window.__pwned=6"', "<script>window.__pwned=6</script>"],
    "data-url-link": ["data:text/html"],
    "style-hides-controls": ["<style>#save"],
    "meta-refresh": ['<meta http-equiv="refresh"'],
    "base-href": ['<base href="https://evil.example/">'],
    "form-injection": ['<form action="https://evil.example/login"'],
    "attribute-breakout": ['" onmouseover="window.__pwned=12" x="'],
    "json-with-html": ["</code></pre><script>window.__pwned=13</script>"],
    "chat-transcript-html": ["<svg onload=", "<img src=x onerror="],
    "bidi-override": ["⟨U+202E⟩gnp.exe⟨U+202C⟩"],
    "zero-width-and-controls": ["bell⟨U+0007⟩", "esc⟨U+001B⟩[31m", "nel⟨U+0085⟩", "csi⟨U+009B⟩"],
    "very-long-lines": ["A" * 20000],
    "imitates-controls": ['<button id="save"', '<div id="lead-panel">'],
    "template-injection": ["{{ 7*7 }}", "${7*7}", "<%= 7*7 %>"],
    "html-entities": ["<script>window.__pwned=20</script>"],
    "mutation-xss": ["<noscript>", "<plaintext>"],
    "image-tricks": ["[image:"],
}

#: Inside the page, after the hostile text is shown and poked: what ran, what got in, what is missing.
AUDIT = r"""
() => {
  const found = [];
  const HIDDEN = new RegExp(HIDDEN_SOURCE, "g");
  const FORBIDDEN = new Set(["script", "iframe", "frame", "frameset", "object", "embed", "form", "base", "style",
    "svg", "math", "img", "image", "video", "audio", "source", "picture", "canvas", "meta", "link", "template",
    "noscript", "plaintext", "xmp", "portal", "dialog", "input", "textarea", "select", "button"]);
  const SAMPLE_TAGS = new Set(["p", "em", "strong", "code", "pre", "a", "blockquote", "ul", "ol", "li", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "br", "div", "span"]);
  const SAMPLE_ATTRIBUTES = new Set(["class", "href", "title", "rel", "target", "start"]);
  const PAGE_TAGS = {"criteria": ["fieldset", "legend", "p", "div", "span", "button", "ul", "li", "label", "input"],
                     "lead-table": ["table", "tbody", "tr", "th", "td", "div"]};
  const describe = (el) => "<" + el.localName + [...el.attributes].map(a => " " + a.name + "=" +
    JSON.stringify(a.value.slice(0, 60))).join("") + ">";
  // The document's own head: one script, one stylesheet, no refresh, no base.
  const scripts = [...document.scripts].map(s => s.src);
  if (scripts.length !== 1 || !scripts[0].endsWith("/static/app.js")) found.push("scripts: " + scripts.join(", "));
  for (const el of document.querySelectorAll("base, meta[http-equiv], iframe, object, embed, form")) found.push("element " + describe(el));
  for (const el of document.querySelectorAll("*")) {
    for (const attribute of el.attributes) {
      const name = attribute.name.toLowerCase();
      if (name.startsWith("on") || name === "style" || name === "srcdoc" || name === "formaction") {
        found.push("attribute on " + describe(el));
      }
    }
    if (el.localName === "a" && el.hasAttribute("href") && !/^(https?|mailto):/i.test(el.href)) {
      found.push("link " + describe(el));
    }
  }
  // The sample's fragments: only what the server's Markdown renderer writes.
  for (const id of ["sample-input", "sample-output", "sample-reference"]) {
    for (const el of document.getElementById(id).querySelectorAll("*")) {
      if (FORBIDDEN.has(el.localName) || !SAMPLE_TAGS.has(el.localName)) found.push(id + ": " + describe(el));
      for (const attribute of el.attributes) {
        if (!SAMPLE_ATTRIBUTES.has(attribute.name)) found.push(id + ": attribute " + describe(el));
      }
    }
  }
  // The parts the page builds from texts: only the elements it makes itself.
  for (const [id, tags] of Object.entries(PAGE_TAGS)) {
    const root = document.getElementById(id);
    if (!root) continue;
    for (const el of root.querySelectorAll("*")) if (!tags.includes(el.localName)) found.push(id + ": " + describe(el));
  }
  // The page's own controls: each once, shown.
  const once = ["progress", "sample-output", "criteria", "verdict-pass", "verdict-fail", "note", "save", "prev",
                "next", "status", "help"];
  for (const id of once) {
    const count = document.querySelectorAll("#" + id).length;
    if (count !== 1) found.push("#" + id + " " + count + " times");
  }
  for (const id of once.filter(id => id !== "help" && id !== "status")) {
    const el = document.getElementById(id);
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (style.display === "none" || style.visibility !== "visible" || box.width === 0 || box.height === 0) {
      found.push("#" + id + " not shown");
    }
  }
  const codes = (text) => [...new Set(text.match(HIDDEN) || [])].map(c => "U+" + c.codePointAt(0).toString(16).toUpperCase());
  if (codes(document.title).length) found.push("hidden characters shown raw in the title: " + codes(document.title).join(" "));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const raw = codes(node.textContent);
    if (raw.length) {
      const where = node.parentElement.closest("[id]");
      found.push("hidden characters shown raw in #" + (where ? where.id : "?") + ": " + raw.join(" ") + " in " +
                 JSON.stringify(node.textContent.slice(0, 80)));
    }
  }
  return {found: found, pwned: String(window.__pwned), violations: window.__cspViolations || [],
          fieldsets: document.querySelectorAll("fieldset[data-criterion]").length,
          leadPanel: document.getElementById("lead-panel") !== null,
          output: document.getElementById("sample-output").textContent,
          sample: document.getElementById("sample").textContent,
          criteria: document.getElementById("criteria").textContent,
          title: document.title, heading: document.querySelector("h1").textContent,
          scroll: [document.scrollingElement.scrollWidth, window.innerWidth],
          url: location.href};
}
""".replace("HIDDEN_SOURCE", json.dumps(HIDDEN_JS))


def _texts(value: Any) -> str:
    """Every text of a sample record, joined (to find the hidden characters the page must mark)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_texts(item) for item in value.values())
    if isinstance(value, list):
        return "\n".join(_texts(item) for item in value)
    return ""


def marks_of(text: str) -> set[str]:
    return {f"⟨U+{ord(c):04X}⟩" for c in HIDDEN.findall(text)}


#: Where to point in the page's sample: the centre of every link (hovered only), and a grid over each
#: shown part of the sample, clicked where no link or control is under the pointer.
TARGETS = """
() => {
  const points = [];
  const centre = (box) => [box.x + box.width / 2, box.y + box.height / 2];
  for (const link of [...document.querySelectorAll("#sample a")].slice(0, 8)) {
    const box = link.getBoundingClientRect();
    if (box.width > 0 && box.top >= 0 && box.bottom <= innerHeight) points.push([...centre(box), false]);
  }
  for (const id of ["sample-input", "sample-output", "sample-reference"]) {
    const box = document.getElementById(id).getBoundingClientRect();
    if (box.width === 0) continue;
    const top = Math.max(box.top, 0), bottom = Math.min(box.bottom, innerHeight);
    for (let row = 0; row < 3; row++) for (let column = 0; column < 3; column++) {
      const x = box.left + box.width * (column + 0.5) / 3, y = top + (bottom - top) * (row + 0.5) / 3;
      const under = document.elementFromPoint(x, y);
      points.push([x, y, !!under && !under.closest("a, button, summary, input, textarea")]);
    }
  }
  return points;
}
"""


def poke(page: Page) -> None:
    """Open the reference, hover every link, move over the sample and click it (never a link or a
    button: a real link opens a tab elsewhere, which is the reader's choice)."""
    summary = page.locator("#sample-reference-box > summary")
    if summary.is_visible():
        summary.click()
    for x, y, click in page.evaluate(TARGETS):
        if click:
            page.mouse.click(x, y)
        else:
            page.mouse.move(x, y)
    page.mouse.move(1, 1)


def check_page(page: Page, watch: Watch, row: dict[str, Any], *, lead: bool) -> dict[str, Any]:
    """Every promise of the hostile test, from inside the page; returns the audit for more checks."""
    audit = page.evaluate(AUDIT)
    problems = list(audit["found"])
    if audit["pwned"] != "undefined":
        problems.append(f"a script ran: window.__pwned = {audit['pwned']}")
    problems += [f"the Content-Security-Policy had to stop: {v}" for v in audit["violations"]]
    problems += watch.problems()
    if audit["fieldsets"] != 4:
        problems.append(f"{audit['fieldsets']} criterion fieldsets, expected the rubric's 4")
    if audit["leadPanel"] != lead:
        problems.append("the lead panel is " + ("missing" if lead else "shown to an annotator"))
    width, inner = audit["scroll"]
    if width > inner:
        problems.append(f"the page scrolls sideways ({width} > {inner})")
    if not audit["url"].startswith(f"{watch.origin}/#"):
        problems.append(f"the page went to {audit['url']}")
    for text in SHOWN.get(row["id"], []):
        if text not in audit["sample"]:
            problems.append(f"not shown as text: {text[:80]!r}")
    missing = {mark for mark in marks_of(_texts(row)) if mark not in audit["sample"]}
    if missing:
        problems.append(f"hidden characters not shown as marks: {sorted(missing)}")
    if "7*7" in _texts(row) and "49" in audit["sample"]:
        problems.append("a template was evaluated: 49 shows")
    # The hostile rubric, shown as text.
    for text in ('<img src=x onerror="window.__pwned=31">', "<script>window.__pwned=32</script>Rude",
                 '<a href="javascript:window.__pwned=34">', "⟨U+202E⟩enot"):
        if text not in audit["criteria"]:
            problems.append(f"criterion text not shown as text: {text!r}")
    if "{{ 7*7 }}" not in audit["heading"] or "⟨U+202E⟩" not in audit["title"]:
        problems.append(f"the rubric's name is not shown as it is: {audit['heading']!r} / {audit['title']!r}")
    assert problems == [], f"{row['id']!r} as {'lead' if lead else 'annotator'}:\n" + "\n".join(problems)
    return audit


@dataclass
class HostileSetup:
    server: Server
    annotator: BrowserContext
    lead: BrowserContext
    annotator_watch: Watch
    lead_watch: Watch
    phone: BrowserContext
    phone_watch: Watch


@pytest.fixture(scope="module")
def hostile(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileSetup]:
    """The hostile rubric (copied: labels are written beside it) over the hostile samples, a judge
    report whose rationales are hostile too, and a browser context for the annotator and the lead."""
    folder = tmp_path_factory.mktemp("hostile-web")
    rubric = folder / HOSTILE_RUBRIC.name
    shutil.copy(HOSTILE_RUBRIC, rubric)
    report = {"rubric": {"hash": "other"}, "samples": [
        {"id": sample_id, "verdict": "fail", "criteria": [
            {"id": "html-outcome", "status": "unmet", "rationale": RATIONALE,
             "evidence": [{"quote": "<script>window.__pwned=61</script>", "found": True}]}]}
        for sample_id in HOSTILE_IDS]}
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    with serve(folder, rubric, HOSTILE_SAMPLES, [HOSTILE_ANNOTATOR], LEAD,
               ("--results", str(folder / "report.json"))) as server:
        annotator, annotator_watch = open_context(browser, server)
        lead, lead_watch = open_context(browser, server)
        phone, phone_watch = open_context(browser, server, **PHONE)
        for context, name in ((annotator, HOSTILE_ANNOTATOR), (lead, LEAD), (phone, HOSTILE_ANNOTATOR)):
            log_in(context, server, name).close()
        yield HostileSetup(server, annotator, lead, annotator_watch, lead_watch, phone, phone_watch)
        for context in (annotator, lead, phone):
            context.close()


def test_every_hostile_sample_loads(hostile: HostileSetup):
    assert len(HOSTILE_ROWS) >= 20 and len(set(HOSTILE_IDS)) == len(HOSTILE_IDS)
    # Every record loads: none was skipped by the server.
    request = urllib.request.Request(f"{hostile.server.origin}/api/queue",
                                     headers={"Authorization": f"Bearer {hostile.server.token(LEAD)}"})
    with urllib.request.urlopen(request, timeout=scaled(10)) as answer:
        assert sorted(json.load(answer)["ids"]) == sorted(HOSTILE_IDS)


def _label_written(response: Any) -> bool:
    return response.request.method == "PUT" and "/api/labels/" in response.url


@pytest.mark.parametrize("row", HOSTILE_ROWS, ids=[re.sub(r"[^A-Za-z0-9-]+", "_", i)[:40] for i in HOSTILE_IDS])
def test_a_hostile_sample_runs_nothing_loads_nothing_and_leaves_the_controls_working(hostile: HostileSetup, row):
    server, sample_id = hostile.server, row["id"]

    # The annotator: the sample and the hostile rubric, poked; then labelled with a hostile note.
    hostile.annotator_watch.reset()
    page = open_sample(hostile.annotator, server, sample_id)
    poke(page)
    check_page(page, hostile.annotator_watch, row, lead=False)
    assert HOSTILE_ANNOTATOR.replace("\u202e", "⟨U+202E⟩") in page.inner_text(".who")
    page.click(criterion("html-outcome", "met"))  # the page's own controls still answer the mouse
    page.click(criterion("html-outcome", "unmet"))
    page.click("#verdict-fail")
    page.fill("#note", HOSTILE_NOTE)
    with page.expect_response(_label_written) as answer:
        page.click("#save")
    assert answer.value.ok, answer.value.text()
    label = server.labels_of(HOSTILE_ANNOTATOR)[sample_id]
    assert (label.verdict, label.criteria, label.note) == ("fail", {"html-outcome": "unmet"}, HOSTILE_NOTE)
    page.close()

    # The lead: the same, with the annotator's note and the judge's rationale in the lead's table.
    hostile.lead_watch.reset()
    page = open_sample(hostile.lead, server, sample_id)
    poke(page)
    check_page(page, hostile.lead_watch, row, lead=True)
    table = page.inner_text("#lead-table")
    for text in (HOSTILE_NOTE.replace("\u202e", "⟨U+202E⟩"), RATIONALE.replace("\u202e", "⟨U+202E⟩"),
                 HOSTILE_ANNOTATOR.replace("\u202e", "⟨U+202E⟩")):
        assert text in table, f"the lead's table does not show {text!r}: {table!r}"
    page.click("#verdict-fail")
    page.click("#sample-heading")
    with page.expect_response(_label_written) as answer:
        for key in ("p", "1", "1", "Enter"):  # and the keys
            page.keyboard.press(key)
    assert answer.value.ok, answer.value.text()
    adjudicated = server.labels_of(ADJUDICATED)[sample_id]
    assert (adjudicated.verdict, adjudicated.criteria) == ("pass", {"html-outcome": "unmet"})
    page.close()


@pytest.mark.parametrize("sample_id", ["very-long-lines", "json-with-html", "deep-nesting", "chat-transcript-html"])
def test_a_hostile_sample_does_not_widen_the_page_at_phone_width(hostile: HostileSetup, sample_id):
    hostile.phone_watch.reset()
    page = open_sample(hostile.phone, hostile.server, sample_id)
    width, inner = no_sideways_scroll(page)
    assert width <= inner, f"{sample_id}: the page scrolls sideways at phone width ({width} > {inner})"
    for selector in ("#verdict-pass", "#save", criterion("html-outcome", "met")):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] + box["width"] <= inner + 0.5, f"{selector} sticks out: {box}"
    page.locator("#verdict-pass").tap()
    assert pressed(page, "#verdict-pass") == "true"
    assert hostile.phone_watch.problems() == []
    page.close()


# -- d. offline ----------------------------------------------------------------------------------------
def test_the_page_loads_whole_with_every_other_host_blocked_and_tries_none(browser: Browser, tmp_path: Path):
    rubric = copy_support_reply(tmp_path)
    samples = rubric.with_name("support_reply.samples.jsonl")
    with samples.open("a", encoding="utf-8") as out:  # a sample that names things elsewhere
        out.write(json.dumps({"id": "links-elsewhere", "output":
                              "See [the docs](https://docs.example.com/refunds) and ![logo](https://cdn.example.com/l.png)"
                              " <link rel=stylesheet href=https://fonts.googleapis.com/css?family=Inter>"}) + "\n")
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        context, watch = open_context(browser, server)
        blocked: list[str] = []

        def only_the_server(route: Any) -> None:
            if route.request.url.startswith(f"{server.origin}/"):
                route.continue_()
            else:
                blocked.append(route.request.url)
                route.abort()

        context.route("**/*", only_the_server)
        page = log_in(context, server, "alice")
        # The stylesheet and the script came from the server: styled buttons, a sample shown.
        assert page.evaluate("() => getComputedStyle(document.getElementById('save')).backgroundColor") == \
               "rgb(29, 78, 216)"
        assert page.inner_text("#sample-output").strip()
        page.close()
        page = open_sample(context, server, "links-elsewhere")
        page.hover("#sample-output a")
        assert page.inner_text("#sample-output").count("[image: logo]") == 1
        page.click("#verdict-pass")
        page.click("#save")
        saved(page)
        assert server.labels_of("alice")["links-elsewhere"].verdict == "pass"
        assert blocked == [] and watch.foreign_requests() == []
        assert [url for url in watch.requests if url.startswith(server.origin)]  # the requests were seen
        assert watch.problems() == []
        context.close()


# -- e. the lead --------------------------------------------------------------------------------------
def test_the_lead_sees_two_annotators_side_by_side_and_adjudicates_from_the_page(browser: Browser, tmp_path: Path):
    rubric = copy_support_reply(tmp_path)
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        server.put_label("alice", "cancel-subscription",
                         {"verdict": "pass", "criteria": {"resolves-issue": "met"}, "note": "alice: fine"})
        server.put_label("bob", "cancel-subscription",
                         {"verdict": "fail", "criteria": {"resolves-issue": "unmet"}, "note": "bob: no next step"})
        context, watch = open_context(browser, server)
        page = log_in(context, server, "carol")
        assert page.get_attribute("body", "data-role") == "lead"
        # The one sample the annotators disagree on comes first.
        assert page.get_attribute("body", "data-sample-id") == "cancel-subscription"
        assert page.is_visible("#lead-panel")
        assert page.text_content("#lead-attention") == "Calls for a look: the annotators disagree."
        table = page.evaluate("""() => [...document.querySelectorAll('#lead-table tr')].map(
            row => [...row.children].map(cell => cell.firstChild ? cell.firstChild.textContent : ''))""")
        header = table[0]
        rows = {row[0]: row for row in table[1:]}
        alice, bob = header.index("alice"), header.index("bob")
        assert (rows["verdict"][alice], rows["verdict"][bob]) == ("pass", "fail")
        assert (rows["resolves-issue"][alice], rows["resolves-issue"][bob]) == ("met", "unmet")
        assert (rows["note"][alice], rows["note"][bob]) == ("alice: fine", "bob: no next step")
        assert "adjudicated (you)" in header
        progress = page.inner_text("#lead-progress")
        assert "alice: 1 of 15" in progress and "bob: 1 of 15" in progress

        page.click("#verdict-fail")
        page.click(criterion("resolves-issue", "unmet"))
        page.click("#note")
        page.keyboard.type("bob is right: no next step")
        page.click("#save")
        saved(page)
        assert "Nothing left to adjudicate" in page.text_content("#status")
        label = server.labels_of(ADJUDICATED)["cancel-subscription"]
        assert (label.verdict, label.criteria, label.note) == \
               ("fail", {"resolves-issue": "unmet"}, "bob is right: no next step")
        assert "carol" not in {name for labels in load_labels(labels_path_for(rubric)).by_annotator.values()
                               for name in labels}
        page.reload()
        wait_for_sample(page, "cancel-subscription")
        adjudicated = header.index("adjudicated (you)")
        page.wait_for_function("([i]) => document.querySelectorAll('#lead-table tr')[1].children[i].textContent"
                               " === 'fail'", arg=[adjudicated])
        assert watch.problems() == []
        context.close()


# -- f. a link followed from another site ------------------------------------------------------------
def test_a_link_followed_from_another_site_opens_the_page(browser: Browser, tmp_path: Path):
    """Links arrive by mail or chat: a SameSite=Strict cookie set by the link is not sent on a
    navigation another site started, so the page has to open all the same (it asks again itself)."""
    rubric = copy_support_reply(tmp_path)
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        context, watch = open_context(browser, server)
        inbox = "http://mail.example/inbox"
        context.route(inbox, lambda route: route.fulfill(
            status=200, content_type="text/html", body=f'<a id="link" href="{server.links["alice"]}">your link</a>'))
        page = context.new_page()
        page.goto(inbox)
        page.click("#link")
        wait_for_a_sample(page)
        assert page.get_attribute("body", "data-person") == "alice"
        assert page.url == f"{server.origin}/#refund-within-window"
        assert watch.foreign_requests() == [inbox]
        context.close()
