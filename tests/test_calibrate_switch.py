"""``calibrate --switch-to``: switching judges with proof, against the fake LLM server (real HTTP).

Fifty tickets: s00–s39 labelled with a verdict and both criteria, s40–s49 not labelled. The human truth:
``resolves`` is met on even tickets, ``polite`` on tickets below 20; a ticket passes when both
are met (pass_threshold 0.75 of two equal weights). Each fake model agrees with the labels
except where it is scripted to be wrong, so every figure below is known by hand:

    judge-cur     the rubric's judge: wrong on resolves for s00–s03 (so on those 4 verdicts too)
    judge-better  wrong nowhere
    judge-worse   resolves right everywhere, polite wrong on s20–s29 (says met)
    judge-same    wrong exactly where judge-cur is
    judge-flaky   right everywhere, but the server fails every call on s05 and s06

Against judge-cur, judge-worse makes 10 polite cells worse and none better: the exact paired
test's p_worse = P(X ≥ 10 | 10, ½) = 1/1024. Its sample verdicts: 5 worse (s20, s22, s24, s26,
s28: resolves met, polite now met → pass, the label fails them) and 4 better (s00–s03):
p_worse = P(X ≥ 5 | 9, ½) = (126 + 84 + 36 + 9 + 1)/512 = 1/2. All criterion cells pooled:
10 worse, 4 better: p_worse = (1001 + 364 + 91 + 14 + 1)/16384 = 1471/16384. Four comparisons
(overall, two criteria, pooled): Bonferroni threshold 0.05/4 = 0.0125 — only polite is worse.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import jsonschema
import pytest
import yaml

from rubric_studio.cli import main
from tests.fakellm import Call, FakeLLM, server_error

TICKETS = 40  # labelled
UNLABELLED = 10  # s40–s49: graded by the current judge, by the candidate only with --switch-all-samples
WRONG = {  # model -> criterion -> tickets it gets wrong
    "judge-cur": {"resolves": {0, 1, 2, 3}},
    "judge-better": {},
    "judge-worse": {"polite": set(range(20, 30))},
    "judge-same": {"resolves": {0, 1, 2, 3}},
    "judge-flaky": {},
}
FAILS = {"judge-flaky": {5, 6}}
PRICES = {"judge-cur": (1.0, 4.0), "judge-better": (0.1, 0.4), "judge-worse": (0.05, 0.2), "judge-same": (1.0, 4.0),
          "judge-flaky": (0.1, 0.4)}  # fmt: skip
CUR, BETTER, WORSE, SAME, FLAKY = (f"openai:{m}" for m in ("judge-cur", "judge-better", "judge-worse", "judge-same",
                                                             "judge-flaky"))  # fmt: skip

RUBRIC = """\
# Ticket replies: the rubric the team reports on.
name: tickets
pass_threshold: 0.75
judge:
  model: openai:judge-cur   # the judge we use now
  max_retries: 0
  # replies are short: a minute is plenty
  timeout: 60
criteria:
  - id: resolves   # the customer's issue is solved
    outcome: Resolves the customer's billing issue
  - id: polite
    outcome: Polite and professional tone
