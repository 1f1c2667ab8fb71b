"""docs/concepts/statistics.md says what the code does: its worked example runs and prints the
figure the page shows, and every number the page states (levels, thresholds, counts) is the one
the code uses."""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "concepts" / "statistics.md"


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _number(page: str, pattern: str) -> float:
    found = re.search(pattern, page)
    assert found is not None, f"statistics.md no longer says {pattern!r}"
    return float(found.group(1))


def test_the_worked_example_prints_what_the_page_shows(page):
    example = re.search(r"```python\n(.*?corrected_rate\(.*?)```\n\n```text\n(.*?)\n```", page, re.S)
    assert example is not None, "the corrected pass rate's example and its output are not on the page"
    code, shown = example.groups()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(PAGE), "exec"), {})
    assert printed.getvalue().strip() == shown.strip()


def test_the_worked_examples_arithmetic_is_the_codes(page):
    from rubric_studio.core.agreement import Agreement
    from rubric_studio.core.pass_rate import corrected_rate, ppi_estimate

    labelled = Agreement(both_pass=24, both_fail=8, rubric_pass_human_fail=6, rubric_fail_human_pass=2)
    estimate = ppi_estimate(labelled, 146 - 30, 200 - 40)
    assert round(estimate.lam, 3) == _number(page, r"\\lambda = 0\.1125 / \(1\.25 \\cdot 0\.19809\) = (0\.\d+)")
    assert round(estimate.value, 3) == _number(page, r"0\.454\\,\(0\.725 - 0\.75\) = (0\.\d+)")
    assert f"bring 73% down to {estimate.value:.1%}" in page
    plain = corrected_rate(labelled, 146, 200, adjust=False)
    assert plain.ci is not None
    low = _number(page, r"plain interval would be \\\(\[(0\.\d+), 0\.\d+\]")
    high = _number(page, r"plain interval would be \\\(\[0\.\d+, (0\.\d+)\]")
    assert (round(plain.ci[0], 3), round(plain.ci[1], 3)) == (low, high)


def test_the_kappa_example(page):
    from rubric_studio.core.intervals import kappa_interval

    low, high = kappa_interval(6, 6, 0.5)
    assert "Six items of six agreeing with\n\\(p_e = 0.5\\) give kappa 1 with the interval \\([0.22, 1]\\)" in page
    assert (round(low, 2), high) == (0.22, 1.0)


def test_every_stated_level_and_threshold_is_the_codes(page):
    from rubric_studio.core import human_agreement, intervals, pass_rate
    from rubric_studio.engine.fit import MIN_FOR_HOLDOUT, fit
    from rubric_studio.engine.improve._evidence import ALPHA, MIN_EVIDENCE_CELLS
    from rubric_studio.engine.probes._decision import BLIND_SHIFT, LEVEL, SUGGESTIVE_SHIFT

    assert f"z = \\Phi^{{-1}}(0.975) = {intervals.Z95:.15f}" in page  # to 15 decimals: the last ulp is the platform's
    assert f"fewer than {pass_rate.MIN_LABELLED} did" in page
    assert pass_rate.PSEUDO_COUNT == 0.25 and "a quarter of a sample in each of the four" in page
    assert f"({human_agreement.BOOTSTRAP_RESAMPLES:,} resamples, seed {human_agreement.BOOTSTRAP_SEED}" in page
    assert f"pairs sharing at least {human_agreement.MIN_OVERLAP} items" in page
    assert f"Up to {human_agreement.PAIRS_LISTED} pairs" in page
    assert f"names the {human_agreement.LOWEST_NAMED} lowest pairs" in page
    assert ALPHA == 0.05 and f"on at least {MIN_EVIDENCE_CELLS} compared cells" in page
    assert inspect.signature(fit).parameters["holdout"].default == 0.3 and "(30% of each human class)" in page
    assert f"Below {MIN_FOR_HOLDOUT} labelled samples there is no holdout" in page
    assert round(LEVEL, 10) == 0.05 and "2^{-(b+c)} \\le 0.05" in page
    flat = " ".join(page.split())  # the page's lines wrap anywhere
    assert f"above {BLIND_SHIFT:.0%}".replace("%", " points") in flat
    assert f"A shift of {SUGGESTIVE_SHIFT:.0%}".replace("%", " points or more") in flat
    assert f"at least {SUGGESTIVE_SHIFT:.0%}".replace("%", " points and half the detectable one") in flat


def test_the_bound_on_a_runs_false_findings_is_the_sum_over_its_kinds(page):
    """The kinds share the baseline and the noise, so 1 − 0.95⁶ (independence) is no bound; the sum of
    each kind's level is."""
    from rubric_studio.engine.probes._decision import LEVEL
    from rubric_studio.engine.probes._perturb import KINDS

    flat = " ".join(page.split())
    kinds = len(KINDS)
    assert kinds == 6 and f"at most {kinds * LEVEL:.0%} of the time ({kinds} × {LEVEL:.0%}" in flat
    assert "0.95^" not in page and "26\\%" not in page


def test_leniency_is_held_against_the_noises_flips_either_way(page):
    """The page: a content-free answer met counts, against the noise's flips **either way**."""
    from rubric_studio.core.results import CriterionResult, Status
    from rubric_studio.engine.probes._probes import CriterionProbe, paired_events

    assert "the noise's count is its flips **either way**" in " ".join(page.split())
    met, unmet = CriterionResult("c", Status.MET), CriterionResult("c", Status.UNMET)
    lenient, noise = CriterionProbe(content_free=True), CriterionProbe()
    for sid, answer, before, after in (("down", unmet, met, unmet), ("up", unmet, unmet, met),
                                       ("kept", met, met, met)):  # fmt: skip
        lenient.add_content_free(sid, answer, "Yes.")
        noise.add(sid, before, after, "x")
    moved, noise_moved = paired_events("leniency", lenient, noise)
    assert moved == {"down": False, "up": False, "kept": True}
    assert noise_moved == {"down": True, "up": True, "kept": False}  # met → unmet counts too


def test_per_criterion_probe_detail_is_decided_at_the_bonferroni_level_the_page_gives(page):
    """The page: "at 0.05/k for the kind's k criteria (Bonferroni within the kind)"."""
    from rubric_studio.engine.probes._noise import compare_with_noise

    assert "at \\(0.05/k\\) for the kind's \\(k\\) criteria (Bonferroni within the kind)" in page
    moved = {f"s{i}": i < 6 for i in range(20)}
    still = {f"s{i}": False for i in range(20)}
    assert compare_with_noise(moved, still, 0.0, comparisons=4).to_dict()["level"] == 0.0125
    assert compare_with_noise(moved, still, 0.0).to_dict()["level"] == 0.05
