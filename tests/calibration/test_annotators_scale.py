"""Many annotators: the fast agreement arithmetic gives what the pair-by-pair one gave."""

from __future__ import annotations

import random
import statistics

import pytest

from rubric_studio.core.human_agreement import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    LOWEST_NAMED,
    MIN_OVERLAP,
    PAIRS_LISTED,
    alpha_with_ci,
    krippendorff_alpha,
    pair_agreement,
    pairwise,
)


# -- the computation alpha had before: every ordered pair of an item's values ------------------
def _old_unit(values):
    m = len(values)
    found = {}
    for i, a in enumerate(values):
        for j, b in enumerate(values):
            if i != j:
                found[(a, b)] = found.get((a, b), 0.0) + 1 / (m - 1)
    return found


def _old_alpha_of(coincidences, metric):
    total = {}
    for unit in coincidences:
        for pair, weight in unit.items():
            total[pair] = total.get(pair, 0.0) + weight
    marginals = {}
    for (a, _), weight in total.items():
        marginals[a] = marginals.get(a, 0.0) + weight
    n = sum(marginals.values())

    def delta(a, b):
        return float(a != b) if metric == "nominal" else (float(a) - float(b)) ** 2

    observed = sum(weight * delta(a, b) for (a, b), weight in total.items())
    expected = sum(marginals[a] * marginals[b] * delta(a, b) for a in marginals for b in marginals)
    if n <= 1 or expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def _old_alpha_with_ci(units, metric):
    pairable = [_old_unit(u) for u in units if len(u) >= 2]
    if not pairable:
        return None
    value = _old_alpha_of(pairable, metric)
    draws = random.Random(BOOTSTRAP_SEED)
    boots = []
    for _ in range(BOOTSTRAP_RESAMPLES if value is not None else 0):
        alpha = _old_alpha_of(draws.choices(pairable, k=len(pairable)), metric)
        if alpha is not None:
            boots.append(alpha)
    ci = None
    if len(boots) >= 20:
        boots.sort()
        ci = [boots[int(0.025 * (len(boots) - 1))], boots[int(0.975 * (len(boots) - 1))]]
    return {"value": value, "ci": ci, "n": len(pairable)}


def _random_units(rng: random.Random, metric: str) -> list[list]:
    values = ["pass", "fail"] if metric == "nominal" else [0, 3, 5.5, 7, 10]
    weights = [rng.random() + 0.05 for _ in values]
    units = []
    for _ in range(rng.randint(1, 12)):
        units.append(rng.choices(values, weights, k=rng.randint(0, 6)))
    return units


@pytest.mark.parametrize("metric", ["nominal", "interval"])
def test_alpha_from_value_counts_equals_the_pairwise_coincidences_on_random_tables(metric):
    rng = random.Random(2026)
    compared = defined = 0
    for _ in range(150):
        units = _random_units(rng, metric)
        old = _old_alpha_of([_old_unit(u) for u in units if len(u) >= 2], metric)
        new = krippendorff_alpha(units, metric)
        compared += 1
        if old is None:
            assert new is None, units
            continue
        defined += 1
        assert new == pytest.approx(old, abs=1e-9), units
    assert defined > 50  # the tables exercised the arithmetic, not only the None cases
    assert compared == 150


@pytest.mark.parametrize("metric", ["nominal", "interval"])
def test_alpha_intervals_equal_the_pairwise_bootstrap(metric):
    rng = random.Random(7)
    checked = 0
    for _ in range(6):
        units = _random_units(rng, metric)
        old, new = _old_alpha_with_ci(units, metric), alpha_with_ci(units, metric)
        if old is None:
            assert new is None
            continue
        assert new["n"] == old["n"]
        assert (new["value"] is None) == (old["value"] is None)
        if old["value"] is not None:
            assert new["value"] == pytest.approx(old["value"], abs=1e-4)
        assert (new["ci"] is None) == (old["ci"] is None)
        if old["ci"] is not None:
            checked += 1
            assert new["ci"] == pytest.approx(old["ci"], abs=1e-4)
    assert checked >= 2


# -- pairs of annotators -------------------------------------------------------------------------
def _random_ratings(rng: random.Random, raters: int, items: int, density: float) -> dict[str, dict[str, str]]:
    return {f"r{r:02d}": {f"s{i}": rng.choice(["pass", "fail"]) for i in range(items) if rng.random() < density}
            for r in range(raters)}


def test_pair_kappas_from_bit_sets_equal_the_two_by_two_tables_of_each_pair():
    rng = random.Random(11)
    for _ in range(40):
        ratings = _random_ratings(rng, rng.randint(2, 9), rng.randint(1, 14), rng.random())
        found = pairwise(ratings, "pass")
        names = list(ratings)
        expected = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                table = pair_agreement(ratings[a], ratings[b], "pass")
                if table.n:
                    expected.append({"a": a, "b": b, "kappa": None if table.kappa is None else round(table.kappa, 4),
                                     "ci": None if table.kappa_ci is None else [round(x, 4) for x in table.kappa_ci],
                                     "n": table.n})
        assert found["pairs"] == expected  # only pairs sharing an item, in rater order
        assert found["summary"]["pairs"] == len(expected) and found["summary"]["listed"] == "all"


