"""``calibrate --judges`` and ``--min-kappa`` against the fake LLM server.

Each fake model answers the one checklist criterion from a script: it agrees with the
human label except on the samples listed for it, so every kappa below is known by hand.
Twenty labelled samples, s00–s09 labelled pass and s10–s19 fail (a verdict is pass iff
the criterion is met); s20 has only a note and must never be sent to a judge.

Each kappa interval is Wilson's interval of p_o = agreeing/20 mapped through
κ = (p_o − p_e)/(1 − p_e) (every judge below has p_e = .5):

    good  agrees everywhere                      p_o 1.00 → kappa 1.0, CI [.6777, 1]
    mid   s00 unmet, s10 met            (2 off)  p_o .90 → kappa .8,  CI [.3979, .9443]
    poor  s00 s01 unmet, s10 s11 s12 met (5 off) p_o .75, p_e (11·10 + 9·10)/400 = .5 → kappa .5,
                                                 CI [.0626, .7763]: above chance, overlaps good's
    weak  s00 s01 s02 unmet, s10 s11 s12 met     p_o .70 → kappa .4,  CI [−.0379, .7090]: reaches 0
    coin  s00–s04 unmet, s10–s14 met (10 off)    p_o .50 → kappa 0,   CI [−.4014, .4014]

With twenty labels good, mid and poor cannot be told apart (their intervals overlap): poor,
the cheapest, is the default; weak and coin are never recommended (not above chance).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests.fakellm import Call, FakeLLM, server_error

HUMAN_PASS = set(range(10))
LABELLED = 20
WRONG = {"judge-good": set(), "judge-mid": {0, 10}, "judge-poor": {0, 1, 10, 11, 12}, "judge-flaky": set(),
         "judge-unpriced": set(), "judge-weak": {0, 1, 2, 10, 11, 12}, "judge-coin": {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}}  # fmt: skip
PRICES = {  # USD per 1M tokens (input, output)
    "openai:judge-good": (10.0, 30.0),
    "anthropic:judge-mid": (1.0, 3.0),
    "openai:judge-poor": (0.1, 0.3),
    "openai:judge-broken": (0.01, 0.01),
    "openai:judge-flaky": (0.01, 0.01),
    "openai:judge-weak": (0.05, 0.1),
    "openai:judge-coin": (0.02, 0.05),
}
GOOD, MID, POOR = "openai:judge-good", "anthropic:judge-mid", "openai:judge-poor"
WEAK, COIN = "openai:judge-weak", "openai:judge-coin"


class Script:
    """Answers by model name and sample number; records each answer's token counts as the server bills them."""

    def __init__(self, flips: dict[str, set[int]] | None = None):
        self.flips = flips or {}
        self.seen: Counter[tuple[str, int]] = Counter()
        self.billed: Counter[str] = Counter()  # model -> USD at PRICES
        self.lock = threading.Lock()

    def __call__(self, call: Call):
        model = call.body["model"]
        number = int(re.search(r"ticket (\d+)", call.sample).group(1))
        if model == "judge-broken" or (model == "judge-flaky" and number in (3, 15)):
            return server_error(500)
        with self.lock:
            self.seen[(model, number)] += 1
            second = self.seen[(model, number)] == 2
        met = (number in HUMAN_PASS) != (number in WRONG[model])
        if second and number in self.flips.get(model, set()):
            met = not met
        payload = {"rationale": "scripted", "evidence": [], "verdict": "met" if met else "unmet"}
        self._bill(call, model, payload)
        return payload

    def _bill(self, call: Call, model: str, payload: dict) -> None:
        """The fake server's token counts (see FakeLLM._usage), priced at PRICES."""
        tokens_in = max(1, len(json.dumps(call.body)) // 4)
        tokens_out = max(1, len(json.dumps(payload)) // 4)
        price = next((p for k, p in PRICES.items() if k.endswith(":" + model)), None)
        if price is not None:
            with self.lock:
                self.billed[model] += (tokens_in * price[0] + tokens_out * price[1]) / 1e6


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def write_project(tmp_path: Path) -> Path:
    """The rubric, 21 samples, labels and the price table the judge comparisons run on."""
    (tmp_path / "r.yaml").write_text(
        "name: pick-a-judge\njudge:\n  max_retries: 0\ncriteria:\n"
        "  - id: resolves\n    outcome: Resolves the customer's billing issue\n"
    )
    lines = [json.dumps({"id": f"s{i:02d}", "output": f"ticket {i:02d}: we looked into your bill"}) for i in range(21)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    labels = "".join(f"s{i:02d}: {{verdict: {'pass' if i in HUMAN_PASS else 'fail'}}}\n" for i in range(LABELLED))
    (tmp_path / "r.labels.yaml").write_text(labels + "s20: {note: not sure yet}\n")  # a note is no label to compare
    prices = "".join(f"'{model}': {{input: {i}, output: {o}}}\n" for model, (i, o) in PRICES.items())
    config = Path(os.environ["RUBRIC_STUDIO_HOME"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "prices.yaml").write_text(prices)
    return tmp_path


@pytest.fixture
def server(monkeypatch):
    script = Script()
    with FakeLLM() as fake:
        fake.always(script)
        fake.script = script
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url_anthropic)
        yield fake


def calibrate(project: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


def by_judge(data: dict) -> dict[str, dict]:
    return {entry["judge"]: entry for entry in data["judges"]}


def test_three_judges_above_chance_that_overlap_are_indistinguishable_and_the_cheapest_is_the_default(
    project, server, capsys
):
    code, data = calibrate(project, capsys, "--judges", f"{GOOD},{MID},{POOR}")
    assert code == 0
    judges = by_judge(data)
    assert list(judges) == [GOOD, MID, POOR]
    assert judges[GOOD]["kappa"] == 1.0 and judges[GOOD]["kappa_ci"] == [0.6777, 1.0]  # a width at perfect agreement
    assert judges[MID]["kappa"] == pytest.approx(0.8) and judges[MID]["kappa_ci"] == pytest.approx([0.3979, 0.9443], abs=1e-4)
    assert judges[POOR]["kappa"] == pytest.approx(0.5)
    assert judges[POOR]["kappa_ci"] == pytest.approx([0.0626, 0.7763], abs=1e-4)
    assert judges[MID]["accuracy"] == pytest.approx(0.9) and judges[POOR]["accuracy"] == pytest.approx(0.75)
    assert judges[POOR]["false_pass_rate"] == pytest.approx(0.3) and judges[POOR]["false_fail_rate"] == pytest.approx(0.2)
    # all three lie above chance and overlap the best (good's): indistinguishable; poor is the cheapest
    assert data["recommended"] == POOR
    assert data["recommendation_basis"] == "cheapest_indistinguishable"
    assert data["indistinguishable"] == [GOOD, MID, POOR]
    assert data["recommendation"].startswith(f"{GOOD}, {MID}, {POOR} are indistinguishable on these labels")
    assert f"the default is {POOR}, the cheapest of them" in data["recommendation"]
    for name, entry in judges.items():
        assert entry["n"] == LABELLED and entry["errors"] == 0 and entry["flip_rate"] is None
        assert entry["judge_calls"] == LABELLED and entry["cache_hits"] == 0  # s20 (unlabelled) never sent
        model = name.split(":")[1]
        assert entry["cost_per_100"] == pytest.approx(server.script.billed[model] / LABELLED * 100, abs=2e-6)
        assert entry["latency_per_100_s"] == pytest.approx(entry["wall_seconds"] / LABELLED * 100, abs=0.005)  # both rounded
        assert entry["latency_per_100_s"] > 0
    assert judges[POOR]["cost_per_100"] < judges[MID]["cost_per_100"] < judges[GOOD]["cost_per_100"]
    assert server.calls() == 3 * LABELLED
    assert not any("not in this set" in w for w in data["warnings"])
    # the calibrate object describes the first judge
    assert data["overall_judge"] == GOOD and data["overall"]["kappa"] == 1.0 and data["disagreements"] == []


def test_a_cheaper_judge_whose_interval_reaches_zero_is_never_recommended(project, server, capsys):
    code, data = calibrate(project, capsys, "--judges", f"{WEAK},{GOOD}")
    assert code == 0
    assert by_judge(data)[WEAK]["kappa"] == pytest.approx(0.4)
    assert by_judge(data)[WEAK]["kappa_ci"] == pytest.approx([-0.0379, 0.709], abs=1e-4)  # overlaps good's, reaches 0
    assert data["recommended"] == GOOD and data["recommendation_basis"] == "only_above_chance"
    assert data["indistinguishable"] == []
    assert data["recommendation"].startswith(f"{GOOD}'s kappa 1.00 [0.68, 1.00] lies above chance")
    assert f"not above chance (interval reaches 0): {WEAK} (kappa 0.40 [-0.04, 0.71])" in data["recommendation"]
    assert data["overall_judge"] == WEAK and data["overall"]["kappa"] == pytest.approx(0.4)
    assert {d["id"] for d in data["disagreements"]} == {"s00", "s01", "s02", "s10", "s11", "s12"}


def test_when_no_interval_lies_above_chance_nothing_is_recommended(project, server, capsys):
    code, data = calibrate(project, capsys, "--judges", f"{WEAK},{COIN}", "--min-kappa", "0")
    assert code == 1  # no recommendation fails the gate
    assert by_judge(data)[COIN]["kappa"] == 0.0 and by_judge(data)[COIN]["kappa_ci"] == [-0.4014, 0.4014]
    assert data["recommended"] is None and data["recommendation_basis"] == "none_above_chance"
    assert data["recommendation"].startswith("no judge agrees with these labels beyond chance")
    assert WEAK in data["recommendation"] and COIN in data["recommendation"]
    main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judges", f"{WEAK},{COIN}"])
    out = capsys.readouterr().out
    assert "recommended: none" in out and "beyond chance" in out


def test_a_second_run_makes_no_calls_and_recommends_the_same(project, server, capsys):
    _, first = calibrate(project, capsys, "--judges", f"{GOOD},{MID},{POOR}")
    sent = server.calls()
    code, second = calibrate(project, capsys, "--judges", f"{GOOD},{MID},{POOR}")
    assert code == 0
    assert server.calls() == sent == 3 * LABELLED
    assert second["recommended"] == first["recommended"] == POOR
    for name, entry in by_judge(second).items():
        assert entry["judge_calls"] == 0 and entry["cache_hits"] == LABELLED
        assert entry["cost_usd"] == 0  # nothing bought this time ...
        # ... but the judge costs the same (one sum of floats against another: equal to rounding)
        assert entry["cost_per_100"] == pytest.approx(by_judge(first)[name]["cost_per_100"], abs=1.5e-6)


def test_min_kappa_gates_on_the_recommended_judge(project, server, capsys):
    judges = f"{GOOD},{MID}"  # indistinguishable: mid is the cheaper
    code, data = calibrate(project, capsys, "--judges", judges, "--min-kappa", "0.85")
    assert code == 1
    assert data["gate"] == {"min_kappa": 0.85, "judge": MID, "kappa": pytest.approx(0.8), "passed": False,
                            "reason": data["gate"]["reason"]}  # fmt: skip
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judges", judges,
                 "--min-kappa", "0.75"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert f"gate passed: kappa of judge {MID} 0.8 is at least --min-kappa 0.75" in captured.err
    assert "recommended: anthropic:judge-mid" in captured.out and "wall s/100" in captured.out


def test_min_kappa_with_one_judge_gates_on_overall_kappa(project, server, capsys):
    code, data = calibrate(project, capsys, "--judge", MID, "--min-kappa", "0.81")
    assert code == 1 and data["gate"]["passed"] is False and data["overall"]["kappa"] == pytest.approx(0.8)
    code, data = calibrate(project, capsys, "--judge", MID, "--min-kappa", "0.8")
    assert code == 0 and data["gate"]["passed"] is True
    assert "judges" not in data  # plain calibrate keeps its shape


@pytest.mark.parametrize("labels", ["", "s00: {verdict: pass}\ns01: {verdict: pass}\n"], ids=["no-labels", "one-class"])
def test_min_kappa_fails_when_kappa_is_undefined(project, server, capsys, labels):
    (project / "r.labels.yaml").write_text(labels)
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", GOOD, "--min-kappa", "0"])
    assert code == 1
    assert "gate failed: kappa is undefined" in capsys.readouterr().err
    # mid misjudges s00: with all-pass labels its kappa is 0 by the formula, which measures nothing
    code = main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", MID, "--min-kappa", "-1"])
    assert code == 1 and "gate failed" in capsys.readouterr().err
    code, data = calibrate(project, capsys, "--judges", f"{GOOD},{MID}", "--min-kappa", "0")
    assert code == 1 and data["recommended"] is None
    assert data["gate"]["passed"] is False and "no judge recommended" in data["gate"]["reason"]


def test_a_judge_that_errors_is_reported_and_never_recommended(project, server, capsys):
    judges = f"openai:judge-broken,openai:judge-flaky,{MID}"
    code, data = calibrate(project, capsys, "--judges", judges, "--min-kappa", "0")
    assert code == 3  # errored cells win over the gate
    entries = by_judge(data)
    assert entries["openai:judge-broken"]["errors"] == LABELLED and entries["openai:judge-broken"]["kappa"] is None
    # flaky agrees perfectly on the 18 samples it judged and is the cheapest: still not on partial data
    flaky = entries["openai:judge-flaky"]
    assert flaky["errors"] == 2 and flaky["n"] == LABELLED - 2 and flaky["kappa"] == 1.0
    assert data["recommended"] == MID
    assert "judge-broken: 20 errored cells" in data["recommendation"]
    assert "judge-flaky: 2 errored cells" in data["recommendation"]
    assert any("openai:judge-broken: 20 cells ended in error" in w for w in data["warnings"])


def test_a_judge_without_a_key_is_named_and_not_recommended(project, server, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    code, data = calibrate(project, capsys, "--judges", f"{MID},{POOR}")
    assert code == 0
    mid = by_judge(data)[MID]
    assert "ANTHROPIC_API_KEY is not set" in mid["note"] and mid["n"] == 0 and mid["cost_per_100"] is None
    assert data["recommended"] == POOR and f"{MID}: not judged" in data["recommendation"]
    assert server.calls("anthropic") == 0


def test_unknown_price_is_unknown_not_zero(project, server, capsys):
    code, data = calibrate(project, capsys, "--judges", f"openai:judge-unpriced,{MID}")
    assert code == 0
    unpriced = by_judge(data)["openai:judge-unpriced"]
    assert unpriced["cost_per_100"] is None and unpriced["cost_usd"] is None and unpriced["judge_calls"] == LABELLED
    assert data["recommended"] == MID  # an unknown cost is never taken for the cheaper one
    assert "price unknown, not compared: openai:judge-unpriced" in data["recommendation"]
    main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judges", f"openai:judge-unpriced,{MID}"])
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("openai:judge-unpriced"))
    assert "unknown" in row and "$0.0000" not in row


def test_repeat_reports_each_judges_flip_rate(project, monkeypatch, capsys):
    script = Script(flips={"judge-good": {4, 5, 14, 15}})
    with FakeLLM() as fake:
        fake.always(script)
        for name, value in (("OPENAI_API_KEY", "test"), ("ANTHROPIC_API_KEY", "test"),
                            ("OPENAI_BASE_URL", fake.base_url_openai), ("ANTHROPIC_BASE_URL", fake.base_url_anthropic)):
            monkeypatch.setenv(name, value)  # fmt: skip
        code, data = calibrate(project, capsys, "--judges", f"{GOOD},{MID}", "--repeat", "3")
        assert fake.calls() == 2 * 3 * LABELLED
    assert code == 0
    judges = by_judge(data)
    assert judges[GOOD]["flip_rate"] == pytest.approx(4 / LABELLED)  # one vote of three flipped on 4 cells
    assert judges[GOOD]["kappa"] == 1.0  # the majority still agrees with the labels
    assert judges[MID]["flip_rate"] == 0.0
    assert data["consistency"]["criteria"]["resolves"]["flipping_samples"] == ["s04", "s05", "s14", "s15"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judges", f"{GOOD},{MID}", "--judge", GOOD], "--judges and --judge"),
        (["--judges", "gpt-4o"], "'gpt-4o' is not provider:model"),
        (["--judges", f"{GOOD},{GOOD}"], "listed twice"),
        (["--judges", f"{GOOD},{MID}", "--fit"], "--fit fits one judge"),
        (["--min-kappa", "1.5"], "--min-kappa must be a kappa between -1 and 1"),
    ],
)
def test_bad_flags_exit_2_before_any_call(project, server, capsys, args, message):
    assert main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), *args]) == 2
    assert message in capsys.readouterr().err
    assert server.calls() == 0


def test_judge_names_are_text_in_the_table_never_emoji_codes(project, capsys, monkeypatch):
    """rich turns ``:a:`` into an emoji unless told not to; a judge called openai:a must read as written."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    main(["calibrate", str(project / "r.yaml"), str(project / "s.jsonl"), "--judges", "openai:a,anthropic:b"])
    out = capsys.readouterr().out
    assert "openai:a" in out and "anthropic:b" in out and "🅰" not in out and "🅱" not in out