"""


def truth(criterion: str, number: int) -> bool:
    return number % 2 == 0 if criterion == "resolves" else number < 20


class Script:
    """Answers by model, criterion and ticket number, as WRONG and FAILS say."""

    def __init__(self):
        self.lock = threading.Lock()
        self.asked: list[tuple[str, int]] = []

    def __call__(self, call: Call):
        model = call.body["model"]
        number = int(re.search(r"ticket (\d+)", call.sample).group(1))
        with self.lock:
            self.asked.append((model, number))
        if number in FAILS.get(model, set()):
            return server_error(500)
        criterion = "resolves" if "billing" in call.criteria[0].outcome else "polite"
        met = truth(criterion, number) != (number in WRONG[model].get(criterion, set()))
        return {"rationale": "scripted", "evidence": [], "verdict": "met" if met else "unmet"}


def write_project(root: Path, labelled: range = range(TICKETS)) -> Path:
    (root / "r.yaml").write_text(RUBRIC)
    lines = [json.dumps({"id": f"s{i:02d}", "output": f"ticket {i:02d}: we looked into your bill"})
             for i in range(TICKETS + UNLABELLED)]
    (root / "s.jsonl").write_text("\n".join(lines) + "\n")
    labels = "".join(
        f"s{i:02d}: {{verdict: {'pass' if truth('resolves', i) and truth('polite', i) else 'fail'}, criteria: "
        f"{{resolves: {'met' if truth('resolves', i) else 'unmet'}, polite: {'met' if truth('polite', i) else 'unmet'}}}}}\n"
        for i in labelled
    )
    (root / "r.labels.yaml").write_text(labels)
    config = Path(os.environ["RUBRIC_STUDIO_HOME"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "prices.yaml").write_text("".join(f"'{m}': {{input: {i}, output: {o}}}\n" for m, (i, o) in PRICES.items()))
    return root


@pytest.fixture
def server(monkeypatch):
    script = Script()
    with FakeLLM() as fake:
        fake.always(script)
        fake.script = script
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def switch(project: Path, capsys, *extra: str) -> tuple[int, dict]:
    """``calibrate --format json`` with ``extra``: its exit code and JSON (stderr kept in ``switch.err``)."""
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", *extra])
    captured = capsys.readouterr()
    switch.err = captured.err
    return code, json.loads(captured.out)


def test_a_candidate_that_agrees_better_is_a_switch(project, server, capsys):
    code, data = switch(project, capsys, "--switch-to", BETTER)
    assert code == 0
    s = data["switch"]
    assert s["verdict"] == "switch" and s["headline"] == "switch: as good or better"
    assert s["current"]["judge"] == CUR and s["candidate"]["judge"] == BETTER
    overall = s["overall"]
    assert overall["n"] == TICKETS and (overall["better"], overall["worse"]) == (4, 0)
    assert overall["before"]["accuracy"] == 0.9 and overall["after"]["accuracy"] == 1.0
    assert overall["after"]["kappa"] == 1.0 and overall["before"]["kappa"] < 1.0
    assert overall["before"]["kappa_ci"] and overall["after"]["kappa_ci"]
    assert overall["p_worse"] == 1.0 and overall["p_better"] == pytest.approx(1 / 16)
    assert overall["drop"] == -0.1 and overall["drop_ci"][1] < 0.05  # a rise, its bound within the margin
    assert s["criteria"]["resolves"]["better"] == 4 and s["criteria"]["polite"]["better"] == 0
    assert s["test"]["comparisons"] == 4 and s["test"]["threshold"] == 0.0125 and s["margin"] == 0.05
    # the current judge graded every sample, the candidate the labelled ones: 40 each, every one labelled
    assert s["candidate"]["samples"] == TICKETS and s["candidate"]["judge_calls"] == 2 * TICKETS
    assert s["candidate"]["cost_per_100"] < s["current"]["cost_per_100"]
    assert s["current"]["latency_per_100_s"] is not None
    # judge-cur passes 10 of its 50 samples (s00, s02 failed, s01, s03 passed), judge-better 10 of the 40 labelled
    rate = s["overall"]["pass_rate"]
    assert rate["before"]["raw"] == 0.2 and rate["after"]["raw"] == 0.25
    assert rate["before"]["corrected"]["n_unlabelled"] == UNLABELLED and rate["after"]["corrected"]["n_unlabelled"] == 0
    assert any("graded only the 40 labelled samples" in w for w in data["warnings"])
    assert data["overall"]["n"] == TICKETS  # calibrate's object, for the current judge


def test_a_candidate_worse_on_one_criterion_is_do_not_switch_naming_it(project, server, capsys):
    code, data = switch(project, capsys, "--switch-to", WORSE)
    assert code == 1
    s = data["switch"]
    assert s["verdict"] == "do not switch" and s["headline"] == "do not switch: worse on polite"
    assert s["worse_on"] == ["polite"]
    polite = s["criteria"]["polite"]
    assert (polite["worse"], polite["better"], polite["n"]) == (10, 0, TICKETS)
    assert polite["worse_significant"] is True
    assert "Bonferroni over 4 comparisons" in s["reason"] and "0.05/4 = 0.0125" in s["reason"]


def test_the_exact_test_p_values_match_hand_arithmetic(project, server, capsys):
    _, data = switch(project, capsys, "--switch-to", WORSE)
    s = data["switch"]
    assert s["criteria"]["polite"]["p_worse"] == round(1 / 1024, 6)  # P(X >= 10 | 10)
    assert s["criteria"]["polite"]["p_two_sided"] == round(2 / 1024, 6)
    assert (s["overall"]["worse"], s["overall"]["better"]) == (5, 4)
    assert s["overall"]["p_worse"] == 0.5  # (126 + 84 + 36 + 9 + 1) / 512
    assert s["overall"]["p_better"] == round(382 / 512, 6)  # P(X >= 4 | 9) = 1 - (1 + 9 + 36 + 84) / 512
    pooled = s["all_criteria"]
    assert (pooled["worse"], pooled["better"], pooled["n"]) == (10, 4, 2 * TICKETS)
    assert pooled["p_worse"] == round(1471 / 16384, 6)
    assert pooled["worse_significant"] is False  # 0.0898 > 0.0125: not named
    assert s["criteria"]["resolves"]["p_worse"] == 1.0 and s["criteria"]["resolves"]["better"] == 4


def test_few_labels_cant_tell_and_say_n_and_the_margin(tmp_path, server, capsys):
    """Six labelled tickets (s04–s09), where the candidate agrees exactly as the current judge does:
    no cell changed, yet 6 of 6 cannot rule out a drop — Wilson's lower bound of 6/6 is
    6/(6 + 1.96²) = 0.610, so the drop could be 39 points; 12 of 12 cells: 12/(12 + 1.96²) → 24.2."""
    project = write_project(tmp_path, labelled=range(4, 10))
    code, data = switch(project, capsys, "--switch-to", SAME)
    assert code == 1
    s = data["switch"]
    assert s["verdict"] == "cant_tell"
    assert s["headline"] == "can't tell with n = 6 sample verdicts, 12 criterion cells"
    assert (s["overall"]["better"], s["overall"]["worse"]) == (0, 0)
    assert s["overall"]["drop_ci"][1] == pytest.approx(0.3903, abs=1e-4)
    assert s["all_criteria"]["drop_ci"][1] == pytest.approx(0.2425, abs=1e-4)
    assert "up to 39 points less often" in s["reason"] and "up to 24.2 points less often" in s["reason"]
    assert "more than the 5-point margin" in s["reason"] and "--switch-margin, now 5 points" in s["reason"]


def test_a_candidate_that_errors_is_not_worse_its_errors_are_left_out_and_counted(project, server, capsys):
    code, data = switch(project, capsys, "--switch-to", FLAKY)
    assert code == 3  # cells errored
    s = data["switch"]
    assert s["verdict"] == "cant_tell" and s["worse_on"] == []
    overall = s["overall"]
    assert overall["excluded"] == {"current_errors": 0, "candidate_errors": 2, "other": 0}
    assert overall["n"] == TICKETS - 2 and overall["worse"] == 0  # s05 and s06 are left out, not worse
    for criterion in ("resolves", "polite"):
        assert s["criteria"][criterion]["excluded"]["candidate_errors"] == 2
        assert s["criteria"][criterion]["worse"] == 0
    assert s["headline"] == f"can't tell with n = {3 * (TICKETS - 2)}: {FLAKY} errored on 6 labelled items"
    assert "never counted as worse" in s["reason"] and "partial data" in s["reason"]
    assert any(f"{FLAKY}: 4 cells ended in error" in w for w in data["warnings"])


def test_the_table_says_the_verdict_and_the_test(project, server, capsys):
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--switch-to", WORSE])
    out = capsys.readouterr().out
    assert code == 1
    assert "verdict: do not switch: worse on polite" in out
    assert "polite ✗" in out and "0.000977" in out
    assert "Bonferroni over 4 comparisons" in out and "margin 5 points" in out
    assert f"{CUR}: $" in out and "per 100 samples" in out
    assert "pass rate before → after" in out


def test_every_verdict_is_documented_by_the_calibrate_schema(project, server, capsys):
    """The real JSON of each verdict (the switch applied last) validates against the published
    schema, whose ``switch`` is closed: a verdict or a key it does not document fails."""
    schema = json.loads((Path(__file__).parent.parent / "docs/reference/schemas/calibrate.schema.json").read_text())
    assert schema["properties"]["switch"] == {"$ref": "#/$defs/switch"}
    for candidate, verdict, extra in ((WORSE, "do not switch", ()), (FLAKY, "cant_tell", ()),
                                      (BETTER, "switch", ("--apply",))):
        _, data = switch(project, capsys, "--switch-to", candidate, *extra)
        assert data["switch"]["verdict"] == verdict
        jsonschema.validate(data, schema)
        for wrong in ({**data["switch"], "verdict": "maybe"}, {**data["switch"], "undocumented": 1},
                      {**data["switch"], "overall": {**data["switch"]["overall"], "undocumented": 1}}):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({**data, "switch": wrong}, schema)
    assert data["switch"]["applied"] == [f"judge {CUR} → {BETTER}"] and data["switch"]["card"] is None


# -- --apply ---------------------------------------------------------------------
def test_apply_writes_only_the_judge_keeps_comments_and_refreshes_the_card(project, server, capsys):
    assert main(["card", str(project / "r.yaml"), str(project / "s.jsonl")]) == 0
    card = project / "r.card.yaml"
    assert CUR in card.read_text()
    capsys.readouterr()
    code, data = switch(project, capsys, "--switch-to", BETTER, "--apply")
    err = switch.err
    assert code == 0
    # one value changed, every comment kept (the longer name pushes its comment one space on)
    assert (project / "r.yaml").read_text() == RUBRIC.replace(f"{CUR}   #", f"{BETTER} #")
    assert data["switch"]["applied"] == [f"judge {CUR} → {BETTER}"]
    assert f"applied to {project / 'r.yaml'}: judge {CUR} → {BETTER}" in err
    # the card is rewritten from the candidate's run, on every sample given (as `card` grades)
    assert data["switch"]["candidate"]["samples"] == TICKETS + UNLABELLED
    assert data["switch"]["overall"]["pass_rate"]["after"]["corrected"]["n_unlabelled"] == UNLABELLED
    assert data["switch"]["card"] == str(card)
    assert BETTER in card.read_text() and CUR not in card.read_text()
    main(["validate", str(project / "r.yaml")])
    assert "stale" not in capsys.readouterr().err  # the card names the judge the rubric now names
    # the refreshed card rests on the samples and labels given, as `card` records them
    rests = yaml.safe_load(card.read_text())["rests_on"]
    assert rests["samples"]["n"] == TICKETS + UNLABELLED and rests["samples"]["path"] == "s.jsonl"
    assert rests["labels"]["n"] == TICKETS and rests["labels"]["path"] == "r.labels.yaml"
    samples = project / "s.jsonl"
    samples.write_text(samples.read_text().replace("ticket 07: we looked", "ticket 07: we have looked"))
    main(["validate", str(project / "r.yaml")])
    assert "card is stale: samples changed since the card: 50 samples, some of them edited" in capsys.readouterr().err


def test_apply_on_any_other_verdict_writes_nothing(project, server, capsys):
    assert main(["card", str(project / "r.yaml"), str(project / "s.jsonl")]) == 0
    card_before = (project / "r.card.yaml").read_bytes()
    capsys.readouterr()
    code, data = switch(project, capsys, "--switch-to", WORSE, "--apply")
    err = switch.err
    assert code == 1
    assert data["switch"]["verdict"] == "do not switch" and "applied" not in data["switch"]
    assert "not applied: do not switch: worse on polite" in err
    assert (project / "r.yaml").read_text() == RUBRIC
    assert (project / "r.card.yaml").read_bytes() == card_before


def test_a_panel_candidate_is_written_as_a_panel_in_place_of_the_model(project, server, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url_anthropic)
    panel = f"{BETTER}+anthropic:judge-better"
    code, data = switch(project, capsys, "--switch-to", panel, "--apply")
    assert code == 0 and data["switch"]["candidate"]["judge"] == panel
    assert server.calls("anthropic") == 2 * TICKETS  # the panel's second member graded the labelled cells
    written = (project / "r.yaml").read_text()
    assert written == RUBRIC.replace(f"model: {CUR}   # the judge we use now",
                                     f"panel: [{BETTER}, anthropic:judge-better] # the judge we use now")


def test_the_switch_is_not_written_over_a_rubric_that_changed_since_it_was_graded(project):
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.engine.judge_switch import apply_switch

    graded = load_rubric(project / "r.yaml").content_hash()
    edited = RUBRIC.replace("pass_threshold: 0.75", "pass_threshold: 0.5")
    (project / "r.yaml").write_text(edited)
    with pytest.raises(ValueError, match="changed since it was graded"):
        apply_switch(project / "r.yaml", BETTER, graded)
    assert (project / "r.yaml").read_text() == edited


def test_a_rubric_without_a_judge_block_gets_one(tmp_path):
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.engine.judge_switch import apply_switch

    path = tmp_path / "r.yaml"
    path.write_text("name: bare  # no judge yet\ncriteria:\n  - outcome: Polite\n")
    assert apply_switch(path, BETTER, load_rubric(path).content_hash()) == [f"judge (none: the default) → {BETTER}"]
    assert path.read_text() == f"name: bare  # no judge yet\njudge:\n  model: {BETTER}\ncriteria:\n  - outcome: Polite\n"


# -- endpoints and flags --------------------------------------------------------
def test_the_candidate_is_graded_at_its_own_judge_base_url(project, server, capsys):
    candidate = "openai-compatible:judge-better"
    with FakeLLM() as other:
        other.always(Script())
        code, data = switch(project, capsys, "--switch-to", candidate,
                            "--judge-base-url", f"{candidate}={other.base_url_openai}")
        assert other.calls() == 2 * TICKETS  # every candidate call went to its own endpoint
    assert code == 0 and data["switch"]["candidate"]["judge"] == candidate
    assert {call.body["model"] for call in server.requests} == {"judge-cur"}


@pytest.mark.parametrize(("extra", "says"), [
    (["--switch-to", BETTER, "--judges", f"{BETTER},{WORSE}"], "--switch-to and --judges"),
    (["--switch-to", BETTER, "--fit"], "--switch-to and --fit"),
    (["--switch-to", BETTER, "--min-kappa", "0.5"], "--switch-to and --min-kappa"),
    (["--switch-to", "gpt-6-luna"], "--switch-to: 'gpt-6-luna' is not provider:model"),
    (["--switch-to", f"{BETTER},{WORSE}"], "--switch-to takes one candidate"),
    (["--switch-to", BETTER, "--switch-margin", "0"], "--switch-margin is a share"),
    (["--switch-to", BETTER, "--judge-base-url", f"{WORSE}=http://127.0.0.1:9/v1"], "not one of the judges of --switch-to"),
    (["--switch-to", CUR], f"--switch-to {CUR} is the judge already in use"),
    (["--switch-to", BETTER, "--labels", "empty.yaml"], "none of these samples is labelled"),
    (["--switch-to", "anthropic:judge-better"], "--switch-to cannot grade: anthropic:judge-better: ANTHROPIC_API_KEY is not set"),
])
def test_bad_flags_exit_2_before_any_call(project, server, capsys, extra, says):
    (project / "empty.yaml").write_text("")
    extra = [str(project / part) if part == "empty.yaml" else part for part in extra]
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert server.calls() == 0


# -- the arithmetic -------------------------------------------------------------
def test_the_binomial_tail_is_exact():
    from rubric_studio.engine.judge_switch import binomial_tail

    assert binomial_tail(10, 10) == 1 / 1024
    assert binomial_tail(5, 9) == 0.5 and binomial_tail(0, 0) == 1.0 and binomial_tail(3, 2) == 0.0
    assert binomial_tail(10, 14) == 1471 / 16384  # (C(14,10) + C(14,11) + C(14,12) + C(14,13) + 1) / 2^14


def test_the_drop_interval_is_tangos_score_interval():
    """Fagerland, Lydersen & Laake (2013)'s worked example (1, 1, 7, 12 pairs) gives −0.517 to −0.026; with
    no cell changed the upper bound is z²/(n + z²), Wilson's bound for 0 of n."""
    from rubric_studio.core.intervals import Z95
    from rubric_studio.engine.judge_switch import paired_difference_interval

    lo, hi = paired_difference_interval(1, 1, 7, 12)
    assert (round(lo, 3), round(hi, 3)) == (-0.517, -0.026)
    for n in (6, 13, 80):
        assert paired_difference_interval(n, 0, 0, 0)[1] == pytest.approx(Z95**2 / (n + Z95**2), abs=1e-9)
    assert paired_difference_interval(0, 0, 0, 0) is None
