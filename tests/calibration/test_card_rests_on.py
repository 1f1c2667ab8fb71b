"""What a rubric card rests on: the samples, labels and judge it was written with (``validate`` calls
it stale when they move, and not for settings that cannot move a verdict), its cost of grading once
with the repeat calls apart, and the pass rate raw and corrected by the labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core.agreement import Agreement
from rubric_studio.core.card import CANNOT_MOVE_A_VERDICT, judge_basis, rubric_identity, staleness
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.pass_rate import corrected_rate
from rubric_studio.core.rubric import JudgeSettings
from tests.fakellm import FakeLLM


@pytest.fixture
def support(bundled):
    return bundled / "support_reply" / "support_reply.yaml"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM() as fake:
        yield fake


def _card(rubric: Path) -> dict:
    return yaml.safe_load(rubric.with_name(f"{rubric.stem}.card.yaml").read_text())


def _validate(rubric: Path, capsys) -> tuple[str, str]:
    """(the card's state in validate's JSON, the text validate printed on stderr)."""
    capsys.readouterr()
    assert main(["validate", str(rubric)]) == 0  # a stale card is a warning, never an error
    err = capsys.readouterr().err
    assert main(["validate", str(rubric), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["files"][0]["card"], err


# -- the cost of grading once ---------------------------------------------------------------------
def test_repeat_3_costs_what_one_grade_costs_per_100_and_shows_the_repeat_calls_apart(support, server, capsys,
                                                                                       tmp_path):
    url = server.base_url_openai
    assert main(["card", str(support), "--base-url", url, "--cache-path", str(tmp_path / "once.sqlite")]) == 0
    once = _card(support)["cost_per_100"]
    assert once["value"] > 0
    capsys.readouterr()

    assert main(["card", str(support), "--base-url", url, "--repeat", "3", "--cache-path",
                 str(tmp_path / "thrice.sqlite")]) == 0
    err = capsys.readouterr().err
    card = _card(support)
    assert card["cost_per_100"]["value"] == pytest.approx(once["value"], rel=1e-6)  # was 3x
    assert card["cost_per_100"]["ci"] == pytest.approx(once["ci"], rel=1e-6)
    extra = card["consistency"]["repeat_calls"]
    assert extra["calls"] == 2 * 4 * 15  # two more judgements of each of 4 judge criteria x 15 samples
    assert extra["usd"] == pytest.approx(2 * once["value"] * 15 / 100, rel=1e-4)
    assert f"cost per 100 samples, grading once: ${once['value']:.4f}; plus 120 repeat calls for the flip rate: " \
           f"${extra['usd']:.4f}" in err

    # the first judgement of each cell cached by the plain run: the same figures
    assert main(["card", str(support), "--base-url", url, "--repeat", "3", "--format", "markdown", "--cache-path",
                 str(tmp_path / "once.sqlite")]) == 0
    text = capsys.readouterr().out
    card = _card(support)
    assert card["cost_per_100"]["value"] == pytest.approx(once["value"], rel=1e-6)
    assert card["consistency"]["repeat_calls"]["usd"] == pytest.approx(extra["usd"], rel=1e-4)
    assert f"| cost per 100 samples (grading once) | ${once['value']:.4f} |" in text
    assert f"- cost: plus 120 repeat calls for the flip rate: ${extra['usd']:.4f}" in text


# -- the pass rate ------------------------------------------------------------------------------
def test_the_card_shows_the_pass_rate_corrected_by_the_labels_beside_the_raw_one(support, server, capsys):
    url = server.base_url_openai
    assert main(["calibrate", str(support), "--format", "json", "--base-url", url]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert main(["grade", str(support), "--format", "json", "--base-url", url]) in (0, 1)
    verdicts = [s["verdict"] for s in json.loads(capsys.readouterr().out)["samples"]]
    assert main(["card", str(support), "--format", "markdown", "--base-url", url]) == 0
    text = capsys.readouterr().out

    rates = _card(support)["pass_rate"]
    passed, judged = verdicts.count("pass"), verdicts.count("pass") + verdicts.count("fail")
    assert rates["raw"] == round(passed / judged, 4)
    labelled = Agreement(overall["both_pass"], overall["both_fail"], overall["rubric_pass_human_fail"],
                         overall["rubric_fail_human_pass"])
    expected = corrected_rate(labelled, passed, judged).to_dict()
    assert rates["corrected"] == expected and expected["n_labelled"] == 13 and expected["n_unlabelled"] == 2
    lo, hi = expected["ci"]
    assert (f"| pass rate, raw → corrected | {rates['raw']:.0%} → {expected['value']:.0%} | {lo:.0%} – {hi:.0%} "
            f"| 13 labelled + 2 |") in text
    assert set(rates["criteria"]) == {"resolves-issue", "policy-accurate", "tone", "asks-for-credentials", "short",
                                      "no-boilerplate", "no-internal-links"}
    assert "| met rate · no-internal-links, raw → corrected | " in text
    assert "can't tell — 6 labelled samples; need at least 10 | – | 6 labelled + 9 |" in text


# -- staleness from the labels, samples and judge ---------------------------------------------------
def test_the_card_records_the_samples_and_labels_it_rests_on(support, server):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    rests = _card(support)["rests_on"]
    assert rests["samples"]["n"] == 15 and rests["samples"]["path"] == "support_reply.samples.jsonl"
    assert rests["labels"]["n"] == 13 and rests["labels"]["path"] == "support_reply.labels.yaml"
    assert len(rests["samples"]["hash"]) == len(rests["labels"]["hash"]) == 16
    assert rests["judge"] == {"model": load_rubric(support).judge.model}  # timeout ...: cannot move a verdict


def test_validate_says_the_labels_changed_since_the_card(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    labels = support.with_name("support_reply.labels.yaml")
    text = labels.read_text()

    labels.write_text(text.replace("Refund and plan switch both handled", "Both handled, well"))
    assert _validate(support, capsys)[0] == "fresh"  # a note cannot move agreement

    labels.write_text(text + "\ncancel-subscription:\n  verdict: pass\n")
    state, err = _validate(support, capsys)
    assert state == "stale" and "card is stale: labels changed since the card: 13 → 14 labelled" in err

    labels.write_text(text.replace("verdict: pass", "verdict: fail", 1))
    state, err = _validate(support, capsys)
    assert state == "stale" and "labels changed since the card: 13 labelled, some of them edited" in err
    assert "samples changed" not in err and "judge changed" not in err


def test_validate_says_the_samples_changed_since_the_card(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    samples = support.with_name("support_reply.samples.jsonl")
    text = samples.read_text()
    samples.write_text(text + '{"id": "late-extra", "output": "We refunded you."}\n')
    state, err = _validate(support, capsys)
    assert state == "stale" and "card is stale: samples changed since the card: 15 → 16 samples" in err
    assert "labels changed" not in err

    first = json.loads(text.splitlines()[0])
    samples.write_text(text.replace(json.dumps(first["output"])[1:-1][:40], "Hello there, thanks for writing", 1))
    state, err = _validate(support, capsys)
    assert state == "stale" and "samples changed since the card: 15 samples, some of them edited" in err

    samples.unlink()
    state, err = _validate(support, capsys)
    assert state == "stale" and "samples changed since the card: support_reply.samples.jsonl is gone" in err


def test_an_export_names_the_card_only_while_validate_calls_it_fresh(support, server, capsys, tmp_path):
    """promptfoo's export heads itself with the card while it is fresh; once the samples or the
    labels it rests on change (the rubric and judge as they were), validate calls it stale and the
    export names no card."""
    def exported() -> str:
        out = tmp_path / "eval.yaml"
        assert main(["export", str(support), "--to", "promptfoo", "--no-samples", "-o", str(out)]) == 0
        return out.read_text().splitlines()[0]

    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    assert _validate(support, capsys)[0] == "fresh" and exported().startswith("# rubric card: hash ")
    for name, more in (("support_reply.labels.yaml", "\ncancel-subscription:\n  verdict: pass\n"),
                       ("support_reply.samples.jsonl", '{"id": "late-extra", "output": "We refunded you."}\n')):
        path = support.with_name(name)
        text = path.read_text()
        path.write_text(text + more)
        assert _validate(support, capsys)[0] == "stale"
        assert "rubric card" not in exported()
        path.write_text(text)
        assert _validate(support, capsys)[0] == "fresh" and exported().startswith("# rubric card: hash ")


def test_a_card_written_with_another_judge_than_the_rubric_names_is_stale_at_once(support, server, capsys):
    assert main(["card", str(support), "--judge", "openai:gpt-4.1-nano", "--base-url", server.base_url_openai]) == 0
    assert _card(support)["rests_on"]["judge"] == {"model": "openai:gpt-4.1-nano"}
    state, err = _validate(support, capsys)
    named = load_rubric(support).judge.model
    assert state == "stale" and f"card is stale: judge changed: openai:gpt-4.1-nano → {named}" in err

    assert main(["card", str(support), "--base-url", server.base_url_openai, "--timeout", "9", "--concurrency", "2"]) == 0
    assert _validate(support, capsys)[0] == "fresh"


def test_timeout_concurrency_tags_and_the_description_leave_the_card_fresh(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    text = support.read_text()
    edited = (text.replace("timeout: 60", "timeout: 120").replace("concurrency: 8", "concurrency: 2")
              .replace("max_retries: 3", "max_retries: 1").replace("tags: [axis:completeness]", "tags: [x]")
              .replace("Replies drafted by", "Replies written by"))
    assert edited.count("\n") == text.count("\n") and edited != text
    support.write_text(edited)
    assert _validate(support, capsys) == ("fresh", "")
    named = f"  model: {load_rubric(support).judge.model}\n"
    support.write_text(edited.replace(named, f"{named}  temperature: 0.7\n"))
    state, err = _validate(support, capsys)
    assert state == "stale" and "card is stale: judge temperature changed: 0.0 → 0.7 (card of" in err


def test_validate_reads_no_file_the_card_names_outside_the_rubrics_folder(support, server, capsys, tmp_path):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    card_path = support.with_name("support_reply.card.yaml")
    card = _card(support)
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("not samples at all\n")
    card["rests_on"]["samples"]["path"] = str(outside)
    card_path.write_text(yaml.safe_dump(card, allow_unicode=True))
    assert _validate(support, capsys) == ("fresh", "")  # not read, so not compared (read, it would be stale)

    card["rests_on"]["samples"]["path"] = "support_reply.samples.jsonl"
    card["rests_on"]["labels"]["path"] = "../../.secret/labels.yaml"
    card_path.write_text(yaml.safe_dump(card, allow_unicode=True))
    assert _validate(support, capsys) == ("fresh", "")


def test_a_card_that_records_its_labels_but_not_its_samples_still_compares_the_labels(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    card_path = support.with_name("support_reply.card.yaml")
    card = _card(support)
    del card["rests_on"]["samples"]
    card_path.write_text(yaml.safe_dump(card, allow_unicode=True))
    assert _validate(support, capsys) == ("fresh", "")
    labels = support.with_name("support_reply.labels.yaml")
    labels.write_text(labels.read_text() + "\ncancel-subscription:\n  verdict: fail\n")
    state, err = _validate(support, capsys)
    assert state == "stale" and "labels changed since the card: 13 → 14 labelled" in err


# -- which settings move a verdict (no judge call needed) ---------------------------------------------
BASE = """\
name: tiny
description: a small rubric
pass_threshold: 0.8
judge:
  model: openai:gpt-4o-mini
  temperature: 0
