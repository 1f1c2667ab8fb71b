"""A panel's tie never helps a sample pass: on a penalty (a negative weight, met = the bad thing is
there) an even split counts as met; ``judge.ties`` chooses otherwise (core.panel, core.rubric)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.panel import pool_cell
from rubric_studio.core.problems import RubricError
from rubric_studio.core.results import CriterionResult, Status, cell_mark
from rubric_studio.core.rubric import PanelAggregate
from rubric_studio.core.scoring import score_sample
from rubric_studio.tui.results._panel_view import members_text
from tests.fakellm import FakeLLM
from tests.panels.judges import LONG, RIGHT, Judges, member, sample_text

pytestmark = pytest.mark.timeout(120)

RUBRIC = parse_rubric(
    "name: r\npass_threshold: 0.8\ncriteria:\n"
    "  - {id: good, outcome: Answers the question}\n"
    "  - {id: rude, outcome: Is rude to the customer, weight: -1}\n"
)
GOOD, RUDE = RUBRIC.criterion("good"), RUBRIC.criterion("rude")


def verdicts(criterion_id: str, *statuses: str) -> list[tuple[str, CriterionResult]]:
    return [
        (f"j{n}", CriterionResult(criterion_id, Status(status), score=1.0 if status == "met" else 0.0,
                                  rationale=f"j{n} says {status}", source="judge"))
        for n, status in enumerate(statuses)
    ]


# -- the pooling rule ---------------------------------------------------------------------------------
def test_a_tie_on_a_penalty_is_met_and_says_so():
    cell = pool_cell(RUDE, verdicts("rude", "met", "unmet"))
    assert (cell.status, cell.score, cell.tie) == (Status.MET, 1.0, True)
    assert cell.rationale.splitlines()[0] == "panel 1–1 (majority); a tie, counted as met (penalty)"
    assert cell_mark("checklist", cell) == "✓ 1–1 tie"
    data = cell.to_dict()
    assert data["tie"] is True and data["panel"]["ties"] == "against_pass"
    assert members_text(cell).plain.splitlines()[1] == "panel 1–1 (majority), a tie: counted as met"
    # the rationale kept is that of the member the tie sided with
    assert cell.rationale.splitlines()[1:] == ["j0: j0 says met"]
    four = pool_cell(RUDE, verdicts("rude", "met", "unmet", "met", "unmet"))
    assert four.status is Status.MET and four.tie
    # 1–1 over the two members that answered: still a tie, still met on a penalty
    assert pool_cell(RUDE, verdicts("rude", "met", "error", "unmet")).status is Status.MET


def test_an_ordinary_criterion_is_unchanged():
    cell = pool_cell(GOOD, verdicts("good", "met", "unmet"))
    assert (cell.status, cell.score, cell.tie) == (Status.UNMET, 0.0, True)
    assert cell.rationale.splitlines()[0] == "panel 1–1 (majority); a tie, counted as unmet"
    assert cell_mark("checklist", cell) == "✗ 1–1 tie"
    # a strict majority decides as before, on either kind of criterion
    for criterion, cid in ((GOOD, "good"), (RUDE, "rude")):
        assert pool_cell(criterion, verdicts(cid, "met", "met", "unmet")).status is Status.MET
        assert pool_cell(criterion, verdicts(cid, "met", "unmet", "unmet")).status is Status.UNMET
        two_one = pool_cell(criterion, verdicts(cid, "met", "met", "unmet")).to_dict()
        assert two_one["tie"] is False and "ties" not in two_one["panel"]


@pytest.mark.parametrize(
    ("ties", "good", "rude", "note"),
    [
        ("against_pass", Status.UNMET, Status.MET, None),
        ("unmet", Status.UNMET, Status.UNMET, "(judge.ties: unmet)"),
        ("met", Status.MET, Status.MET, "(judge.ties: met)"),
    ],
)
def test_the_tie_rule_chooses_how_a_tie_counts(ties, good, rude, note):
    good_cell = pool_cell(GOOD, verdicts("good", "met", "unmet"), ties=ties)
    rude_cell = pool_cell(RUDE, verdicts("rude", "met", "unmet"), ties=ties)
    assert (good_cell.status, rude_cell.status) == (good, rude)
    assert rude_cell.panel["ties"] == ties
    if note:
        assert rude_cell.rationale.splitlines()[0].endswith(f"counted as {rude} {note}")


def test_under_mean_the_tie_decides_met_and_the_score_stays_the_share():
    mean = PanelAggregate(checklist="mean")
    cell = pool_cell(RUDE, verdicts("rude", "met", "unmet"), mean)
    assert (cell.status, cell.score, cell.tie) == (Status.MET, 0.5, True)
    cell = pool_cell(RUDE, verdicts("rude", "met", "unmet"), mean, ties="unmet")
    assert (cell.status, cell.score) == (Status.UNMET, 0.5)
    # ``all`` and ``any`` have no ties: the rule decides, whatever judge.ties says
    for rule, expected in (("all", Status.UNMET), ("any", Status.MET)):
        cell = pool_cell(RUDE, verdicts("rude", "met", "unmet"), PanelAggregate(checklist=rule), ties="met")
        assert cell.status is expected and not cell.tie, rule


def test_a_penalty_tie_no_longer_lets_the_sample_pass():
    good = pool_cell(GOOD, verdicts("good", "met", "met"))
    by_default = score_sample(RUBRIC, {"good": good, "rude": pool_cell(RUDE, verdicts("rude", "met", "unmet"))})
    assert (by_default.score, str(by_default.verdict)) == (0.0, "fail")
    old_rule = score_sample(
        RUBRIC, {"good": good, "rude": pool_cell(RUDE, verdicts("rude", "met", "unmet"), ties="unmet")}
    )
    assert (old_rule.score, str(old_rule.verdict)) == (1.0, "pass")


# -- the rubric key -------------------------------------------------------------------------------------
def test_judge_ties_is_read_and_hashed():
    plain = "name: r\njudge: {panel: [openai:a, openai:b]}\ncriteria: [x]\n"
    assert parse_rubric(plain).judge.ties == "against_pass"
    unmet = parse_rubric(plain.replace("]}", "], ties: unmet}"))
    assert unmet.judge.ties == "unmet"
    explicit = parse_rubric(plain.replace("]}", "], ties: against_pass}"))
    # the default, written or not, hashes the same (cards and reports stay current); another rule does not
    assert explicit.content_hash() == parse_rubric(plain).content_hash() != unmet.content_hash()


@pytest.mark.parametrize(
    ("judge", "where", "says"),
    [
        ("  panel: [openai:a, openai:b]\n  ties: sometimes\n", "4:9", "judge.ties: unknown tie rule 'sometimes'; "
         "expected against_pass (a tie counts against the sample: unmet, or met on a penalty), unmet or met"),
        ("  panel: [openai:a, openai:b]\n  ties: [met]\n", "4:9", "judge.ties: unknown tie rule ['met']"),
        ("  panel:\n    - {model: openai:a, ties: met}\n    - openai:b\n", "4:7",
         "'panel', 'aggregate' and 'ties' belong to the judge block, not to one member"),
    ],
)
def test_a_bad_tie_rule_is_one_line_with_its_position(tmp_path: Path, capsys, judge, where, says):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(f"name: r\njudge:\n{judge}criteria: [x]\n")
    assert main(["validate", str(rubric)]) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert f"{rubric}:{where}: " in text and says in text, text
    assert "Traceback" not in text
    with pytest.raises(RubricError):
        parse_rubric(rubric.read_text())


def test_validate_says_what_a_two_member_panel_does_to_a_penalty(tmp_path: Path, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: r\njudge:\n  panel: [openai:a, openai:b]\n"
                      "criteria:\n  - x\n  - {id: rude, outcome: Is rude, weight: -1}\n")
    assert main(["validate", str(rubric)]) == 0
    captured = capsys.readouterr()
    text = " ".join((captured.out + captured.err).split())
    assert ("a 1–1 split is a tie, counted against the sample (unmet, and met on a penalty), so a criterion is met "
            "only when both members say met, and a penalty when either does") in text
    assert "set judge.ties (against_pass, unmet or met)" in text


# -- end to end: grade, the reply cache, the studio's grader ----------------------------------------------
N = 8
PANEL_RUBRIC = (
    "name: r\npass_threshold: 0.8\njudge:\n  max_retries: 0\n  panel: [{a}, {b}]\n{ties}"
    "criteria:\n  - {{id: ticket, check: {{type: keywords, required: [ticket]}}}}\n"
    "  - {{id: rude, outcome: Is rude to the customer, weight: -1}}\n"
)


def rubric_text(ties: str | None = None) -> str:
    return PANEL_RUBRIC.format(a=member(LONG), b=member(RIGHT), ties=f"  ties: {ties}\n" if ties else "")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(rubric_text())
    lines = [json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) for i in range(N)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.fixture
def server(monkeypatch):
    with FakeLLM(brain=Judges()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield fake


def grade(project: Path, capsys) -> dict:
    main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json",
          "--cache-path", str(project / "c.sqlite")])
    return json.loads(capsys.readouterr().out)


def test_grade_counts_a_penalty_tie_as_met_and_ties_unmet_restores_the_old_verdicts(project, server, capsys):
    # judge-long says met when NN // 2 is even, judge-right when NN is even: 1–1 when NN % 4 is 1 or 2.
    # The keyword check is met on every sample, so the penalty alone decides: met → score 0, fail.
    tied = {f"s{i:02d}" for i in range(N) if i % 4 in (1, 2)}
    data = grade(project, capsys)
    samples = {s["id"]: s for s in data["samples"]}
    rude = {sid: s["criteria"][1] for sid, s in samples.items()}
    assert {sid for sid, cell in rude.items() if cell["tie"]} == tied
    for sid in tied:
        assert rude[sid]["status"] == "met" and rude[sid]["panel"]["ties"] == "against_pass"
        assert "a tie, counted as met (penalty)" in rude[sid]["rationale"]
        assert (samples[sid]["score"], samples[sid]["verdict"]) == (0.0, "fail")
    passed = {sid for sid, s in samples.items() if s["verdict"] == "pass"}
    assert passed == {f"s{i:02d}" for i in range(N) if i % 4 == 3}  # neither member says rude

    # the same replies, from the cache, pooled by the old rule: the tied samples pass
    (project / "r.yaml").write_text(rubric_text("unmet"))
    data = grade(project, capsys)
    samples = {s["id"]: s for s in data["samples"]}
    assert all(s["criteria"][1]["source"] == "cache" for s in samples.values())  # no judge was asked again
    for sid in tied:
        cell = samples[sid]["criteria"][1]
        assert cell["tie"] is True and cell["status"] == "unmet" and cell["panel"]["ties"] == "unmet"
        assert (samples[sid]["score"], samples[sid]["verdict"]) == (1.0, "pass")
    assert {sid for sid, s in samples.items() if s["verdict"] == "pass"} == passed | tied


def test_the_table_marks_a_penalty_tie_met(project, server, capsys):
    main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--cache-path", str(project / "c.sqlite")])
    assert capsys.readouterr().out.count("✓ 1–1 tie") == N // 2


def test_a_changed_tie_rule_gives_the_studio_a_new_panel_grader():
    # The studio keeps its grader (and so its pooling) while the judge block's key is unchanged: the
    # tie rule must be part of that key, or an edited judge.ties would keep pooling by the old rule.
    from rubric_studio.session.studio import grader_key

    plain = parse_rubric(rubric_text())
    assert grader_key(parse_rubric(rubric_text("unmet"))) != grader_key(plain)
    assert grader_key(parse_rubric(rubric_text())) == grader_key(plain)


def test_the_panel_grader_pools_by_the_rubrics_tie_rule():
    import asyncio

    from rubric_studio.core.results import SampleResult, Verdict
    from rubric_studio.engine.api import make_grader

    def member_result(status: str) -> SampleResult:
        return SampleResult("s", None, Verdict.PENDING, [
            CriterionResult("ticket", Status.MET, score=1.0, source="check"),
            CriterionResult("rude", Status(status), score=float(status == "met"), source="judge"),
        ])

    for ties, verdict in ((None, "fail"), ("unmet", "pass")):
        rubric = parse_rubric(rubric_text(ties))
        grader = make_grader(rubric, env={"OPENAI_API_KEY": "test"}, use_cache=False)
        try:
            pooled = grader.pool(rubric, [member_result("met"), member_result("unmet")])
        finally:
            asyncio.run(grader.aclose())
        assert str(pooled.verdict) == verdict and pooled.cell("rude").tie, ties


# -- exports that restate the pooling rule ------------------------------------------------------------------
def _exported(ties: str | None, criteria: str, target: str, **options):
    import yaml

    from rubric_studio.interop import export_rubric

    text = (f"name: r\njudge:\n  panel: [{member(LONG)}, {member(RIGHT)}]\n" + (f"  ties: {ties}\n" if ties else "")
            + f"criteria:\n{criteria}")
    result = export_rubric(parse_rubric(text), target, **options)
    return result.text if target == "markdown" else yaml.safe_load(result.text)


PENALTY = "  - x\n  - {id: rude, outcome: Is rude, weight: -1}\n"


@pytest.mark.parametrize(("ties", "share"), [(None, 0.499999), ("unmet", 0.500001), ("met", 0.499999)])
def test_agentv_passes_a_penalty_group_on_a_tie_where_the_tie_counts_as_met(ties, share):
    # the penalty's group is negated: its members passing (saying rude) at this share applies the penalty,
    # so a 1–1 tie (a share of 0.5) applies it exactly where grade counts the tie as met
    for version, key in ((4, "assertions"), (5, "assert")):
        rude = next(g for g in _exported(ties, PENALTY, "agentv", agentv_version=version)[key]
                    if g.get("name", g.get("metric")) == "rude")
        assert rude["negate"] is True
        assert (rude["aggregator"]["threshold"] if version == 4 else rude["threshold"]) == share


@pytest.mark.parametrize(("ties", "share"), [(None, 0.500001), ("unmet", 0.500001), ("met", 0.499999)])
def test_promptfoo_gates_a_required_criterion_on_a_tie_as_grade_counts_it(ties, share):
    (gate,) = _exported(ties, "  - {id: good, outcome: Answers, required: true}\n", "promptfoo")["defaultTest"]["assert"]
    assert gate["type"] == "assert-set" and gate["threshold"] == share


@pytest.mark.parametrize(("ties", "says"), [(None, "a tie counts against the sample (unmet, or met on a penalty)"),
                                            ("unmet", "a tie counts as unmet")])
def test_the_markdown_export_says_how_a_tie_counts(ties, says):
    assert f"verdicts pooled by checklist majority, analytic median; {says}." in _exported(ties, PENALTY, "markdown")


def test_exports_without_panels_name_a_chosen_tie_rule_in_their_warning():
    from rubric_studio.interop import export_rubric

    text = "name: r\njudge:\n  panel: [openai:a, openai:b]\n{ties}criteria: [x]\n"
    chosen = export_rubric(parse_rubric(text.format(ties="  ties: unmet\n")), "letta").warnings
    assert any("(checklist majority, analytic median, ties unmet) is not exported" in w for w in chosen)
    default = export_rubric(parse_rubric(text.format(ties="")), "letta").warnings
    assert any("(checklist majority, analytic median) is not exported" in w for w in default)


@pytest.mark.parametrize(("ties", "met"), [(None, True), ("unmet", False)])
def test_improve_pools_a_panel_without_a_member_by_the_tie_rule(ties, met):
    # dropping the third member of a 2–1 leaves a 1–1 tie on the penalty: met unless judge.ties says unmet
    from rubric_studio.core.results import SampleResult, Verdict
    from rubric_studio.engine.improve._panel import repooled

    rubric = parse_rubric("name: r\njudge:\n  panel: [openai:a, openai:b, openai:c]\n"
                          + (f"  ties: {ties}\n" if ties else "") + "criteria:\n  - x\n"
                          "  - {id: rude, outcome: Is rude, weight: -1}\n")
    members = [{"judge": judge, "status": status, "score": float(status == "met"), "raw_score": None,
                "source": "judge", "error": None}
               for judge, status in (("a", "met"), ("b", "unmet"), ("c", "unmet"))]
    cell = CriterionResult("rude", Status.UNMET, score=0.0, source="judge", members=members, panel={})
    sample = SampleResult("s1", 1.0, Verdict.PASS, [cell])
    assert repooled(rubric, rubric.criterion("rude"), [sample], drop="c") == {"s1": met}
