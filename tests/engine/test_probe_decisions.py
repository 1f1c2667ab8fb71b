"""One decision per probe kind, pooled over criteria, that knows what it cannot see — through the real
openai SDK and the fake LLM server, with scripted judges whose behaviour is known by construction:

    judge-long       the right verdict (the outcome's subject is in the output), and met for any long
                     request (100 words or more): padding (70–81 words) pushes the ten 40-word samples
                     over, not the short ones (18 words at most)
    judge-flip       the right verdict, turned over for 20% of requests (a hash of the request body and
                     the criterion decides, so any change of the bytes is a new draw): noise, no bias
    judge-yes        met, whatever it is asked
    judge-agreeable  the right verdict, and met for any answer of fewer than eight words
    judge-right      the right verdict

The length-bias project reproduces a measured run: 25 samples × 4 criteria, 37 unmet cells of which
padding turns 16 met (7 of 10 on ``refund``, 4 of 9, 3 of 9, 2 of 9 on the others), while the null
perturbation flips none of the 100. Decided per criterion with a Bonferroni correction over every
kind × criterion of the run, that was a finding with verbosity probed alone (4 comparisons: refund's
interval +2 to +49 points) and "no finding" once paraphrase was probed too (8 comparisons).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.samples import Sample
from rubric_studio.engine.probes import (
    Table,
    content_free,
    detectable_shift,
    exceed_p,
    noise_verdict,
    read_table,
)
from rubric_studio.engine.probes._decision import KindDecision, cells_needed
from tests.fakellm import Call, FakeLLM

SECRET = "probe-decision-tests-fixed-fence-secret-0123456"
SUBJECTS = ("refund", "bill", "delivery", "password")
#: Per criterion, the samples that do not mention its subject (its unmet cells at the baseline).
UNMET = {
    "refund": [0, 1, 2, 3, 4, 5, 6, 10, 11, 12],
    "bill": [0, 1, 2, 3, 10, 11, 12, 13, 14],
    "delivery": [4, 5, 6, 13, 14, 15, 16, 17, 18],
    "password": [7, 8, 15, 16, 17, 18, 19, 20, 21],
}
LONG = range(10)  # 40 words: padded, 110 words or more
SAMPLES = 25
FILLER = ("we", "went", "through", "the", "account", "with", "you", "and", "checked", "each", "step", "again",
          "so", "that", "nothing", "was", "missed")


def _subject(outcome: str) -> str:
    return next((s for s in (*SUBJECTS, "warranty") if s in outcome.lower()), "")


def _draw(call: Call, criterion: str) -> float:
    body = json.dumps(call.body, sort_keys=True) + "\x1f" + criterion
    return int(hashlib.sha256(body.encode()).hexdigest()[:8], 16) / 0x1_0000_0000


def _met(model: str, call: Call, outcome: str) -> bool:
    text = call.sample.lower()
    right = bool(_subject(outcome)) and _subject(outcome) in text
    if model == "judge-yes":
        return True
    if model == "judge-long":
        return right or len(text.split()) >= 100
    if model == "judge-agreeable":
        return right or len(text.split()) < 8
    if model == "judge-flip":
        return right != (_draw(call, _subject(outcome)) < 0.2)
    return right


def brain(call: Call) -> dict:
    model = call.body["model"]

    def one(outcome: str) -> dict:
        return {"rationale": model, "evidence": [], "verdict": "met" if _met(model, call, outcome) else "unmet"}

    if not call.batch:
        return one(call.criteria[0].outcome)
    return {item.id: one(item.outcome) for item in call.criteria}


def output(i: int) -> str:
    words = f"ticket {i:02d}:".split()
    for subject in SUBJECTS:
        if i not in UNMET[subject]:
            words += f"the {subject} is handled.".split()
    while i in LONG and len(words) < 40:
        words.append(FILLER[len(words) % len(FILLER)])
    return " ".join(words)


def question(i: int) -> str:
    return f"Ticket {i:02d}: where is my {SUBJECTS[i % 2]}?"


def write_project(folder: Path, samples: int = SAMPLES, subjects: tuple[str, ...] = SUBJECTS,
                  penalty: str | None = None, inputs: Callable[[int], str] | None = None) -> Path:  # fmt: skip
    criteria = "".join(f"  - id: {s}\n    outcome: Mentions the {s}\n" + ("    weight: -1\n" if s == penalty else "")
                       for s in subjects)  # fmt: skip
    (folder / "r.yaml").write_text(f"name: decisions\njudge:\n  max_retries: 0\ncriteria:\n{criteria}")
    rows = []
    for i in range(samples):
        row = {"id": f"s{i:02d}", "output": output(i)}
        if inputs is not None:
            row["input"] = inputs(i)
        rows.append(json.dumps(row))
    (folder / "s.jsonl").write_text("\n".join(rows) + "\n")
    return folder


@pytest.fixture
def server(monkeypatch):
    with FakeLLM(brain=brain) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("RUBRIC_STUDIO_SECRET", SECRET)
        yield fake


def probe(project: Path, capsys, *extra: str) -> dict:
    code = main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", *extra])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err, captured.err
    return json.loads(captured.out)


def table(project: Path, capsys, *extra: str) -> str:
    assert main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), *extra]) == 0
    return " ".join(capsys.readouterr().out.split())  # the table wraps long lines


def test_a_length_bias_is_beyond_noise_whether_or_not_paraphrase_is_probed(tmp_path, server, capsys):
    project = write_project(tmp_path)
    alone = probe(project, capsys, "--kinds", "verbosity", "--judge", "openai:judge-long")
    both = probe(project, capsys, "--kinds", "verbosity,paraphrase", "--judge", "openai:judge-long")
    assert sum(n["flips"] for n in alone["noise"].values()) == 0
    assert sum(n["n"] for n in alone["noise"].values()) == 100
    for data in (alone, both):
        verbosity = data["kinds"]["verbosity"]
        assert verbosity["beyond_noise"] is True
        pooled = verbosity["pooled"]
        assert (pooled["cells"], pooled["moved"], pooled["noise_moved"]) == (37, 16, 0)
        assert pooled["p_value"] == pytest.approx(2**-16, abs=1e-6) and pooled["level"] == 0.05
        assert verbosity["reads"] == ("beyond this judge's noise: 16 of 37 unmet → met, 0 of 37 under the noise "
                                      "(+43 points, exact one-sided p < 0.001)")  # fmt: skip
        assert [(c, f["unmet_to_met"], f["were_unmet"]) for c, f in verbosity["criteria"].items()] == [
            ("refund", 7, 10), ("bill", 4, 9), ("delivery", 3, 9), ("password", 2, 9)]
        assert data["findings"] == [{"kind": "verbosity", "criteria": ["refund"]}]
    # the verbosity entry (per-criterion detail included) is the same with or without paraphrase
    strip = {k: v for k, v in alone["kinds"]["verbosity"].items() if k != "usage"}
    assert {k: v for k, v in both["kinds"]["verbosity"].items() if k != "usage"} == strip
    refund = alone["kinds"]["verbosity"]["criteria"]["refund"]["difference"]
    assert refund["decided_over"] == 4 and refund["level"] == 0.0125  # within the kind: its 4 criteria
    paraphrase = both["kinds"]["paraphrase"]
    assert paraphrase["beyond_noise"] is False and paraphrase["pooled"]["cells"] == 100
    assert paraphrase["reads"].endswith("a shift of 5 points or more would have shown")
    out = table(project, capsys, "--kinds", "verbosity,paraphrase", "--judge", "openai:judge-long")
    assert "verbosity: beyond this judge's noise: 16 of 37 unmet → met" in out
    assert "findings beyond this judge's noise: verbosity" in out and "no finding" not in out


def test_a_judge_of_known_flip_rate_has_no_finding(tmp_path, server, capsys):
    project = write_project(tmp_path, samples=40, subjects=SUBJECTS[:2])
    data = probe(project, capsys, "--judge", "openai:judge-flip", "--batch")
    for noise in data["noise"].values():  # 2 × 0.2 × 0.8 = 32% expected
        assert 0.2 <= noise["rate"] <= 0.45, noise
    assert set(data["kinds"]) == {"verbosity", "order", "confidence", "hedging", "paraphrase", "leniency"}
    assert data["findings"] == []
    for kind, entry in data["kinds"].items():
        assert entry["beyond_noise"] is not True, (kind, entry["reads"])
        # a kind flips as much as the noise does: without the pairing these would read as bias
        assert kind == "leniency" or (entry["pooled"]["moved"] > 0 and entry["pooled"]["noise_moved"] > 0), kind
        if entry["beyond_noise"] is False:
            assert entry["pooled"]["detectable_shift"] <= 0.2 and "would have shown" in entry["reads"]
        else:
            assert entry["beyond_noise"] == {"cant_tell": entry["reads"]}
    # no input: the 40 content-free answers are three requests, each judged and counted once
    leniency = data["kinds"]["leniency"]
    assert leniency["pooled"]["cells"] == 6 and leniency["note"].startswith("37 of 40 samples would send the same")
    assert leniency["beyond_noise"]["cant_tell"].startswith("can't tell with 6 cells: even every cell moving would not show")
    # with an input to tell them apart, 80 content-free requests: the judge meets about 20% of them (its
    # error rate), against a noise that flips about 32% of verdicts — noise, not leniency
    (tmp_path / "asked").mkdir()
    asked = write_project(tmp_path / "asked", samples=40, subjects=SUBJECTS[:2], inputs=lambda i: f"Ticket {i:02d}: help?")
    leniency = probe(asked, capsys, "--kinds", "leniency", "--judge", "openai:judge-flip")["kinds"]["leniency"]
    assert leniency["pooled"]["cells"] == 80 and 0.1 <= leniency["pooled"]["moved"] / 80 <= 0.3
    assert leniency["beyond_noise"] is False, leniency["reads"]


def test_a_judge_that_never_changes_its_verdict_is_named(tmp_path, server, capsys):
    project = write_project(tmp_path, samples=21, subjects=SUBJECTS[:2], inputs=question)
    data = probe(project, capsys, "--judge", "openai:judge-yes", "--batch")
    named = "met 42 of 42 cells: probes cannot see a bias in a judge that never changes its verdict"
    assert data["constant"] == named
    assert data["findings"] == [{"kind": "leniency", "criteria": ["refund", "bill"]}]
    for kind in ("verbosity", "order", "confidence", "hedging", "paraphrase"):
        assert data["kinds"][kind]["beyond_noise"] == {"cant_tell": named}, kind
    # the one probe that can see it: every content-free answer met
    leniency = data["kinds"]["leniency"]
    assert leniency["beyond_noise"] is True and leniency["pooled"]["moved"] == 42
    assert leniency["reads"].startswith("beyond this judge's noise: met 42 of 42 content-free answers")
    out = table(project, capsys, "--judge", "openai:judge-yes", "--batch")
    assert out.count(named) == 1 and "no finding" not in out
    assert "verbosity: can't tell: the judge gave one verdict to every cell (below)" in out


def test_too_few_cells_say_what_shift_would_go_unseen(tmp_path, server, capsys):
    """7 samples × 2 criteria, nothing moved by a kind or by the noise. Paraphrase looks at all 14
    cells: the test needs 5 of them moved by the kind alone (½⁵ = 0.031 ≤ 0.05 < ½⁴), a shift of
    5/14 = 35.7 points, so anything smaller cannot show; confidence at the 11 unmet cells (5/11 =
    45.5); hedging at the 3 met ones, where even all three moving would not do."""
    project = write_project(tmp_path, samples=7, subjects=("refund", "bill"))
    data = probe(project, capsys, "--kinds", "paraphrase,confidence,hedging", "--judge", "openai:judge-right")
    paraphrase = data["kinds"]["paraphrase"]
    assert paraphrase["pooled"]["cells"] == 14 and paraphrase["pooled"]["detectable_shift"] == pytest.approx(5 / 14, abs=1e-4)
    reason = "can't tell with 14 cells: a shift below 35 points would not show (0 of 14 cells flipped, 0 of 14 under the noise)"
    assert paraphrase["beyond_noise"] == {"cant_tell": reason}
    assert data["kinds"]["confidence"]["beyond_noise"]["cant_tell"].startswith(
        "can't tell with 11 cells: a shift below 45 points would not show")
    assert data["kinds"]["hedging"]["beyond_noise"]["cant_tell"].startswith(
        "can't tell with 3 cells: even every cell moving would not show")
    out = table(project, capsys, "--kinds", "paraphrase,confidence,hedging", "--judge", "openai:judge-right")
    assert f"paraphrase: {reason}" in out and "no finding" not in out
    assert "can't tell: paraphrase, confidence, hedging (above) — not the same as no bias" in out
    # every baseline verdict unmet, yet padding moves some: hedging has no cell that could move its way
    (tmp_path / "long").mkdir()
    long_only = write_project(tmp_path / "long", samples=14, subjects=("warranty",))
    data = probe(long_only, capsys, "--kinds", "verbosity,hedging", "--judge", "openai:judge-long")
    assert data["constant"] is None and data["kinds"]["verbosity"]["pooled"]["moved"] == 10
    assert data["kinds"]["hedging"]["beyond_noise"] == {"cant_tell": "no cell could turn unmet: all 14 were unmet before"}


def test_leniency_counts_content_free_answers_met(tmp_path, server, capsys):
    project = write_project(tmp_path, samples=30, subjects=("refund", "bill", "password"), penalty="password",
                            inputs=question)  # fmt: skip
    agreeable = probe(project, capsys, "--kinds", "leniency", "--judge", "openai:judge-agreeable")
    leniency = agreeable["kinds"]["leniency"]
    assert set(leniency["criteria"]) == {"refund", "bill"}  # a content-free answer may rightly meet a penalty
    assert leniency["beyond_noise"] is True and leniency["pooled"]["moved"] == 60  # every one met
    assert leniency["criteria"]["refund"]["direction"] == "met 30 of 30 content-free answers"
    # the right-verdict judge meets only an input restated that names the criterion's subject
    right = probe(project, capsys, "--kinds", "leniency", "--judge", "openai:judge-right")
    samples = [Sample(f"s{i:02d}", output(i), input=question(i)) for i in range(30)]
    answers = {s.id: content_free(s, 0) for s in samples}
    assert set(answers.values()) >= {"Yes.", "Sure, here it is:", ""}
    assert any(answer == s.input for s in samples for answer in [answers[s.id]])  # the input restated
    for cid in ("refund", "bill"):
        expected = sorted(sid for sid, a in answers.items() if cid in a)
        entry = right["kinds"]["leniency"]["criteria"][cid]
        assert sorted(f["sample"] for f in entry["flipped"]) == expected and entry["unmet_to_met"] == len(expected)
        assert all(f["output"] == answers[f["sample"]] for f in entry["flipped"])
    assert right["kinds"]["leniency"]["pooled"]["noise_moved"] == 0


def test_order_and_the_noise_count_from_the_same_base_verdicts(tmp_path, server, capsys):
    project = write_project(tmp_path, samples=20, subjects=SUBJECTS[:2])
    data = probe(project, capsys, "--kinds", "order", "--judge", "openai:judge-flip", "--batch")
    for cid, noise in data["noise"].items():
        order = data["kinds"]["order"]["criteria"][cid]
        assert (order["n"], order["were_met"], order["were_unmet"]) == (noise["n"], noise["were_met"], noise["were_unmet"])
    assert server.calls() == 3 * 20  # the baseline batch, the noise batch, the other order: one call per sample each


def test_the_exact_paired_test_by_hand():
    assert exceed_p(16, 0) == 2**-16
    assert exceed_p(6, 1) == pytest.approx(8 / 128)  # P(X ≥ 6), X ~ Bin(7, ½) = (7 + 1)/128
    assert exceed_p(0, 0) == 1.0 and exceed_p(3, 5) > 0.5
    assert cells_needed(0) == 5 and cells_needed(0, 0.0125) == 7
    assert detectable_shift(14, 0) == pytest.approx(5 / 14) and detectable_shift(0, 0) is None
    scipy_stats = pytest.importorskip("scipy.stats")
    for b, c in [(4, 0), (7, 2), (12, 5), (30, 18), (3, 9)]:
        assert exceed_p(b, c) == pytest.approx(scipy_stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue)


def test_a_large_shift_whose_interval_reaches_zero_reads_suggestive():
    """4 of 30 cells moved by the kind alone, none by the noise: +13 points, p = ½⁴ = 0.0625 — not
    beyond noise, yet 30 cells could have shown a shift of 5/30 = 17 points: suggestive, not "no"."""
    reading = read_table(Table(0, 4, 0, 26))
    assert reading.outcome == "suggestive" and reading.p_value == 0.0625
    decision = KindDecision(reading, "unmet → met")
    assert decision.beyond_noise is None
    assert decision.json_value() == {"cant_tell": "suggestive: probe more samples — 4 of 30 unmet → met, 0 of 30 "
                                                  "under the noise (+13 points, exact one-sided p = 0.062)"}  # fmt: skip
    assert read_table(Table(0, 1, 0, 29)).outcome == "not_beyond"  # +3 points: no effect worth a word
    detail = {"value": 0.16, "ci": [-0.02, 0.35], "n": 25, "reading": "suggestive"}
    assert noise_verdict(False, 0.0, detail) == "suggestive: probe more samples (noise 0%): +16 points, 95% CI -2 to +35"
    unseen = {"value": 0.44, "ci": [0.1, 0.7], "n": 9, "reading": "cant_tell", "detectable_shift": 0.7778}
    assert noise_verdict(False, 0.0, unseen) == ("can't tell with 9 cells (noise 0%): a shift below 77 points would "
                                                 "not show; +44 points, 95% CI +10 to +70: suggestive, probe more samples")  # fmt: skip
