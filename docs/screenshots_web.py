"""Make the web labeller's pictures from the real thing: ``rubric-studio serve`` in a subprocess and
Debian's Chromium driven by Playwright.

    python docs/screenshots_web.py        # writes docs/images/web-*.png

Works on a copy of the bundled support-reply rubric. It is graded first by the local fake judge of
the test suite (``tests/fakellm.py``: real HTTP on 127.0.0.1, so no key and no network), so the
lead sees the judge's verdicts beside the people's; alice and bob label three samples through the
JSON API (they disagree on one). Then the pictures: alice's page at desktop width, bob's at phone
width, and the lead's page on the sample the annotators disagree on. Needs ``/usr/bin/chromium``
(Debian: ``apt-get install -y chromium``) and Playwright for Python (``pip install -e '.[test]'``);
``playwright install`` is never needed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"viewport": {"width": 1280, "height": 860}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
#: Labels written before the pictures: (person, sample, label). bob and alice disagree on the second.
LABELS = [
    ("alice", "refund-within-window", {"verdict": "pass", "criteria": {"resolves-issue": "met", "tone": 9}}),
    ("bob", "refund-within-window", {"verdict": "pass", "criteria": {"resolves-issue": "met", "tone": 8}}),
    ("alice", "refund-late-request", {"verdict": "pass", "criteria": {"resolves-issue": "met", "policy-accurate": "met"},
                                      "note": "Declines kindly and turns off the renewal."}),
    ("bob", "refund-late-request", {"verdict": "fail", "criteria": {"resolves-issue": "unmet", "policy-accurate": "met"},
                                    "note": "No refund and no credit offered: the customer is left with nothing."}),
    ("alice", "refund-wrong-timeline", {"verdict": "fail", "criteria": {"policy-accurate": "unmet"}}),
    ("bob", "refund-wrong-timeline", {"verdict": "fail", "criteria": {"policy-accurate": "unmet"}}),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _grade(rubric: Path, report: Path, env: dict[str, str]) -> None:
    """The judge's verdicts for the lead, from the fake judge."""
    sys.path.insert(0, str(ROOT))
    from tests.fakellm import FakeLLM

    with FakeLLM() as judge:
        done = subprocess.run([sys.executable, "-m", "rubric_studio", "grade", str(rubric), "--judge",
                               "openai-compatible:fake-judge", "--base-url", judge.base_url_openai,
                               "--format", "json", "-o", str(report)], env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"grading for the lead's picture failed:\n{done.stderr}")


def _start(rubric: Path, report: Path, env: dict[str, str]) -> tuple[subprocess.Popen, dict[str, str]]:
    """``serve`` for alice and bob, carol leading; its links read from its standard output."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "rubric_studio", "serve", str(rubric), "--annotators",
                                "alice,bob", "--lead", "carol", "--results", str(report), "--port", str(port)],
                               stdout=subprocess.PIPE, text=True, env=env)
    links = {}
    while len(links) < 3:
        line = process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit("serve stopped before printing its links")
        name, _, link = line.strip().partition(": ")
        links[name] = link
    return process, links


def _write(links: dict[str, str], person: str, sample: str, label: dict) -> None:
    link = urlsplit(links[person])
    token = parse_qs(link.query)["token"][0]
    request = urllib.request.Request(f"{link.scheme}://{link.netloc}/api/labels/{quote(sample, safe='')}",
                                     data=json.dumps(label).encode(), method="PUT",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


def _open(browser, link: str, options: dict):
    context = browser.new_context(color_scheme="light", **options)
    page = context.new_page()
    page.goto(link)
    page.wait_for_function("() => document.body.dataset.sampleId !== ''")
    return context, page


def _shoot(browser, links: dict[str, str]) -> list[Path]:
    saved = []

    # alice at her desk: the next sample of her share, half labelled (the whole page).
    context, page = _open(browser, links["alice"], DESKTOP)
    for key in ("1", "2", "4", "4", "p"):
        page.keyboard.press(key)
    page.fill('input[type="number"][data-criterion="tone"]', "8")
    page.fill("#note", "Explains the duplicate and refunds it; says when it shows up.")
    page.click("#sample-heading")
    saved.append(IMAGES / "web-annotator.png")
    page.screenshot(path=saved[-1], full_page=True)
    context.close()

    # bob on his phone: the top of the page, and its end after a few taps.
    context, page = _open(browser, links["bob"], PHONE)
    saved.append(IMAGES / "web-phone.png")
    page.screenshot(path=saved[-1])
    page.locator('#criteria fieldset[data-criterion="asks-for-credentials"] button[data-value="unmet"]').tap()
    page.locator("#verdict-pass").tap()
    page.locator("#judging-heading").tap()  # away from the buttons: no tap highlight in the picture
    page.evaluate("() => window.scrollTo(0, document.scrollingElement.scrollHeight)")
    saved.append(IMAGES / "web-phone-controls.png")
    page.screenshot(path=saved[-1])
    context.close()

    # carol, the lead: the sample alice and bob disagree on comes first; her panel under it.
    context, page = _open(browser, links["carol"], DESKTOP)
    box = page.locator("#lead-panel").bounding_box()
    scroll = page.evaluate("() => window.scrollY")
    saved.append(IMAGES / "web-lead.png")
    page.screenshot(path=saved[-1], full_page=True, clip={"x": box["x"] - 16, "y": box["y"] + scroll - 16,
                                                          "width": box["width"] + 32, "height": box["height"] + 32})
    context.close()
    return saved


def main() -> int:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("Playwright for Python is missing: pip install -e '.[test]'", file=sys.stderr)
        return 2
    if not CHROMIUM.is_file():
        print(f"Chromium is missing at {CHROMIUM}: apt-get install -y chromium", file=sys.stderr)
        return 2
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "RUBRIC_STUDIO_HOME": str(work / "config"), "OPENAI_API_KEY": "sk-screenshots",
               "XDG_CACHE_HOME": str(work / "cache"), "RUBRIC_STUDIO_CACHE": str(work / "cache" / "judge.sqlite")}
        shutil.copytree(ROOT / "sample_rubrics" / "support_reply", work / "support_reply")
        rubric = work / "support_reply" / "support_reply.yaml"
        report = work / "report.json"
        _grade(rubric, report, env)
        process, links = _start(rubric, report, env)
        try:
            for person, sample, label in LABELS:
                _write(links, person, sample, label)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                try:
                    for path in _shoot(browser, links):
                        print(path.relative_to(ROOT))
                finally:
                    browser.close()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
