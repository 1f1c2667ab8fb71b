"""Kappa's 95% interval keeps a width at small n, and one z serves every interval.

References computed by statsmodels in the test: its Wilson interval of a proportion
(``proportion_confint(method="wilson")``) mapped to kappa, and its own Cohen's kappa
(``cohens_kappa``: asymptotic SE of Fleiss, Cohen & Everitt 1969) for large tables.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.human_agreement import alpha_with_ci, human_agreement
from rubric_studio.core.intervals import CONFIDENCE, Z95, kappa_interval, percentile_bounds, wilson_interval
from rubric_studio.core.labels import Label


# scipy and statsmodels are imported by the tests that use them: importing them here cost every
# worker of the suite more than a second of collection.
def cohens_kappa(counts: np.ndarray):
    from statsmodels.stats.inter_rater import cohens_kappa as reference

    return reference(counts)


def proportion_confint(*args, **kwargs):
    from statsmodels.stats.proportion import proportion_confint as reference

    return reference(*args, **kwargs)


PACKAGE = Path(__file__).resolve().parents[2] / "rubric_studio"


def reference(a: Agreement) -> tuple[float, float]:
    """statsmodels' Wilson interval of the observed agreement, mapped to kappa with p_e fixed."""
    lo, hi = proportion_confint(a.both_pass + a.both_fail, a.n, alpha=1 - CONFIDENCE, method="wilson")
    p_e = a.expected
    return max(-1.0, (lo - p_e) / (1 - p_e)), min(1.0, (hi - p_e) / (1 - p_e))


def table(a: Agreement) -> np.ndarray:
    return np.array([[a.both_pass, a.rubric_fail_human_pass], [a.rubric_pass_human_fail, a.both_fail]])


def test_one_z_for_every_interval_and_no_other_literal_in_the_package():
    from scipy.stats import norm

    assert norm.ppf(0.975) == pytest.approx(Z95, abs=1e-12)
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "intervals.py" or path.parent.name == "providers":  # providers: prices in USD
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"(?<![\d.])(1\.96|1\.64[45]|2\.57[56]|0\.975|0\.025)(?!\d)", line):
                found.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert found == []


def test_six_of_six_agreeing_have_an_interval_of_positive_width():
    six = Agreement(both_pass=3, both_fail=3)  # p_o = 1, p_e = 0.5, kappa = 1
    lo, hi = six.kappa_ci
    # Wilson of 6/6 is [6/(6 + z²), 1] = [0.609666, 1] → kappa [(0.609666 − .5)/.5, 1]
    assert lo == pytest.approx((6 / (6 + Z95**2) - 0.5) / 0.5, abs=1e-9) == pytest.approx(0.219331, abs=1e-6)
    assert hi == 1.0 and hi - lo > 0.7
    assert (lo, hi) == pytest.approx(reference(six), abs=1e-9)
    # statsmodels' own asymptotic interval is the point [1, 1] here: the width is what is new
    sm = cohens_kappa(table(six))
    assert sm.kappa_low == pytest.approx(1.0) and sm.kappa_upp == pytest.approx(1.0)


def test_three_of_three_disagreeing_reach_chance_as_statsmodels_does():
    three = Agreement(rubric_pass_human_fail=1, rubric_fail_human_pass=2)  # p_o 0, p_e 4/9, kappa -0.8
    assert three.kappa == pytest.approx(-0.8)
    lo, hi = three.kappa_ci
    assert (lo, hi) == pytest.approx(reference(three), abs=1e-9)
    assert lo == pytest.approx(-0.8) and hi == pytest.approx(0.210695, abs=1e-6)  # was the point [-0.8, -0.8]
    sm = cohens_kappa(table(three))
    assert sm.kappa_low == pytest.approx(-1.9522, abs=1e-4) and sm.kappa_upp == pytest.approx(0.3522, abs=1e-4)
    # the same conclusion: nothing distinguishes this judge from chance
    assert lo < 0 < hi and sm.kappa_low < 0 < sm.kappa_upp


def test_two_hundred_random_tables_match_the_reference():
    draw = random.Random(29)
    checked = 0
    while checked < 200:
        a = Agreement(*(draw.randint(0, 12) for _ in range(4)))
        if a.kappa is None:
            assert a.kappa_ci is None
            continue
        lo, hi = a.kappa_ci
        assert (lo, hi) == pytest.approx(reference(a), abs=1e-9)
        assert lo <= a.kappa + 1e-12 and a.kappa <= hi + 1e-12 and hi - lo > 0
        checked += 1


@pytest.mark.parametrize("counts", [(60, 100, 20, 20), (150, 200, 30, 20), (300, 250, 40, 60)])
def test_large_tables_agree_with_statsmodels_cohens_kappa(counts):
    a = Agreement(*counts)
    sm = cohens_kappa(table(a))
    assert a.kappa == pytest.approx(sm.kappa, abs=1e-12)
    lo, hi = a.kappa_ci
    assert lo == pytest.approx(sm.kappa_low, abs=0.02) and hi == pytest.approx(sm.kappa_upp, abs=0.02)


def test_wilson_matches_statsmodels_at_the_edges():
    for x, n in [(0, 1), (0, 7), (7, 7), (3, 10), (1, 50)]:
        assert wilson_interval(x, n) == pytest.approx(proportion_confint(x, n, method="wilson"), abs=1e-12)
    assert kappa_interval(3, 3, 1.0) is None and kappa_interval(0, 0, 0.5) is None


def test_pairwise_kappa_and_alpha_use_the_same_intervals():
    names = ("ann", "bob", "cy")
    by_sample = {}
    for i in range(8):
        verdict = "pass" if i < 4 else "fail"
        by_sample[f"s{i}"] = {n: Label(verdict=verdict if (n, i) != ("cy", 0) else "fail") for n in names}
    data = human_agreement(by_sample, [], [])
    ann_bob = next(p for p in data["pairs"] if (p["a"], p["b"]) == ("ann", "bob"))
    assert ann_bob["kappa"] == 1.0 and ann_bob["ci"] == [round(v, 4) for v in kappa_interval(8, 8, 0.5)]
    assert ann_bob["ci"][0] < 1.0  # a width where the two agree on all eight
    units = [[by_sample[s][n].verdict for n in names] for s in by_sample]
    assert alpha_with_ci(units)["ci"] is not None
    assert percentile_bounds(list(range(1000))) == (24, 974)  # the 2.5% and 97.5% nearest ranks of 0..999
