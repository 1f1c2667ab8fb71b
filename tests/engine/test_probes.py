"""Bias probes (``rubric-studio probe``) against the fake LLM server, scripted as judges whose
biases are known by construction:

    judge-length  met iff the output has 40 words or more: every short sample is unmet, and
                  padding (about 70 words) makes every one met → verbosity flips 20/20 unmet → met
    judge-random  met or unmet by a coin seeded on (criterion, text): any other text is a new toss
    judge-right   met iff the outcome's subject ("refund", "bill") is in the output: padding,
                  confident and hedging phrases contain neither → 0 flips
    judge-first   in a batch call, the first criterion listed is met and the others unmet: the
                  order probe flips every cell

Thirty samples of about ten words; s00–s19 are labelled, so the probes use those twenty.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.engine.probes import paraphrase, perturb_text, reorder
from tests.fakellm import Call, FakeLLM

LABELLED = 20


def _met(model: str, outcome: str, sample: str, first: bool) -> bool:
    if model == "judge-length":
        return len(sample.split()) >= 40
    if model == "judge-random":
        return random.Random(f"{outcome}|{sample}").random() < 0.5
    if model == "judge-first":
        return first
    subject = "refund" if "refund" in outcome.lower() else "bill"
    return subject in sample.lower()


def brain(call: Call) -> dict:
    model = call.body["model"]

    def one(index: int, outcome: str) -> dict:
        met = _met(model, outcome, call.sample, first=index == 0)
        return {
            "rationale": f"{model} says {'met' if met else 'unmet'}",
            "evidence": [],
            "verdict": "met" if met else "unmet",
        }

    if not call.batch:
        return one(0, call.criteria[0].outcome)
    return {item.id: one(i, item.outcome) for i, item in enumerate(call.criteria)}


@pytest.fixture
def biased(monkeypatch):
    with FakeLLM(brain=brain) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def write_project(tmp_path: Path) -> Path:
    """The rubric (two judge criteria and a check), 30 samples, labels for s00–s19."""
    (tmp_path / "r.yaml").write_text(
        "name: probe-me  # a comment that must survive\njudge:\n  max_retries: 0\ncriteria:\n"
        "  - id: refund\n    outcome: Mentions the refund\n"
        "  - id: bill\n    outcome: Explains the bill clearly\n"
        "  - id: short\n    check: {type: length, max_words: 200}\n"
    )
    lines = [json.dumps({"id": f"s{i:02d}", "output": f"ticket {i:02d}: "
                         + ("your refund is on its way to you" if i % 2 else "we looked into your bill for you")})
             for i in range(30)]  # fmt: skip
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    labels = "".join(f"s{i:02d}: {{verdict: {'pass' if i % 2 else 'fail'}}}\n" for i in range(LABELLED))
    (tmp_path / "r.labels.yaml").write_text("# my labels\n" + labels)
    return tmp_path


def probe(project: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "json", *extra])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out) if captured.out.strip() else {}


def test_verbosity_finds_the_length_rewarding_judge_and_not_the_others(project, biased, capsys):
    rates = {}
    for model in ("judge-length", "judge-random", "judge-right"):
        code, data = probe(project, capsys, "--kinds", "verbosity", "--judge", f"openai:{model}")
        assert code == 0
        assert data["samples"] == {"source": "labelled", "n": LABELLED}
        refund = data["kinds"]["verbosity"]["criteria"]["refund"]
        rates[model] = refund
        assert "short" not in data["kinds"]["verbosity"]["criteria"]  # checks are deterministic: not probed
    length, coin, right = rates["judge-length"], rates["judge-random"], rates["judge-right"]
    assert (length["n"], length["flips"], length["unmet_to_met"], length["met_to_unmet"]) == (20, 20, 20, 0)
    assert length["rate"] == 1.0 and length["direction"] == "20 of 20 unmet → met"
    assert length["ci"][0] == pytest.approx(0.8389, abs=1e-4) and length["ci"][1] == 1.0  # Wilson, by hand
    assert (right["flips"], right["rate"], right["ci"][0]) == (0, 0.0, 0.0) and right[
        "direction"
    ] == "0 of 20 flipped"
    assert right["ci"][1] == pytest.approx(0.1611, abs=1e-4)
    # A coin flips about half the cells, both ways: no dominant unmet → met bias like the length judge's.
    assert 0 < coin["flips"] < 20 and coin["unmet_to_met"] > 0 and coin["met_to_unmet"] > 0
    assert coin["ci"][1] < length["ci"][0]  # told apart from the length judge by the intervals


def test_json_shape_and_flipped_samples_show_the_text_the_judge_saw(project, biased, capsys):
    code, data = probe(
        project, capsys, "--kinds", "verbosity,hedging", "--judge", "openai:judge-length", "--seed", "3"
    )
    assert code == 0
    assert set(data["kinds"]) == {"verbosity", "hedging"}
    for kind in data["kinds"].values():
        for entry in kind["criteria"].values():
            assert isinstance(entry["n"], int) and isinstance(entry["flips"], int)
            assert (
                isinstance(entry["rate"], float)
                and len(entry["ci"]) == 2
                and isinstance(entry["direction"], str)
            )
    flipped = data["kinds"]["verbosity"]["criteria"]["bill"]["flipped"]
    assert flipped[0]["from"] == "unmet" and flipped[0]["to"] == "met"
    assert flipped[0]["output"] == perturb_text(
        "verbosity", "ticket 00: we looked into your bill for you", 3, "s00"
    )
    hedging = data["kinds"]["hedging"]["criteria"]["bill"]
    assert hedging["flips"] == 0  # two short sentences do not reach 40 words


def test_a_second_run_costs_no_calls_and_files_are_untouched(project, biased, capsys):
    before = {name: (project / name).read_bytes() for name in ("r.yaml", "r.labels.yaml", "s.jsonl")}
    args = (
        "--kinds",
        "verbosity,confidence,hedging,paraphrase,order",
        "--judge",
        "openai:judge-random",
        "--batch",
    )
    code, first = probe(project, capsys, *args)
    assert code == 0 and first["usage"]["judge_calls"] > 0
    sent = biased.calls()
    code, second = probe(project, capsys, *args)
    assert code == 0 and biased.calls() == sent
    assert second["usage"]["judge_calls"] == 0 and second["usage"]["cache_hits"] > 0
    assert second["kinds"] == {
        k: {**v, "usage": second["kinds"][k]["usage"]} for k, v in first["kinds"].items()
    }
    assert {name: (project / name).read_bytes() for name in before} == before


def test_order_is_skipped_on_a_rubric_judged_one_criterion_per_call(project, biased, capsys):
    code, data = probe(project, capsys, "--kinds", "order", "--judge", "openai:judge-first")
    assert code == 0
    order = data["kinds"]["order"]
    assert "not batched" in order["skipped"] and "--batch" in order["skipped"] and order["criteria"] == {}
    assert biased.calls() == 2 * 2 * LABELLED  # the baseline and the noise only, two criteria each
    main(
        [
            "probe",
            str(project / "r.yaml"),
            str(project / "s.jsonl"),
            "--kinds",
            "order",
            "--judge",
            "openai:judge-first",
        ]
    )
    assert "order: skipped — the rubric is not batched" in capsys.readouterr().out


def test_order_in_batch_mode_flips_a_judge_that_favours_the_first_criterion(project, biased, capsys):
    code, data = probe(project, capsys, "--kinds", "order", "--judge", "openai:judge-first", "--batch")
    assert code == 0
    order = data["kinds"]["order"]
    assert order["order"] == ["bill", "refund"]
    assert order["criteria"]["refund"]["direction"] == "20 of 20 met → unmet"
    assert order["criteria"]["bill"]["direction"] == "20 of 20 unmet → met"
    users = [json.dumps(r.body) for r in biased.requests]
    swapped = [u for u in users if u.index("Criterion `bill`") < u.index("Criterion `refund`")]
    assert len(swapped) == LABELLED  # the other order reached the judge, once per sample
    # the baseline (the rubric-order batch), the noise batch and the reordered batch: one call per sample each
    assert biased.calls() == 3 * LABELLED
    assert order["beyond_noise"] is True and order["pooled"]["moved"] == 2 * LABELLED


def test_table_lines_and_criterion_option(project, biased, capsys):
    code = main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--kinds", "verbosity",
                 "--criterion", "refund", "--judge", "openai:judge-length"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "verbosity · refund: 20 of 20 unmet → met (flip rate 100%, 95% CI 84%–100%)" in out
    assert "bill" not in out.split("verbosity ·")[1] and "20 labelled samples" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--kinds", "verbosity,loudness"), "'loudness' is not a probe kind"),
        (("--criterion", "nope"), "--criterion nope: no such criterion (the rubric has refund, bill, short)"),
        (
            ("--criterion", "short"),
            "--criterion short: it is a deterministic check; probes measure judge criteria",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(project, biased, capsys, extra, message):
    code = main(
        ["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--judge", "openai:judge-right", *extra]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and biased.calls() == 0


def test_no_judge_exits_2(project, capsys):
    code = main(["probe", str(project / "r.yaml"), str(project / "s.jsonl"), "--kinds", "verbosity"])
    err = capsys.readouterr().err
    assert code == 2 and "no judge to probe" in err


def test_unlabelled_samples_are_all_probed_and_said_so(project, biased, capsys):
    (project / "r.labels.yaml").unlink()
    code, data = probe(project, capsys, "--kinds", "confidence", "--judge", "openai:judge-right")
    assert code == 0 and data["samples"] == {"source": "graded", "n": 30}
    assert data["kinds"]["confidence"]["criteria"]["refund"]["n"] == 30


def test_judge_errors_exit_3(project, biased, capsys):
    from tests.fakellm import server_error

    biased.always(lambda call: server_error(500) if "ticket 03" in call.sample else brain(call))
    code, data = probe(project, capsys, "--kinds", "verbosity", "--judge", "openai:judge-right")
    assert code == 3
    assert data["kinds"]["verbosity"]["criteria"]["refund"]["n"] == LABELLED - 1


def test_perturbations_are_deterministic_and_seeded():
    text = "Your refund is on its way."
    for kind in ("verbosity", "confidence", "hedging"):
        once = perturb_text(kind, text, 7, "s1")
        assert once == perturb_text(kind, text, 7, "s1") and text in once and once != text
        assert {perturb_text(kind, text, seed, "s1") for seed in range(6)} != {
            once
        }  # another seed, other text
    padded = perturb_text("verbosity", text, 7, "s1")
    assert len(padded.split()) >= len(text.split()) + 50
    outcome = "States the refund policy correctly"
    assert paraphrase(outcome, 1, "c") == paraphrase(outcome, 1, "c") != outcome
    assert len({paraphrase(outcome, seed, "c") for seed in range(6)}) > 1
    assert all(paraphrase("Zebra xylophone", seed, "c") != "Zebra xylophone" for seed in range(20))
    ids = ["a", "b", "c", "d"]
    assert reorder(ids, 5) == reorder(ids, 5) != ids and sorted(reorder(ids, 5)) == ids
    assert reorder(["a", "b"], 0) == ["b", "a"]
