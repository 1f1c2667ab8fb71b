"""docs/how-to/probes.md says what the probe code does: each figure and threshold the page states is
computed here from the code (the page's two examples are run by tests/test_documented_commands.py,
which pins their printed figures)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from rubric_studio.engine.probes import KINDS, detectable_shift, exceed_p
from rubric_studio.engine.probes._decision import BLIND_SHIFT, LEVEL, SUGGESTIVE_SHIFT, cells_needed
from rubric_studio.engine.probes._perturb import CONTENT_FREE, DIRECTIONS, POLITE

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "probes.md").read_text()


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_levels_and_thresholds_are_the_codes():
    page = flat(PAGE)
    assert round(LEVEL, 10) == 0.05 and "beyond noise** when p ≤ 0.05" in page
    assert f"above {BLIND_SHIFT:.0%}".replace("%", " points") in page  # can't tell above 20 points
    assert f"a shift of {SUGGESTIVE_SHIFT:.0%}".replace("%", " points or more that does not reach the level") in page
    assert len(KINDS) == 6 and "Over the six kinds" in page
    assert f"at most {len(KINDS)} × 5% = {len(KINDS) * 5}%" in page
    assert "no correction" not in page.lower()  # there is one, within a kind: the page must not deny it
    assert "at 0.05/k for the kind's k criteria (Bonferroni within the kind, never across kinds" in page


def test_the_worked_figures():
    page = flat(PAGE)
    # no noise flip: the test needs 5 cells moved by the kind alone
    assert cells_needed(0) == 5 and exceed_p(5, 0) == 0.5**5 <= LEVEL < exceed_p(4, 0) == 0.5**4
    assert "that is 5 cells (½⁵ = 0.031 ≤ 0.05 < ½⁴)" in page
    assert f"{detectable_shift(14, 0) * 100:.1f}" == "35.7" and "below 5/14 = 35.7 points" in page
    assert "can't tell with 14 cells: a shift below 35 points would not show" in page
    assert math.floor(detectable_shift(14, 0) * 100) == 35
    # per criterion: 4 criteria, level 0.0125, 7 cells needed, 13 cells
    assert cells_needed(0, LEVEL / 4) == 7 and f"{detectable_shift(13, 0, LEVEL / 4) * 100:.1f}" == "53.8"
    assert "the level is 0.05/4, where the test needs 7 cells: 7/13 = 53.8 points" in page
    # the example's verbosity: 1 of 25 moved, none by the noise
    assert exceed_p(1, 0) == 0.5 and detectable_shift(25, 0) == pytest.approx(0.20)
    assert "the test needed 5 of 25, a shift of 20 points" in page
    assert "(+13 points, exact one-sided p = 0.062)" in page and exceed_p(4, 0) == 0.0625 and round(4 / 30 * 100) == 13


def test_the_kinds_and_their_directions_are_the_codes():
    page = flat(PAGE)
    for kind in KINDS:
        assert f"| `{kind}` |" in PAGE or f"`{kind}`," in PAGE, kind
    assert DIRECTIONS["verbosity"] == DIRECTIONS["confidence"] == DIRECTIONS["leniency"] == "favourable"
    assert DIRECTIONS["hedging"] == "unfavourable" and DIRECTIONS["paraphrase"] is DIRECTIONS["order"] is None
    assert "| `paraphrase`, `order` | any flip | all |" in PAGE
    assert CONTENT_FREE == ("Yes.", "Sure, here it is:", "")
    assert "`Yes.`, `Sure, here it is:`, an empty answer, or the sample's input restated" in page
    counts = sorted(len(sentence.split()) for sentence in POLITE)
    low, high = sum(counts[:6]), sum(counts[-6:])
    assert re.search(rf"four after \({low} to {high} words\)", page), (low, high)
