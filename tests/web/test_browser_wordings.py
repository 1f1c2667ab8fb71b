"""In a real browser (see tests/web/test_browser.py): a label given under an older wording of its
criterion is marked on the page, and ``r`` (still holds) then Enter make it current again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rubric_studio.core.labels import wording_fingerprint
from rubric_studio.core.loading import load_rubric
from tests.web.test_browser import (  # skips this module as it skips that one when there is no browser
    CHROMIUM,
    CHROMIUM_ARGS,
    Browser,
    copy_support_reply,
    log_in,
    open_context,
    open_sample,
    saved,
    serve,
    sync_playwright,
)

SAMPLE = "refund-within-window"
OLDER = '#criteria fieldset[data-criterion="resolves-issue"] [data-older]'


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def test_an_older_wording_is_marked_and_still_holds_makes_it_current(browser: Browser, tmp_path: Path):
    rubric = copy_support_reply(tmp_path)
    with serve(tmp_path, rubric, None, ["alice", "bob"], "carol") as server:
        server.put_label("alice", SAMPLE, {"verdict": "pass", "criteria": {"resolves-issue": "met", "tone": "met"}})
        rubric.write_text(rubric.read_text().replace("Directly answers", "Plainly answers"), encoding="utf-8")
        new = wording_fingerprint(load_rubric(rubric).criterion("resolves-issue"))
        assert server.labels_of("alice")[SAMPLE].given_under["resolves-issue"] != new

        context, watch = open_context(browser, server)
        log_in(context, server, "alice").close()  # the link trades her token for the cookie
        page = open_sample(context, server, SAMPLE)
        assert page.is_visible(OLDER) and "↺ given under an older wording" in page.inner_text(OLDER)
        assert page.is_hidden('#criteria fieldset[data-criterion="tone"] [data-older]')  # tone was not reworded
        page.wait_for_function("() => / 1 to re-check/.test(document.getElementById('progress').textContent)")

        page.keyboard.press("r")
        assert page.is_hidden(OLDER)
        page.keyboard.press("Enter")
        saved(page)
        label = server.labels_of("alice")[SAMPLE]
        assert label.given_under["resolves-issue"] == new and label.criteria["resolves-issue"] == "met"
        assert watch.problems() == []
        context.close()
