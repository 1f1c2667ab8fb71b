"""Judge panels end to end: ``grade --judge A,B,C`` and ``calibrate --judges`` against three scripted
judges on the fake server (see tests/panels/judges.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests.fakellm import FakeLLM
from tests.panels.judges import COIN, DOWN, FLAKY, LONG, RIGHT, RUBRIC, Judges, member, sample_text, truth

pytestmark = pytest.mark.timeout(120)
N = 40


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "r.yaml").write_text(RUBRIC)
    lines = [json.dumps({"id": f"s{i:02d}", "output": sample_text(i)}) for i in range(N)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    labels = "".join(f"s{i:02d}: {{verdict: {'pass' if truth(i) else 'fail'}}}\n" for i in range(N))
    (tmp_path / "r.labels.yaml").write_text(labels)
    return tmp_path


@pytest.fixture
def server(monkeypatch):
    with FakeLLM(brain=Judges()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield fake


def grade(project: Path, capsys, judges: list[str], *extra: str) -> tuple[int, dict]:
    code = main(
        [
            "grade",
            str(project / "r.yaml"),
            str(project / "s.jsonl"),
            "--format",
            "json",
            "--judge",
            ",".join(member(m) for m in judges),
            "--cache-path",
            str(project / "c.sqlite"),
            *extra,
        ]
    )
    return code, json.loads(capsys.readouterr().out)


def test_the_panel_beats_its_biased_members_on_the_labels(project, server, capsys):
    panel = "+".join(member(m) for m in (LONG, COIN, RIGHT))
    judges = ",".join([member(LONG), member(COIN), panel])
    code = main(
        [
            "calibrate",
            str(project / "r.yaml"),
            str(project / "s.jsonl"),
            "--format",
            "json",
            "--judges",
            judges,
            "--cache-path",
            str(project / "c.sqlite"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1), data
    kappa = {entry["judge"]: entry["kappa"] for entry in data["judges"]}
    assert kappa[panel] > kappa[member(LONG)] + 0.2
    assert kappa[panel] > kappa[member(COIN)] + 0.2
    assert kappa[panel] > 0.4
    # every member judged every sample once: the panel's run took the members' earlier replies from the cache
    assert server.brain.calls == {LONG: N, COIN: N, RIGHT: N}


def test_json_lists_each_members_verdict_and_usage(project, server, capsys):
    code, data = grade(project, capsys, [LONG, COIN, RIGHT])
    assert code == 1
    assert data["judge"]["provider"] == "panel"
    for sample in data["samples"]:
        number = int(sample["id"][1:])
        cell = sample["criteria"][0]
        members = {m["judge"]: m for m in cell["members"]}
        assert set(members) == {member(LONG), member(COIN), member(RIGHT)}
        assert members[member(RIGHT)]["status"] == ("met" if truth(number) else "unmet")
        votes = [m["status"] == "met" for m in cell["members"]]
        assert cell["status"] == ("met" if sum(votes) >= 2 else "unmet")
        assert cell["panel"]["agree"] + cell["panel"]["disagree"] == 3
        assert {"judge", "status", "score", "rationale", "evidence", "source"} <= set(cell["members"][0])
    usage = data["usage"]
    assert usage["judge_calls"] == 3 * N
    assert {label: u["judge_calls"] for label, u in usage["members"].items()} == {
        member(LONG): N,
        member(COIN): N,
        member(RIGHT): N,
    }


def test_adding_a_member_judges_only_its_cells_and_dropping_one_costs_nothing(project, server, capsys):
    grade(project, capsys, [LONG, RIGHT])
    assert server.calls() == 2 * N
    server.reset()
    _, data = grade(project, capsys, [LONG, RIGHT, COIN])
    assert server.calls() == N
    assert {r.body["model"] for r in server.requests} == {COIN}
    assert data["usage"]["members"][member(COIN)]["judge_calls"] == N
    assert data["usage"]["members"][member(LONG)]["cache_hits"] == N
    server.reset()
    grade(project, capsys, [COIN, RIGHT])
    assert server.calls() == 0


def test_a_member_that_errors_is_left_out_of_the_pool(project, server, capsys):
    code, data = grade(project, capsys, [DOWN, RIGHT, RIGHT])
    for sample in data["samples"]:
        cell = sample["criteria"][0]
        assert cell["status"] == ("met" if truth(int(sample["id"][1:])) else "unmet")
        assert cell["panel"]["errors"] == 1
        assert "errored" in cell["rationale"]
        assert [m["status"] for m in cell["members"]][0] == "error"
    assert data["summary"]["errors"] == 0  # no errored cell: the two others pooled
    assert code == 3  # but a member that never answered fails the run (below)


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_member_failing_on_every_cell_exits_3_with_one_line_naming_it(project, server, capsys, fmt):
    code = main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", fmt, "--judge",
                 ",".join(member(m) for m in (DOWN, RIGHT, LONG)), "--cache-path", str(project / "c.sqlite")])
    captured = capsys.readouterr()
    assert code == 3
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"error: judge panel member {member(DOWN)} failed on every cell it judged (40 of 40): 500 ")
    assert "Traceback" not in captured.err
    if fmt == "json":
        data = json.loads(captured.out)
        members = data["usage"]["members"]
        assert {label: m["errors"] for label, m in members.items()} == {member(DOWN): N, member(RIGHT): 0,
                                                                        member(LONG): 0}
        assert data["summary"]["errors"] == 0
    else:
        assert f"{member(DOWN)}: {N} calls, 0 cache hits, {N} of {N} errored" in " ".join(captured.out.split())


def test_a_member_failing_on_some_cells_is_counted_marked_and_fails_the_run(project, server, capsys):
    # judge-flaky answers 500 on tickets 0, 4, 8, ... (10 of 40) and the truth on the others
    code = main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", "--judge",
                 ",".join(member(m) for m in (FLAKY, RIGHT, LONG)), "--cache-path", str(project / "c.sqlite")])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["usage"]["members"][member(FLAKY)]["errors"] == 10
    assert data["usage"]["members"][member(RIGHT)]["errors"] == 0
    marked = {s["id"] for s in data["samples"] if s["criteria"][0]["panel"]["errored"] == [member(FLAKY)]}
    assert marked == {f"s{i:02d}" for i in range(0, N, 4)}
    assert code == 3  # as for an errored cell: the pooled verdicts came from fewer members
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"error: judge panel member {member(FLAKY)} failed on 10 of 40 cells (pooled over the "
                           "other members): 500 ")
    main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge",
          ",".join(member(m) for m in (FLAKY, RIGHT, LONG)), "--cache-path", str(project / "c.sqlite")])
    # the errored cells were not cached: asked again (and failed again), the 30 answers came from the cache
    assert f"{member(FLAKY)}: 10 calls, 30 cache hits, 10 errors," in " ".join(capsys.readouterr().out.split())


def test_a_two_member_panel_marks_every_even_split_a_tie(project, server, capsys):
    # judge-long says met on tickets NN with (NN // 2) % 2 == 0, judge-right on even NN: they disagree exactly
    # when NN % 4 is 1 or 2 — 20 of the 40 cells, each a 1–1 tie, unmet; met 2–0 only when NN % 4 == 0
    code, data = grade(project, capsys, [LONG, RIGHT])
    cells = {sample["id"]: sample["criteria"][0] for sample in data["samples"]}
    ties = {sid for sid, cell in cells.items() if cell["tie"] is True}
    assert ties == {f"s{i:02d}" for i in range(N) if i % 4 in (1, 2)} and len(ties) == 20
    for sid in ties:
        assert cells[sid]["status"] == "unmet"
        assert (cells[sid]["panel"]["agree"], cells[sid]["panel"]["disagree"]) == (1, 1)
    assert all(cell["tie"] is False for sid, cell in cells.items() if sid not in ties)
    assert data["summary"]["passed"] == 10 and code == 1
    main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", f"{member(LONG)},{member(RIGHT)}",
          "--cache-path", str(project / "c.sqlite")])
    table = capsys.readouterr()
    assert table.out.count("✗ 1–1 tie │") == 20  # one per tied row (the legend says it once more)
    assert "a panel of 2 members with checklist aggregate majority" in table.err and "aggregate to all" in table.err
    main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", f"{member(LONG)},{member(RIGHT)}",
          "--cache-path", str(project / "c.sqlite"), "--format", "html", "-o", str(project / "r.html")])
    assert (project / "r.html").read_text().count("✗ 1–1 tie</a>") == 20  # the HTML report's table


def test_every_member_erroring_is_an_error_cell_not_a_fail(project, server, capsys):
    code, data = grade(project, capsys, [DOWN, DOWN])
    assert code == 3
    cell = data["samples"][0]["criteria"][0]
    assert cell["status"] == "error" and "every panel member failed" in cell["error"]
    assert data["summary"]["failed"] == 0


def test_the_summary_line_names_the_panel_and_each_members_calls(project, server, capsys):
    main(
        [
            "grade",
            str(project / "r.yaml"),
            str(project / "s.jsonl"),
            "--judge",
            f"{member(LONG)},{member(RIGHT)}",
            "--cache-path",
            str(project / "c.sqlite"),
        ]
    )
    out = capsys.readouterr().out
    assert f"panel {member(LONG)}+{member(RIGHT)}: {2 * N} calls" in out
    assert f"{member(LONG)}: {N} calls, 0 cache hits" in out and f"{member(RIGHT)}: {N} calls" in out


def test_the_batch_api_refuses_a_panel_in_one_line(project, server, capsys):
    code = main(
        [
            "grade",
            str(project / "r.yaml"),
            str(project / "s.jsonl"),
            "--batch-api",
            "--judge",
            f"{member(LONG)},{member(RIGHT)}",
            "--cache-path",
            str(project / "c.sqlite"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "judge panel" in err and "Traceback" not in err
    assert server.calls() == 0


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ("{long},,{right}", "an empty entry in"),  # would silently grade with two members
        ("{long},gpt-4o", "'gpt-4o' is not provider:model"),
        ("{long}+opnai:x", "unknown provider 'opnai'"),
    ],
)
def test_a_malformed_panel_on_the_command_line_exits_2_before_any_call(project, server, capsys, judges, message):
    text = judges.format(long=member(LONG), right=member(RIGHT))
    code = main(["grade", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", text,
                 "--cache-path", str(project / "c.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "--judge" in err and "Traceback" not in err
    assert server.calls() == 0


class Fixed:
    """Analytic judges answering fixed scores: model ``score-<x>-<y>[…]`` gives y to the criterion whose outcome
    is ``Y`` and x to any other."""

    def __call__(self, call):
        _, x, y = call.body["model"].split("-")[:3]
        y_asked = call.criteria[0].outcome == "Y"  # a per-criterion request names its outcome, not its id
        return {"rationale": "scored", "evidence": [], "score": int(y if y_asked else x)}


def analytic_grade(tmp_path: Path, capsys, monkeypatch, rubric: str, models: list[str]) -> tuple[int, dict]:
    (tmp_path / "r.yaml").write_text(rubric)
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "a", "output": "an answer"}) + "\n")
    with FakeLLM(brain=Fixed()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        code = main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--format", "json",
                     "--judge", ",".join(f"openai:{m}" for m in models), "--cache-path", str(tmp_path / "c.sqlite")])
    return code, json.loads(capsys.readouterr().out)


def test_members_9_9_1_pool_to_9_and_meet_the_criterion(tmp_path, capsys, monkeypatch):
    rubric = ("name: r\njudge: {max_retries: 0}\ncriteria:\n"
              "  - {id: x, outcome: Warm, score_ranges: {0: cold, 7: warm}, min_score: 0.7}\n")
    code, data = analytic_grade(tmp_path, capsys, monkeypatch, rubric, ["score-9-0", "score-9-0-b", "score-1-0"])
    cell = data["samples"][0]["criteria"][0]
    assert (cell["status"], cell["raw_score"], cell["score"]) == ("met", 9.0, 0.9)  # the mean said 6.333, unmet
    assert cell["panel"]["rule"] == "median" and (cell["panel"]["agree"], cell["panel"]["disagree"]) == (2, 1)
    assert code == 0 and data["samples"][0]["verdict"] == "pass"


def test_a_pooled_sample_score_of_exactly_the_threshold_passes_end_to_end(tmp_path, capsys, monkeypatch):
    # mean rule; x (weight 1): 2, 2, 2 → 0.2; y (weight 3): 9, 10, 9 → 28/30; (0.2 + 3 × 28/30) / 4 = 0.75 exactly.
    # Before, y pooled to a rounded 9.333 and the sample scored 0.749975: a fail at pass_threshold 0.75.
    rubric = ("name: r\npass_threshold: 0.75\njudge: {max_retries: 0, aggregate: mean}\ncriteria:\n"
              "  - {id: x, outcome: X, score_ranges: {0: none, 10: full}, min_score: 0}\n"
              "  - {id: y, outcome: Y, score_ranges: {0: none, 10: full}, min_score: 0, weight: 3}\n")
    code, data = analytic_grade(tmp_path, capsys, monkeypatch, rubric, ["score-2-9", "score-2-10", "score-2-9-b"])
    sample = data["samples"][0]
    assert sample["score"] == 0.75 and sample["verdict"] == "pass" and code == 0
    assert {c["id"]: c["raw_score"] for c in sample["criteria"]} == {"x": 2.0, "y": pytest.approx(28 / 3)}


def test_calibrate_never_recommends_a_panel_whose_member_errored_and_exits_3(project, server, capsys):
    panel = "+".join(member(m) for m in (RIGHT, LONG, DOWN))
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", "--judges",
                 f"{member(LONG)},{panel}", "--cache-path", str(project / "c.sqlite")])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    entry = {e["judge"]: e for e in data["judges"]}[panel]
    assert entry["errors"] == 0 and entry["member_errors"] == N  # no cell in error, every one pooled without it
    assert data["recommended"] != panel and f"{panel}: {N} cells pooled without a panel member that errored" in (
        data["recommendation"])
    assert code == 3  # a gate never passes or fails on verdicts a member was missing from
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"error: judge panel member {member(DOWN)} failed on every cell it judged ({N} of {N})")
