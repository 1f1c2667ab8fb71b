"""``rubric-studio calibrate`` on the bundled support_reply rubric: without a judge, and against the fake LLM."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest
import yaml

from rubric_studio.cli import main
from tests.fakellm import FakeLLM, Refuse, judge_one

KEYS = {"n", "accuracy", "kappa", "kappa_ci", "both_pass", "both_fail", "rubric_pass_human_fail",
        "rubric_fail_human_pass", "false_pass_rate", "false_fail_rate", "coverage", "false_failure_rate", "alignment"}  # fmt: skip
CURRENCY_KEYS = {"labels_current", "labels_older_wording", "labels_unrecorded"}


@pytest.fixture
def support(bundled):
    folder = bundled / "support_reply"
    return folder / "support_reply.yaml", folder / "support_reply.labels.yaml"


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _labelled_cells(labels_path, criterion: str) -> int:
    data = yaml.safe_load(labels_path.read_text())
    return sum(1 for entry in data.values() if criterion in (entry.get("criteria") or {}))


@pytest.fixture
def checks_only(support):
    """The support rubric cut down to its deterministic checks (no judge named): the same samples
    and labels, nothing a judge would grade."""
    rubric, labels = support
    data = yaml.safe_load(rubric.read_text())
    data["criteria"] = [c for c in data["criteria"] if "check" in c]
    del data["judge"]
    rubric.write_text(yaml.safe_dump(data, sort_keys=False))
    return rubric, labels


def test_no_judge_for_judged_criteria_says_how_to_configure_one_and_exits_2(support, tmp_path, capsys):
    rubric, _ = support
    assert main(["calibrate", str(rubric), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no all-zero table
    error = captured.err.strip()
    assert error.count("\n") == 0 and "resolves-issue" in error
    assert "OPENAI_API_KEY is not set" in error and "--judge" in error and "--base-url" in error
    unnamed = tmp_path / "unnamed.yaml"  # no judge.model and no key: the words grade's note uses
    unnamed.write_text("name: u\ncriteria:\n  - id: polite\n    outcome: Polite\n")
    samples = rubric.with_name("support_reply.samples.jsonl")
    assert main(["calibrate", str(unnamed), str(samples), "--labels", str(support[1])]) == 2
    assert "no judge configured: set OPENAI_API_KEY" in capsys.readouterr().err


def test_a_placeholder_criterion_needs_no_judge(tmp_path, capsys):
    from rubric_studio.engine.starter import PLACEHOLDER_OUTCOME

    (tmp_path / "r.yaml").write_text(f"name: x\ncriteria:\n  - id: todo\n    outcome: {PLACEHOLDER_OUTCOME}\n"
                                     "  - id: short\n    check: {type: length, max_words: 3}\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "output": "one two three four"}\n{"id": "b", "output": "ok"}\n')
    (tmp_path / "l.yaml").write_text("a: {criteria: {short: unmet}}\nb: {criteria: {short: met}}\n")
    args = ["calibrate", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--labels", str(tmp_path / "l.yaml")]
    assert main([*args, "--format", "json"]) == 0
    assert _json(capsys)["criteria"]["short"]["n"] == 2


def test_checks_only_calibrate_without_a_judge(checks_only, capsys):
    rubric, labels = checks_only
    assert main(["calibrate", str(rubric), "--format", "json"]) == 0
    data = _json(capsys)
    assert list(data) == ["overall", "criteria", "disagreements", "warnings", "judge", "usage", "pass_rate", "humans"]
    assert data["usage"]["judge_calls"] == 0 and data["judge"] is None
    assert set(data["overall"]) == KEYS and data["overall"]["n"] == sum(
        1 for e in yaml.safe_load(labels.read_text()).values() if "verdict" in e)
    assert not any("judge criteria not graded" in w for w in data["warnings"])
    assert data["criteria"]["short"]["n"] == _labelled_cells(labels, "short")
    assert all(set(v) == KEYS | CURRENCY_KEYS for v in data["criteria"].values())


def test_table_format_and_fit_without_judge(checks_only, capsys):
    rubric, _ = checks_only
    assert main(["calibrate", str(rubric), "--fit"]) == 0
    out = capsys.readouterr().out
    assert "agreement" in out and "per criterion" in out and "fit" in out
    assert "pass_threshold 0.8 →" in out and "holdout" in out


def test_bad_labels_file_exits_2_with_position(support, capsys):
    rubric, labels = support
    labels.write_text("s1:\n  verdict: pass\ns2:\n  verdict: maybe\n")
    assert main(["calibrate", str(rubric)]) == 2
    assert f"{labels}:4:3: s2: verdict must be pass or fail, got 'maybe'" in capsys.readouterr().err


def test_bad_inline_label_exits_2_with_line(support, capsys, tmp_path):
    rubric, _ = support
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"id": "a", "output": "hi", "label": "pass"}\n{"id": "b", "output": "yo", "label": "great"}\n')
    assert main(["calibrate", str(rubric), str(samples)]) == 2
    assert f"{samples}:2:1: b.label: verdict must be pass or fail" in capsys.readouterr().err


def test_apply_without_fit_is_a_usage_error(support, capsys):
    assert main(["calibrate", str(support[0]), "--apply"]) == 2
    assert "--apply needs --fit" in capsys.readouterr().err


class FlippingTone:
    """Keyword brain, except `tone` alternates 9 / 2 on each repeat of the same cell: it flips."""

    def __init__(self):
        self.seen: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def __call__(self, call):
        item = call.criteria[0]
        if item.kind != "analytic":  # `tone` is the rubric's one analytic criterion (requests carry no ids)
            return judge_one(item, call.sample)
        with self.lock:
            self.seen[(call.sample, item.outcome)] += 1
            odd = self.seen[(call.sample, item.outcome)] % 2
        return {"rationale": "coin toss", "evidence": [], "score": 9 if odd else 2}


def test_with_a_judge_the_numbers_are_real_and_tone_is_flagged_ambiguous(support, capsys, monkeypatch):
    rubric, labels = support
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM(brain=FlippingTone()) as server:
        code = main(["calibrate", str(rubric), "--format", "json", "--base-url", server.base_url_openai,
                     "--repeat", "2", "--fit", "--no-cache"])  # fmt: skip
        calls = server.calls()
    assert code == 0
    data = _json(capsys)
    assert calls > 0
    overall = data["overall"]
    verdicts = sum(1 for e in yaml.safe_load(labels.read_text()).values() if "verdict" in e)
    assert overall["n"] == verdicts  # every labelled sample now has a pass/fail verdict
    bp, bf, fp, ff = (overall[k] for k in ("both_pass", "both_fail", "rubric_pass_human_fail", "rubric_fail_human_pass"))
    assert bp + bf + fp + ff == overall["n"]
    n = overall["n"]
    p_o = (bp + bf) / n
    p_e = ((bp + fp) * (bp + ff) + (bf + ff) * (bf + fp)) / n**2
    assert overall["accuracy"] == pytest.approx(p_o, abs=1e-4)
    assert overall["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-4)
    consistency = data["consistency"]
    assert consistency["repeat"] == 2 and consistency["ambiguous"] == ["tone"]
    assert consistency["criteria"]["tone"]["flip_rate"] == 1.0
    assert consistency["criteria"]["resolves-issue"]["flip_rate"] == 0.0
    assert len(consistency["criteria"]["tone"]["flipping_samples"]) == consistency["criteria"]["tone"]["cells"]
    assert {"pass_threshold", "weights", "split", "train", "holdout", "all"} <= set(data["fit"])
    ids = {d["id"] for d in data["disagreements"]}
    assert ids <= set(yaml.safe_load(labels.read_text()))


def test_fit_apply_writes_the_rubric_and_says_so(support, capsys, monkeypatch):
    rubric, _ = support
    before = rubric.read_text()
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM() as server:
        code = main(["calibrate", str(rubric), "--format", "json", "--base-url", server.base_url_openai,
                     "--fit", "--apply"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    fit = json.loads(captured.out)["fit"]
    assert f"applied to {rubric}" in captured.err
    assert fit["changed"] is True  # the keyword judge disagrees with the labels enough to move something
    after = rubric.read_text()
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert changed and all(line.strip().startswith(("pass_threshold:", "weight:")) for line in changed)
    assert fit["applied"]


def test_errored_cells_exit_3_and_still_print_the_report(support, capsys, monkeypatch):
    rubric, _ = support
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM() as server:
        server.always(Refuse())
        code = main(["calibrate", str(rubric), "--format", "json", "--base-url", server.base_url_openai, "--no-cache"])
    assert code == 3
    data = _json(capsys)
    assert data["overall"]["n"] == 0
    assert any("labelled samples excluded" in w and "error" in w for w in data["warnings"])
    assert any("cells ended in error" in w for w in data["warnings"])


def test_a_missing_labels_file_named_on_the_command_line_exits_2(support, capsys, tmp_path):
    missing = tmp_path / "nope.labels.yaml"
    assert main(["calibrate", str(support[0]), "--labels", str(missing)]) == 2
    assert f"{missing}: labels file not found" in capsys.readouterr().err


def test_calibrate_reports_calls_tokens_and_time_like_grade(support, capsys, monkeypatch):
    rubric, _ = support
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM() as server:
        assert main(["calibrate", str(rubric), "--format", "json", "--base-url", server.base_url_openai,
                     "--no-cache"]) == 0
        calls = server.calls()
        data = _json(capsys)
        assert main(["calibrate", str(rubric), "--base-url", server.base_url_openai, "--no-cache"]) == 0
        text = capsys.readouterr().out
    usage = data["usage"]
    assert usage["judge_calls"] == calls > 0
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["wall_seconds"] > 0
    assert data["judge"]["model"]
    line = next(line for line in text.splitlines() if " calls" in line and "tokens" in line)
    assert f": {calls} calls" in line and "0 cache hits" in line and line.rstrip().endswith("s")


def test_kappa_of_one_labelled_sample_is_not_a_number(tmp_path, capsys):
    (tmp_path / "r.yaml").write_text("name: x\ncriteria:\n  - id: short\n    check: {type: length, max_words: 3}\n")
    (tmp_path / "s.jsonl").write_text('{"id": "a", "output": "one two three four five"}\n{"id": "b", "output": "ok"}\n')
    (tmp_path / "l.yaml").write_text("a: {verdict: pass, criteria: {short: met}}\n")
    args = ["calibrate", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--labels", str(tmp_path / "l.yaml")]
    main([*args, "--format", "json"])
    data = _json(capsys)
    assert data["overall"]["n"] == 1 and data["criteria"]["short"]["n"] == 1
    assert data["overall"]["kappa"] is None and data["overall"]["kappa_ci"] is None
    assert data["criteria"]["short"]["kappa"] is None
    main(args)
    text = capsys.readouterr().out
    overall = next(line for line in text.splitlines() if line.startswith("overall"))
    assert "0.00" not in overall and "[" not in overall
    assert overall.split("│")[3].strip() == "–"
    page = tmp_path / "run.html"
    main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--labels", str(tmp_path / "l.yaml"),
          "--format", "html", "-o", str(page)])
    assert "[0.00, 0.00]" not in page.read_text()


def test_labels_not_yet_folded_from_the_journal_are_counted(checks_only, capsys):
    """A label clicked in the web labeller or pressed in the studio sits in the labels journal until
    it is folded into the sidecar: calibrate counts it all the same."""
    from rubric_studio.core.labels import LabelChange, LabelStore, load_labels

    rubric, labels = checks_only
    assert main(["calibrate", str(rubric), "--format", "json"]) == 0
    before = _json(capsys)["criteria"]["short"]["n"]
    sidecar = yaml.safe_load(labels.read_text())
    samples = [json.loads(line)["id"] for line in rubric.with_name("support_reply.samples.jsonl").read_text().splitlines()]
    unlabelled = next(s for s in samples if "short" not in ((sidecar.get(s) or {}).get("criteria") or {}))
    text = labels.read_text()
    LabelStore(labels).write(unlabelled, LabelChange("cell", "met", "short"), "web-person")
    assert labels.read_text() == text  # not in the sidecar yet
    assert load_labels(labels).by_annotator[unlabelled]["web-person"].criteria == {"short": "met"}
    assert main(["calibrate", str(rubric), "--format", "json"]) == 0
    assert _json(capsys)["criteria"]["short"]["n"] == before + 1
