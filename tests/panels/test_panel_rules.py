"""Pooling rules of a judge panel (core.panel) and the rubric's ``judge.panel`` / ``judge.aggregate`` keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.panel import contest, pool_cell
from rubric_studio.core.results import CriterionResult, Status, cell_mark
from rubric_studio.core.rubric import PanelAggregate
from rubric_studio.tui.results._panel_view import members_text

RUBRIC = parse_rubric(
    "name: r\ncriteria:\n  - {id: c, outcome: Says hello}\n"
    "  - {id: a, outcome: Warm, score_ranges: {0: cold, 5: ok, 8: warm}, min_score: 0.7}\n"
)
CHECK, ANALYTIC = RUBRIC.criterion("c"), RUBRIC.criterion("a")


def verdicts(*statuses: str) -> list[tuple[str, CriterionResult]]:
    cells = []
    for n, status in enumerate(statuses):
        score = {"met": 1.0, "unmet": 0.0}.get(status)
        cells.append(
            (
                f"j{n}",
                CriterionResult(
                    "c",
                    Status(status),
                    score=score,
                    source="judge",
                    error="boom" if status == "error" else None,
                ),
            )
        )
    return cells


def scores(*raws: float) -> list[tuple[str, CriterionResult]]:
    return [
        (f"j{n}", CriterionResult("a", Status.MET if raw >= 7 else Status.UNMET, score=raw / 10, raw_score=raw,
                                  source="judge"))
        for n, raw in enumerate(raws)
    ]


@pytest.mark.parametrize(
    ("rule", "statuses", "expected", "score"),
    [
        ("majority", ("met", "met", "unmet"), Status.MET, 1.0),
        ("majority", ("met", "met", "unmet", "unmet"), Status.UNMET, 0.0),  # an even split is unmet
        ("all", ("met", "met", "unmet"), Status.UNMET, 0.0),
        ("any", ("unmet", "met", "unmet"), Status.MET, 1.0),
        ("mean", ("met", "met", "unmet"), Status.MET, 0.666667),
        ("mean", ("met", "unmet"), Status.UNMET, 0.5),
        ("majority", ("met", "error", "unmet"), Status.UNMET, 0.0),  # 1–1 over the two that answered
    ],
)
def test_checklist_rules(rule, statuses, expected, score):
    cell = pool_cell(CHECK, verdicts(*statuses), PanelAggregate(checklist=rule))
    assert cell.status is expected
    assert cell.score == pytest.approx(score)


def test_a_tie_is_marked_and_most_contested():
    tie = pool_cell(CHECK, verdicts("met", "unmet"))
    assert tie.tie and contest(tie) == 1.0
    assert tie.to_dict()["tie"] is True and "a tie, counted as unmet" in tie.rationale
    assert cell_mark("checklist", tie) == "✗ 1–1 tie"
    assert members_text(tie).plain.splitlines()[1] == "panel 1–1 (majority), a tie: counted as unmet"
    assert pool_cell(CHECK, verdicts("met", "met", "unmet", "unmet")).to_dict()["tie"] is True
    two_one = pool_cell(CHECK, verdicts("met", "met", "unmet"))
    assert two_one.to_dict()["tie"] is False and cell_mark("checklist", two_one) == "✓ 2–1"
    # under ``all`` a 1–1 is no tie: the rule, not the split, decides
    assert pool_cell(CHECK, verdicts("met", "unmet"), PanelAggregate(checklist="all")).tie is False
    assert contest(pool_cell(CHECK, verdicts("met", "met", "met"))) == 0.0


def test_analytic_mean_and_median():
    mean = PanelAggregate(analytic="mean")
    assert pool_cell(ANALYTIC, scores(2, 9, 10), mean).raw_score == pytest.approx(7.0)
    assert pool_cell(ANALYTIC, scores(2, 9, 10), mean).status is Status.MET
    median = pool_cell(ANALYTIC, scores(2, 6, 10), PanelAggregate(analytic="median"))
    assert median.raw_score == 6 and median.status is Status.UNMET


def test_one_outlying_member_does_not_overrule_two_who_agree_by_default():
    # min_score 0.7: 9, 9, 1 → median 9 → 0.9, met (the mean, 19/3 = 6.333, would be unmet)
    cell = pool_cell(ANALYTIC, scores(9, 9, 1))
    assert (cell.raw_score, cell.score, cell.status) == (9.0, 0.9, Status.MET)
    assert cell.panel["rule"] == "median" and (cell.panel["agree"], cell.panel["disagree"]) == (2, 1)
    assert pool_cell(ANALYTIC, scores(9, 9, 1), PanelAggregate(analytic="mean")).status is Status.UNMET
    # two members: the median is their mean; four: the mean of the middle two
    assert pool_cell(ANALYTIC, scores(6, 9)).raw_score == 7.5
    assert pool_cell(ANALYTIC, scores(1, 6, 9, 10)).raw_score == 7.5


@pytest.mark.parametrize("rule", ["mean", "median"])
def test_a_pooled_score_of_exactly_the_min_score_meets_it(rule):
    # min_score 0.75: 7 and 8 pool to 7.5 → 0.75 under either rule; 6, 8, 8, 8 → mean 7.5 too
    criterion = parse_rubric(
        "name: r\ncriteria:\n  - {id: a, outcome: Warm, score_ranges: {0: cold, 8: warm}, min_score: 0.75}\n"
    ).criterion("a")
    for raws in [(7, 8), (6, 8, 8, 8) if rule == "mean" else (7, 7, 8, 8)]:
        cell = pool_cell(criterion, scores(*raws), PanelAggregate(analytic=rule))
        assert cell.score == 0.75 and cell.status is Status.MET, raws
    # 7, 7, 8 → mean 22/3 = 7.333… → 0.7333…, unmet, and kept exact, not rounded to 7.333
    cell = pool_cell(criterion, scores(7, 7, 8), PanelAggregate(analytic="mean"))
    assert cell.raw_score == 22 / 3 and cell.status is Status.UNMET


def test_a_pooled_sample_score_of_exactly_the_threshold_passes():
    # weights 1 and 3, three members, mean rule: 2, 2, 2 → 0.2 and 9, 10, 9 → 28/30; (0.2 + 3·28/30)/4 = 0.75.
    # Pooled scores rounded to three decimals of raw (9.333) gave 0.749975 and failed the 0.75 threshold.
    from rubric_studio.core.scoring import score_sample

    rubric = parse_rubric(
        "name: r\npass_threshold: 0.75\njudge: {panel: [openai:a, openai:b, openai:c], aggregate: mean}\n"
        "criteria:\n  - {id: x, outcome: X, score_ranges: {0: none, 10: full}, min_score: 0}\n"
        "  - {id: y, outcome: Y, score_ranges: {0: none, 10: full}, min_score: 0, weight: 3}\n"
    )
    rules = rubric.judge.aggregate
    cells = {
        "x": pool_cell(rubric.criterion("x"), [(f"j{n}", c) for n, (_, c) in enumerate(scores(2, 2, 2))], rules),
        "y": pool_cell(rubric.criterion("y"), scores(9, 10, 9), rules),
    }
    outcome = score_sample(rubric, cells)
    assert outcome.score == pytest.approx(0.75, abs=1e-12) and str(outcome.verdict) == "pass"


def test_every_member_erroring_is_an_error():
    cell = pool_cell(CHECK, verdicts("error", "error"))
    assert cell.status is Status.ERROR and cell.panel["errors"] == 2


def test_a_pending_member_keeps_the_cell_pending():
    cells = verdicts("met", "met") + [("j9", CriterionResult("c", Status.PENDING, source="none"))]
    assert pool_cell(CHECK, cells).status is Status.PENDING


def test_aggregate_names_set_the_kinds_they_apply_to():
    judge = parse_rubric(
        "name: r\njudge: {panel: [openai:a, openai:b], aggregate: median}\ncriteria: [x]\n"
    ).judge
    assert (judge.aggregate.checklist, judge.aggregate.analytic) == ("majority", "median")
    judge = parse_rubric("name: r\njudge: {panel: [openai:a], aggregate: any}\ncriteria: [x]\n").judge
    assert (judge.aggregate.checklist, judge.aggregate.analytic) == ("any", "median")


def test_a_rubric_without_a_panel_hashes_as_before():
    assert (
        parse_rubric("name: r\njudge: {model: openai:m}\ncriteria: [x]\n").content_hash()
        == "7d8ddd4ae57b013f"
    )


def test_bad_panel_settings_are_reported_with_their_position(tmp_path: Path, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(
        "name: r\njudge:\n  panel:\n    - openai:a\n    - model: openai:b\n      temprature: 0.3\n"
        "    - {temperature: 1}\n  aggregate: majorty\ncriteria: [x]\n"
    )
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr()
    text = err.out + err.err
    assert f"{rubric}:6:7: unknown key 'temprature' in judge.panel[1]" in text
    assert f'{rubric}:7:7: judge.panel[2]: a panel member needs a "model"' in text
    assert f"{rubric}:8:14: judge.aggregate: unknown aggregate 'majorty'" in text


def test_model_and_panel_together_is_an_error():
    from rubric_studio.core.problems import RubricError

    with pytest.raises(RubricError, match="either 'model'"):
        parse_rubric("name: r\njudge: {model: openai:m, panel: [openai:a]}\ncriteria: [x]\n")


@pytest.mark.parametrize(
    ("panel", "aggregate", "criteria", "says"),
    [
        ("[openai:a, openai:b]", None, "[x]", "a 1–1 split is a tie, counted as unmet, so every split is unmet"),
        ("[openai:a, openai:b, openai:c, openai:d]", "majority", "[x]", "a 2–2 split is a tie, counted as unmet"),
        ("[openai:a, openai:b, openai:c]", None, "[x]", None),  # odd: no tie
        ("[openai:a, openai:b]", "all", "[x]", None),  # "both must say met", chosen
        ("[openai:a, openai:b]", "mean", "[x]", None),
        ("[openai:a, openai:b]", None, "[{id: t, outcome: Warm, score_ranges: {0: cold, 7: warm}}]", None),
    ],
)
def test_validate_warns_on_an_even_sized_majority_panel_and_names_the_rules(tmp_path: Path, capsys, panel,
                                                                             aggregate, criteria, says):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(f"name: r\njudge:\n  panel: {panel}\n" + (f"  aggregate: {aggregate}\n" if aggregate else "")
                      + f"criteria: {criteria}\n")
    assert main(["validate", str(rubric)]) == 0  # a warning, not an error
    text = capsys.readouterr()
    text = text.out + text.err
    if says is None:
        assert "warning" not in text
        return
    assert f"{rubric}:3:10: warning: judge.panel: a panel of" in text and says in text
    for rule in ("all (every member must say met)", "any (one member saying met is enough)",
                 "mean (a split scores the share of members saying met)", "an odd number of members"):
        assert rule in text