def test_beyond_the_listed_size_the_pairs_are_summarised_and_the_lowest_named():
    rng = random.Random(5)
    ratings = _random_ratings(rng, 30, 12, 0.6)  # 435 pairs and more
    ratings["zz-a"] = {f"s{i}": "pass" if i % 2 else "fail" for i in range(12)}
    ratings["zz-b"] = {f"s{i}": "fail" if i % 2 else "pass" for i in range(12)}
    found = pairwise(ratings, "pass")
    names = list(ratings)
    tables = {(a, b): pair_agreement(ratings[a], ratings[b], "pass")
              for i, a in enumerate(names) for b in names[i + 1 :]}
    shared = {k: t for k, t in tables.items() if t.n}
    kappas = sorted(t.kappa for t in shared.values() if t.kappa is not None)
    summary = found["summary"]
    assert summary["pairs"] == len(shared) > PAIRS_LISTED and summary["listed"] == "lowest"
    assert summary["with_kappa"] == len(kappas)
    assert summary["kappa_min"] == pytest.approx(kappas[0], abs=1e-4)
    assert summary["kappa_max"] == pytest.approx(kappas[-1], abs=1e-4)
    assert summary["kappa_median"] == pytest.approx(statistics.median(kappas), abs=1e-4)
    assert len(found["pairs"]) == LOWEST_NAMED
    # the lowest named first (the most shared items first among equal kappas): two raters who
    # disagree on all 12 items
    assert (found["pairs"][0]["a"], found["pairs"][0]["b"], found["pairs"][0]["kappa"]) == ("zz-a", "zz-b", -1.0)
    assert found["pairs"][0]["n"] == 12
    listed = [p["kappa"] for p in found["pairs"]]
    assert listed == sorted(listed)
    counted = sorted(t.kappa for t in shared.values() if t.kappa is not None and t.n >= MIN_OVERLAP)
    assert sorted(found["counted"]) == pytest.approx(counted)


# -- reading a large sidecar -------------------------------------------------------------------
PLAIN_TEXTS = [
    "s1:\n  verdict: pass\n  score: 8\n  criteria: {tone: met, short: unmet}\n  note: Q&A reply, wow !\n",
    "s1: fail\ns2: {verdict: yes}\n'007': {criteria: {a: true}}\n",
    "s1:\n  annotator: alice\n  verdict: pass\n  annotators:\n    bob: {verdict: fail, score: 2.5}\n",
    "- 1\n- [a, {b: null}]\n- 2026-11-28\n",
    "",
    "# only a comment\n",
]
CAREFUL_TEXTS = [
    "s1: pass\ns1: fail\n",  # a duplicate key: reported with its line the careful way
    "a: &x {verdict: pass}\nb: *x\n",  # an anchor and an alias
    "<<: {verdict: pass}\n",  # a merge key
    "s1: !!omap [{verdict: pass}]\n",  # an explicit tag
    "s1: {score: 1" + "0" * 5000 + "}\n",  # an integer too long to read
    "s1: [unclosed\n",  # a syntax error
    "s1: \x07bell\n",  # a control character
    "[" * 2000 + "]" * 2000,  # nesting deeper than libyaml's own limit
    "a: " + "[" * 150 + "]" * 150 + "\n",  # nesting deeper than the bounds (100 levels)
]


def test_the_fast_reading_gives_the_careful_readings_data_and_declines_what_it_cannot_vouch_for():
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import load_plain, load_with_positions

    for text in PLAIN_TEXTS:
        readable, data = load_plain(text)
        assert readable, text
        assert data == load_with_positions(text, "x.yaml")[0], text
    for text in CAREFUL_TEXTS:
        assert load_plain(text) == (False, None), text[:40]
        try:
            _, _, problems = load_with_positions(text, "x.yaml")
        except RubricError as exc:
            problems = exc.problems
        if "&x" not in text and "<<" not in text and "!!omap" not in text:
            assert problems, text[:40]  # the careful reading says what is wrong, where


def test_a_sidecar_with_a_problem_is_still_reported_with_its_position(tmp_path):
    from rubric_studio.core.labels import load_labels

    path = tmp_path / "r.labels.yaml"
    path.write_text("s1: pass\ns2:\n  verdict: maybe\n")
    labels = load_labels(path)
    assert labels.labels["s1"].verdict == "pass"
    [problem] = labels.problems
    assert (problem.line, "verdict must be pass or fail" in problem.message) == (3, True)