criteria:
  - id: polite
    outcome: The reply is polite
    tags: [tone]
  - id: short
    check: {type: length, max_words: 50}
"""

#: A value for each judge setting that cannot move a verdict (every one listed must be tried here).
NEUTRAL_VALUES = {"timeout": 90, "concurrency": 2, "max_retries": 1, "max_retry_wait": 5, "deadline": 600,
                  "base_url": "http://127.0.0.1:9/v1"}


def _card_for(tmp_path: Path, text: str) -> tuple[dict, Path]:
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    rubric = load_rubric(path)
    return {"rubric": rubric_identity(rubric), "rests_on": {"judge": judge_basis(rubric.judge)}, "date": "x"}, path


def _changes(tmp_path: Path, before: str, after: str) -> list[str]:
    card, path = _card_for(tmp_path, before)
    path.write_text(after)
    return staleness(card, load_rubric(path))


def test_every_setting_listed_as_unable_to_move_a_verdict_leaves_the_card_fresh(tmp_path):
    assert set(NEUTRAL_VALUES) == set(CANNOT_MOVE_A_VERDICT["judge"])
    for key, value in NEUTRAL_VALUES.items():
        after = BASE.replace("  temperature: 0\n", f"  temperature: 0\n  {key}: {json.dumps(value)}\n")
        assert _changes(tmp_path, BASE, after) == [], key
    assert _changes(tmp_path, BASE, BASE.replace("tags: [tone]", "tags: [tone, politeness]")) == []
    assert _changes(tmp_path, BASE, BASE.replace("name: tiny", "name: tiny-renamed")) == []
    assert _changes(tmp_path, BASE, BASE.replace("a small rubric", "a smaller rubric")) == []


@pytest.mark.parametrize(("line", "named"), [
    ("  temperature: 0.5", "judge temperature changed: 0.0 → 0.5"),
    ("  temperature: 0\n  max_tokens: 256", "judge max_tokens changed: 1024 → 256"),
    ("  temperature: 0\n  mode: batch", "judge mode changed: per_criterion → batch"),
    ("  temperature: 0\n  reasoning_effort: low", "judge reasoning_effort changed: none → low"),
    ("  temperature: 0\n  structured_output: json_object", "judge structured_output changed: none → json_object"),
    ("  temperature: 0\n  reuse_batch: false", "judge reuse_batch changed: true → false"),
    ("  temperature: 0\n  prompt: 'Is {criterion} met by {submission}?'",
     "judge prompt changed: none → Is {criterion} met by {submission}?"),
    ("  temperature: 0\n  prompt: '" + "Grade {criterion} on {submission}, " * 4 + "'", "judge prompt changed"),
])
def test_a_setting_that_can_move_a_verdict_is_named_with_its_values(tmp_path, line, named):
    assert _changes(tmp_path, BASE, BASE.replace("  temperature: 0\n", f"{line}\n")) == [named]


def test_a_panel_change_names_the_members(tmp_path):
    panel = BASE.replace("  model: openai:gpt-4o-mini\n", "  panel: [openai:gpt-4o-mini, openai:gpt-4.1-nano]\n")
    three = panel.replace("openai:gpt-4.1-nano]", "openai:gpt-4.1-nano, openai:gpt-4o]")
    assert _changes(tmp_path, panel, three) == [
        "judge changed: panel openai:gpt-4o-mini+openai:gpt-4.1-nano → panel openai:gpt-4o-mini+openai:gpt-4.1-nano+openai:gpt-4o"]
    pooled = panel.replace("  temperature: 0\n", "  temperature: 0\n  aggregate: all\n")
    assert _changes(tmp_path, panel, pooled) == ['judge aggregate changed: none → {"checklist": "all"}']
    member = panel.replace("[openai:gpt-4o-mini, openai:gpt-4.1-nano]",
                           "[openai:gpt-4o-mini, {model: openai:gpt-4.1-nano, temperature: 0.3}]")
    assert _changes(tmp_path, panel, member) == ["judge openai:gpt-4.1-nano temperature changed: unset → 0.3"]
    assert _changes(tmp_path, panel, panel.replace("  temperature: 0\n", "  temperature: 0\n  timeout: 5\n")) == []


@pytest.mark.skipif("ties" not in JudgeSettings.model_fields, reason="judge.ties is not in this build")
def test_the_tie_rule_moves_a_verdict(tmp_path):
    panel = BASE.replace("  model: openai:gpt-4o-mini\n", "  panel: [openai:gpt-4o-mini, openai:gpt-4.1-nano]\n")
    after = panel.replace("  temperature: 0\n", "  temperature: 0\n  ties: met\n")
    assert _changes(tmp_path, panel, after) == ["judge ties changed: against_pass → met"]


def test_the_rubric_settings_that_move_a_verdict_are_named(tmp_path):
    assert _changes(tmp_path, BASE, BASE.replace("pass_threshold: 0.8", "pass_threshold: 0.6")) == [
        "pass_threshold changed"]
    assert _changes(tmp_path, BASE, BASE.replace("The reply is polite", "The reply is warm")) == ["polite changed"]
    assert _changes(tmp_path, BASE, BASE.replace("model: openai:gpt-4o-mini", "model: anthropic:claude-sonnet-4-5")) == [
        "judge changed: openai:gpt-4o-mini → anthropic:claude-sonnet-4-5"]
    # the rubric names no judge: whichever the environment picks is the rubric's
    card, path = _card_for(tmp_path, BASE.replace("  model: openai:gpt-4o-mini\n", ""))
    card["rests_on"]["judge"] = judge_basis(load_rubric(path).judge, ran="openai:gpt-4o-mini")
    assert card["rests_on"]["judge"]["model"] == "openai:gpt-4o-mini"
    assert staleness(card, load_rubric(path)) == []


@pytest.mark.parametrize("rests_on", [
    "not a mapping",
    {"judge": {"panel": [1, {"model": [1]}, None], "temperature": {"a": {1: "b"}}, 3: "x"}},
    {"judge": {"model": None, "prompt": "line one\nline two"}, "samples": "x", "labels": {"n": "a", "hash": 5}},
    {"samples": {"path": "bad\x00path"}, "labels": {"path": ["a list"]}},
])
def test_a_hand_edited_rests_on_never_raises(tmp_path, rests_on, capsys):
    card, path = _card_for(tmp_path, BASE)
    card["rests_on"] = rests_on
    assert isinstance(staleness(card, load_rubric(path), {"samples": {"n": 1, "hash": "x"}}), list)
    card.update(card_version=2, judge=None, judge_detail=None, samples=1, labels={"n": 0, "annotators": [], "against": ""},
                kappa={"value": None, "ci": None, "n": 0, "cant_tell": "x"}, within_humans={"verdict": None, "reason": "x"},
                criteria={}, probes={"cant_tell": "x"}, consistency={"cant_tell": "x"}, warnings=[],
                cost_per_100={"value": None, "ci": None, "n": 0, "cant_tell": "x"})
    card["date"] = "2026-01-01"
    path.with_name("tiny.card.yaml").write_text(yaml.safe_dump(card, allow_unicode=True))
    assert main(["validate", str(path)]) == 0
    assert "Traceback" not in capsys.readouterr().err
