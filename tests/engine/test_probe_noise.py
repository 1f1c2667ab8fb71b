"""Probes against the judge's own noise, through the real openai SDK and the fake LLM server.

Every probe run also judges a null perturbation (the output with a blank line added: same
meaning, other bytes) and each kind is reported against it with a paired interval. Scripted
judges whose behaviour is known by construction:

    noisy   the right verdict (the outcome's subject is in the output), turned over for ~30% of
            requests: a hash of the request body decides, so any change of the bytes is a new draw
            and the same request always gets the same answer → no kind beyond noise
    long    met for any long request (a submission of 40 words or more): only ``verbosity``
            (about 70 words of padding) reaches that → found by verbosity alone
    clean   the right verdict, whatever the wording → nothing flips, no finding
    one     clean, except that s03 is met only in its exact original request: it flips under
            every kind (not under the null, which keeps its text) → listed once as unstable

The fence secret is fixed, so the request bytes (and the noisy judge's draws) are the same on
every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.results import CriterionResult, Status
from rubric_studio.engine.probes import (
    CriterionProbe,
    noise_verdict,
    null_text,
    paired_difference,
    wilson_interval,
)
from tests.fakellm import Call, FakeLLM, parse_call

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = 40
ALL_KINDS = "verbosity,order,confidence,hedging,paraphrase"
SECRET = "probe-noise-tests-fixed-fence-secret-0123456789"
OUTCOMES = {"refund": "Mentions the refund", "bill": "Explains the bill clearly"}


def _right(outcome: str, sample: str) -> bool:
    subject = "refund" if "refund" in outcome.lower() else "bill"
    return subject in sample.lower()


def _draw(call: Call, criterion: str) -> float:
    """A number in [0, 1) fixed by the exact request body and the criterion asked about."""
    body = json.dumps(call.body, sort_keys=True) + "\x1f" + criterion
    return int(hashlib.sha256(body.encode()).hexdigest()[:8], 16) / 0x1_0000_0000


def _met(model: str, call: Call, index: int, criterion: str, outcome: str) -> bool:
    if model == "judge-long":
        return len(call.sample.split()) >= 40
    right = _right(outcome, call.sample)
    if model == "judge-noisy":
        return right != (_draw(call, criterion) < 0.3)
    if model == "judge-one" and "ticket 03" in call.sample:
        # met only in its exact original request: the original text, the rubric's wording and order
        original = call.sample.strip() == _output(3) and outcome in OUTCOMES.values()
        return right and original and (not call.batch or index == list(OUTCOMES).index(criterion))
    return right


def brain(call: Call) -> dict:
    model = call.body["model"]

    def one(index: int, criterion: str, outcome: str) -> dict:
        met = _met(model, call, index, criterion, outcome)
        return {"rationale": model, "evidence": [], "verdict": "met" if met else "unmet"}

    if not call.batch:
        outcome = call.criteria[0].outcome  # one criterion per call: its id is not sent, its subject is
        return one(0, "refund" if "refund" in outcome.lower() else "bill", outcome)
    return {item.id: one(i, item.id, item.outcome) for i, item in enumerate(call.criteria)}


def _output(i: int) -> str:
    return f"ticket {i:02d}: " + ("your refund is on its way to you" if i % 2 else "we looked into your bill for you")


@pytest.fixture
def server(monkeypatch):
    with FakeLLM(brain=brain) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("RUBRIC_STUDIO_SECRET", SECRET)
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_files(tmp_path)


def project_files(tmp_path: Path) -> Path:
    """The rubric (two judge criteria) and 40 unlabelled samples, alternately about a refund and a bill."""
    (tmp_path / "r.yaml").write_text(
        "name: noise\njudge:\n  max_retries: 0\ncriteria:\n"
        + "".join(f"  - id: {cid}\n    outcome: {outcome}\n" for cid, outcome in OUTCOMES.items())
    )
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"id": f"s{i:02d}", "output": _output(i)}) + "\n"
                                              for i in range(SAMPLES)))  # fmt: skip
    return tmp_path


def probe(project: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out)


def entries(data: dict):
    for kind, entry in data["kinds"].items():
        for cid, c in entry["criteria"].items():
            yield kind, cid, c


def test_a_judge_that_flips_on_any_byte_change_has_no_finding_on_any_kind(project, server, capsys):
    code, data = probe(project, capsys, "--kinds", ALL_KINDS, "--judge", "openai:judge-noisy", "--batch")
    assert code == 0 and data["samples"] == {"source": "graded", "n": SAMPLES}
    for cid, noise in data["noise"].items():  # 2 × 0.3 × 0.7 = 42% expected; the null is a new request
        assert noise["n"] == SAMPLES and 0.2 <= noise["rate"] <= 0.65, (cid, noise)
    kinds = list(entries(data))
    assert len(kinds) == 10  # five kinds × two criteria, order included (batch mode)
    # without the baseline these would read as bias: every kind flips a quarter of the cells or more
    assert all(c["rate"] >= 0.25 for _, _, c in kinds)
    assert [(k, cid) for k, cid, c in kinds if c["beyond_noise"]] == [] and data["findings"] == []
    assert all(entry["beyond_noise"] is not True for entry in data["kinds"].values())
    base = {"verbosity": "were_unmet", "confidence": "were_unmet", "hedging": "were_met"}  # the cells that could move its way
    for kind, _, c in kinds:
        assert c["difference"]["ci"][0] <= 0 <= c["difference"]["ci"][1]
        assert c["difference"]["n"] == (c[base[kind]] if kind in base else SAMPLES)
    main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--kinds", ALL_KINDS,
          "--judge", "openai:judge-noisy", "--batch"])  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())  # the table wraps long lines
    assert "order: not beyond this judge's noise: 35 of 80 cells flipped, 29 of 80 under the noise" in out
    # 40 cells and 40% noise: a shift below 25 points could not show, and the report says so
    assert "verbosity: can't tell with 40 cells: a shift below 25 points would not show" in out
    assert "can't tell: verbosity, confidence, hedging (above) — not the same as no bias" in out
    assert "no finding" not in out


def test_a_judge_that_says_met_to_long_requests_is_found_by_verbosity_alone(project, server, capsys):
    code, data = probe(project, capsys, "--kinds", ALL_KINDS, "--judge", "openai:judge-long", "--batch")
    assert code == 0
    assert {(k, cid) for k, cid, c in entries(data) if c["beyond_noise"]} == {("verbosity", "refund"), ("verbosity", "bill")}
    assert data["findings"] == [{"kind": "verbosity", "criteria": ["refund", "bill"]}]
    decided = {kind: entry["beyond_noise"] for kind, entry in data["kinds"].items()}
    assert decided == {"verbosity": True, "order": False, "confidence": False, "paraphrase": False,
                       "hedging": {"cant_tell": "no cell could turn unmet: all 80 were unmet before"}}  # fmt: skip
    verbosity = data["kinds"]["verbosity"]["criteria"]["refund"]
    assert verbosity["direction"] == f"{SAMPLES} of {SAMPLES} unmet → met"
    assert verbosity["difference"]["value"] == 1.0 and verbosity["difference"]["ci"][0] > 0.8
    assert data["noise"]["refund"]["flips"] == 0 and data["unstable"] == []


def test_a_clean_judge_has_no_finding(project, server, capsys):
    code, data = probe(project, capsys, "--kinds", ALL_KINDS, "--judge", "openai:judge-clean", "--batch")
    assert code == 0 and data["findings"] == [] and data["unstable"] == []
    assert all(n["flips"] == 0 and n["n"] == SAMPLES for n in data["noise"].values())
    for _, _, c in entries(data):
        assert c["flips"] == 0 and c["beyond_noise"] is False
        low, high = c["difference"]["ci"]
        assert c["difference"]["value"] == 0 and low < 0 < high  # no flip is no evidence either way


def test_a_cell_that_flips_under_every_kind_is_listed_once_as_unstable(project, server, capsys):
    kinds = "verbosity,confidence,hedging,paraphrase"
    code, data = probe(project, capsys, "--kinds", kinds, "--judge", "openai:judge-one")
    assert code == 0
    assert data["unstable"] == [{"sample": "s03", "criterion": "refund", "kinds": kinds.split(",")}]
    for kind in kinds.split(","):
        refund = data["kinds"][kind]["criteria"]["refund"]
        assert refund["flips"] == 1 and refund["beyond_noise"] is False
        assert refund["flipped"] == [{"sample": "s03", "from": "met", "to": "unmet", "unstable": True,
                                      **({"output": refund["flipped"][0].get("output")} if kind != "paraphrase" else {})}]  # fmt: skip
        assert refund["direction"] == f"1 of {SAMPLES // 2} met → unmet"  # s01, s03, … were met
    assert data["noise"]["refund"]["flips"] == 0  # the blank line does not change its text
    main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--kinds", kinds, "--judge", "openai:judge-one"])
    out = capsys.readouterr().out
    assert out.count("s03") == 1 and "unstable · refund: s03 flipped under every kind probed" in out


def test_the_null_perturbation_changes_the_bytes_and_is_judged_once(project, server, capsys):
    assert null_text("a") == "a\n" and null_text("a") != "a"
    code, data = probe(project, capsys, "--kinds", "hedging", "--judge", "openai:judge-clean")
    assert code == 0 and data["noise_usage"]["judge_calls"] == 2 * SAMPLES
    users = [parse_call(r.api, r.body).user for r in server.requests]
    assert len(users) == 3 * 2 * SAMPLES and len(set(users)) == len(users)  # baseline, noise, hedging: all distinct
    assert any(_output(0) + "\n\n</sample-" in u for u in users)  # the null: the same text, a blank line added
    code, again = probe(project, capsys, "--kinds", "hedging", "--judge", "openai:judge-clean")
    assert again["usage"]["judge_calls"] == 0 and again["noise"] == data["noise"]  # cached like any request


def test_directions_divide_by_their_own_base():
    """12 cells: 7 unmet before (4 became met), 5 met before (1 became unmet)."""
    probe = CriterionProbe()
    cells = [("unmet", "met")] * 4 + [("unmet", "unmet")] * 3 + [("met", "unmet")] + [("met", "met")] * 4
    for i, (before, after) in enumerate(cells):
        probe.add(f"s{i}", CriterionResult("c", Status(before)), CriterionResult("c", Status(after)), "")
    assert (probe.n, probe.flips, probe.were_unmet, probe.were_met) == (12, 5, 7, 5)
    assert probe.direction == "4 of 7 unmet → met, 1 of 5 met → unmet"  # not 4/12
    up = CriterionProbe()
    for i, (before, after) in enumerate([("unmet", "unmet")] * 8 + [("met", "unmet")] * 2 + [("met", "met")]):
        up.add(f"s{i}", CriterionResult("c", Status(before)), CriterionResult("c", Status(after)), "")
    assert up.direction == "2 of 3 met → unmet"  # the larger share first, whatever the counts


def test_the_paired_difference_interval_by_hand():
    """n = 10 cells: 1 flipped under both, 4 under the kind only, 1 under the noise only, 4 under neither.

    p1 = 5/10 = 0.5 (kind), p2 = 2/10 = 0.2 (noise), θ = 0.3.
    Wilson 95% (z = 1.96): 5/10 → centre 0.5, half 1.96·√(0.025 + 0.009604)/1.384146 = 0.263413
    → (0.236587, 0.763413); 2/10 → centre 0.392079/1.384146 = 0.283264, half 1.96·√(0.016 +
    0.009604)/1.384146 = 0.226584 → (0.056680, 0.509848).
    ad − bc = 4 − 4 = 0 → φ = 0, so
    L = 0.3 − √(0.263413² + 0.309848²) = 0.3 − 0.406672 = −0.106672
    U = 0.3 + √(0.143320² + 0.263413²) = 0.3 + 0.299874 = 0.599874
    """
    # (the code's z is 1.959964, the exact 97.5% normal quantile: the same figures to 5 decimals)
    assert wilson_interval(5, 10) == pytest.approx((0.236587, 0.763413), abs=1e-5)
    value, (low, high) = paired_difference(1, 4, 1, 4)
    assert value == pytest.approx(0.3) and low == pytest.approx(-0.106672, abs=1e-5) and high == pytest.approx(0.599874, abs=1e-5)
    # Newcombe's φ correction (ad − bc = 4624 > n/2): the reference value of Fagerland, Lydersen & Laake's
    # R package contingencytables (Cavo et al. 2012, table 59, 6 / 16, 80): −0.0621 (95% CI −0.1186 to −0.0046)
    value, (low, high) = paired_difference(59, 6, 16, 80)
    assert (round(value, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    assert paired_difference(0, 0, 0, 20)[1] == pytest.approx((-0.161125, 0.161125), abs=1e-5)  # no flip: width kept
    assert paired_difference(0, 0, 0, 0) is None


def test_the_per_criterion_interval_never_collapses_to_a_point():
    """Both runs agreeing on every cell (b = c = 0) — none moved, all moved, or some moved under both —
    still leaves an interval of positive width around 0: φ̂ < 1 whenever it is positive (the n/2
    shrinkage), so the square-and-add never reaches 0. And every interval holds its estimate."""
    for n in range(1, 41):
        for both in range(n + 1):
            value, (low, high) = paired_difference(both, 0, 0, n - both)
            assert value == 0 and low < -1e-3 and high > 1e-3, (both, n)
    for n in range(1, 16):
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for c in range(n + 1 - a - b):
                    value, (low, high) = paired_difference(a, b, c, n - a - b - c)
                    assert -1 <= low <= value <= high <= 1 and high - low > 1e-3, (a, b, c, n)


def test_noise_wording():
    difference = {"value": 0.05, "ci": [-0.1, 0.2], "reading": "not_beyond"}
    assert noise_verdict(False, 0.31, difference) == (
        "not distinguishable from this judge's own noise (noise 31%): +5 points, 95% CI -10 to +20"
    )
    assert noise_verdict(True, 0.05, {"value": 0.35, "ci": [0.12, 0.58]}) == (
        "beyond this judge's noise (noise 5%): +35 points, 95% CI +12 to +58"
    )
    assert noise_verdict(True, 0.05, {"value": 0.35, "ci": [0.12, 0.58]}, compact=True) == (
        "beyond noise (5%): +35 pts, CI +12…+58"
    )
    assert noise_verdict(False, 0.31, difference, compact=True) == "not beyond noise (31%): no finding"
    unseen = {"value": 0.0, "ci": [-0.2, 0.2], "reading": "cant_tell", "n": 14, "detectable_shift": 0.3571}
    assert noise_verdict(False, 0.0, unseen) == "can't tell with 14 cells (noise 0%): a shift below 35 points would not show"
    assert noise_verdict(False, 0.0, unseen, compact=True) == "can't tell (14 cells): a shift below 35 pts would not show"
    assert noise_verdict(False, None, None) == ""


def test_probe_json_shape_from_the_command_line(project, server):
    env = {**os.environ, "RUBRIC_STUDIO_SECRET": SECRET}
    run = subprocess.run(
        [sys.executable, "-m", "rubric_studio", "probe", str(project / "r.yaml"), str(project / "s.jsonl"),
         "--kinds", "verbosity,paraphrase", "--judge", "openai:judge-long", "--format", "json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert set(data["noise"]) == {"refund", "bill"}
    for noise in data["noise"].values():
        assert {"n", "flips", "rate", "ci"} <= set(noise) and isinstance(noise["flips"], int)
        assert noise["n"] == SAMPLES and len(noise["ci"]) == 2
    for kind, _, c in entries(data):
        assert {"n", "flips", "rate", "ci", "direction", "beyond_noise", "difference"} <= set(c)
        assert isinstance(c["flips"], int) and isinstance(c["beyond_noise"], bool)
        assert set(c["difference"]) >= {"value", "ci"} and len(c["difference"]["ci"]) == 2
        assert c["beyond_noise"] is (kind == "verbosity")
    assert data["findings"] == [{"kind": "verbosity", "criteria": ["refund", "bill"]}]
    assert data["kinds"]["verbosity"]["beyond_noise"] is True and data["kinds"]["paraphrase"]["beyond_noise"] is False
    assert data["unstable"] == []


def test_a_criterion_is_decided_within_its_kind_and_never_over_the_other_kinds():
    """5 of 20 cells moved by a kind and none by the noise: alone, p = ½⁵ = 0.031 ≤ 0.05 — beyond
    noise. Among a kind's 2 criteria the test runs at 0.025 (Bonferroni within the kind), where it
    needs 6 cells (a shift of 30 points): can't tell. How many other kinds a run probes never enters."""
    from rubric_studio.engine.probes._noise import compare_with_noise

    kind = {f"s{i}": i < 5 for i in range(20)}
    noise = dict.fromkeys(kind, False)
    alone = compare_with_noise(kind, noise, 0.0)
    among_two = compare_with_noise(kind, noise, 0.0, comparisons=2)
    assert alone.beyond_noise and alone.ci[0] == pytest.approx(0.0378, abs=1e-4)  # the Newcombe 95% interval
    assert alone.to_dict()["p_value"] == 0.03125 and alone.to_dict()["reading"] == "beyond"
    assert not among_two.beyond_noise and among_two.ci == alone.ci  # the 95% interval is what is shown
    assert among_two.to_dict()["level"] == 0.025
    assert among_two.to_dict()["reading"] == "cant_tell" and among_two.to_dict()["detectable_shift"] == 0.3
    assert among_two.to_dict()["decided_over"] == 2
