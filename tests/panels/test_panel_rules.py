"""Pooling rules of a judge panel (core.panel) and the rubric's ``judge.panel`` / ``judge.aggregate`` keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.panel import contest, pool_cell
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.core.rubric import PanelAggregate

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
        (f"j{n}", CriterionResult("a", Status.MET, score=raw / 10, raw_score=raw, source="judge"))
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
    assert contest(pool_cell(CHECK, verdicts("met", "met", "met"))) == 0.0


def test_analytic_mean_and_median():
    assert pool_cell(ANALYTIC, scores(2, 9, 10)).raw_score == pytest.approx(7.0)
    assert pool_cell(ANALYTIC, scores(2, 9, 10)).status is Status.MET
    median = pool_cell(ANALYTIC, scores(2, 6, 10), PanelAggregate(analytic="median"))
    assert median.raw_score == 6 and median.status is Status.UNMET


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
    assert (judge.aggregate.checklist, judge.aggregate.analytic) == ("any", "mean")


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
