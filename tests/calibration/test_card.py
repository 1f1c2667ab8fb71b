"""``rubric-studio card``: the bundled support_reply rubric against the fake LLM, its figures equal
``calibrate``'s, its schema, its Markdown, and ``validate``'s stale-card warning."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import jsonschema
import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.core.card import cost_figure, rate_figure
from rubric_studio.core.intervals import Z95
from rubric_studio.core.loading import load_rubric
from tests.fakellm import FakeLLM

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs/reference/schemas/card.schema.json").read_text())


@pytest.fixture
def support(bundled):
    return bundled / "support_reply" / "support_reply.yaml"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLM() as fake:
        yield fake


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _card(rubric: Path) -> dict:
    return yaml.safe_load(rubric.with_name(f"{rubric.stem}.card.yaml").read_text())


def test_the_card_holds_calibrates_figures_and_grades_hash(support, server, capsys):
    url = server.base_url_openai
    assert main(["calibrate", str(support), "--format", "json", "--base-url", url]) == 0
    calibrated = _json(capsys)
    assert main(["grade", str(support), "--format", "json", "--base-url", url]) in (0, 1)
    graded = _json(capsys)
    assert main(["card", str(support), "--base-url", url]) == 0
    assert "wrote " in capsys.readouterr().err
    card = _card(support)
    jsonschema.validate(card, SCHEMA)
    assert card["rubric"]["hash"] == graded["rubric"]["hash"]
    assert card["judge"] == load_rubric(support).judge.model
    overall = calibrated["overall"]
    assert card["labels"]["n"] == overall["n"] == 13
    assert card["kappa"] == {"value": overall["kappa"], "ci": overall["kappa_ci"], "n": 13}
    assert card["samples"] == len(graded["samples"])
    for cid, entry in calibrated["criteria"].items():
        figure = card["criteria"][cid]["kappa"]
        assert figure["n"] == entry["n"]
        if figure["value"] is not None:
            assert (figure["value"], figure["ci"]) == (entry["kappa"], entry["kappa_ci"])
    # no-boilerplate's human labels are all "met": its kappa can't be told, and the card says why
    assert "all one class" in card["criteria"]["no-boilerplate"]["kappa"]["cant_tell"]
    assert card["within_humans"]["verdict"] is None and "not enough overlap" in card["within_humans"]["cant_tell"]
    cost = card["cost_per_100"]
    assert cost["n"] == len(graded["samples"])
    # every reply came from the cache by now: the card prices them as the run that paid for them (calibrate's)
    assert graded["usage"]["cost_usd"] == 0
    assert cost["value"] == pytest.approx(calibrated["usage"]["cost_usd"] / len(graded["samples"]) * 100, rel=1e-3)
    assert cost["ci"][0] <= cost["value"] <= cost["ci"][1]
    assert "cant_tell" in card["probes"] and "cant_tell" in card["consistency"]


def test_json_format_prints_the_card_it_writes_and_repeat_adds_the_flip_rate(support, server, capsys):
    assert main(["card", str(support), "--format", "json", "--repeat", "2", "--base-url", server.base_url_openai]) == 0
    printed = _json(capsys)
    jsonschema.validate(printed, SCHEMA)
    assert printed == _card(support)
    flip = printed["consistency"]["flip_rate"]
    judged_cells = 4 * printed["samples"]  # the rubric's four judge criteria, each cell judged twice
    assert flip["n"] == judged_cells and flip["value"] == 0.0  # the fake judge answers the same each time
    assert flip["ci"][0] == 0.0 and flip["ci"][1] > 0


def test_markdown_prints_every_figure_with_its_interval_and_n(support, server, capsys):
    assert main(["card", str(support), "--format", "markdown", "--base-url", server.base_url_openai]) == 0
    text = capsys.readouterr().out
    card = _card(support)
    kappa = card["kappa"]
    assert f"| κ vs the consensus | {kappa['value']:.2f} | {kappa['ci'][0]:.2f} – {kappa['ci'][1]:.2f} | 13 |" in text
    tone = card["criteria"]["tone"]["kappa"]
    assert f"| κ · tone | {tone['value']:.2f} | {tone['ci'][0]:.2f} – {tone['ci'][1]:.2f} | {tone['n']} |" in text
    assert f"hash `{card['rubric']['hash']}`" in text
    assert "| κ · no-boilerplate | can't tell — the human labels are all one class" in text
    assert "cost per 100 samples (grading once) | $" in text
    assert "consistency: can't tell — each cell was judged once" in text


def test_validate_names_the_criterion_whose_outcome_changed_since_the_card(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    date = _card(support)["date"]
    capsys.readouterr()
    assert main(["validate", str(support)]) == 0
    fresh = capsys.readouterr()
    assert "card is stale" not in fresh.out + fresh.err
    assert main(["validate", str(support), "--format", "json"]) == 0
    assert _json(capsys)["files"][0]["card"] == "fresh"

    text = support.read_text()
    edited = text.replace("outcome: Warm, professional tone that acknowledges the customer's situation",
                          "outcome: Warm, professional tone that names the customer's situation")
    assert edited != text
    support.write_text(edited)
    assert main(["validate", str(support)]) == 0  # a warning, not an error
    err = capsys.readouterr().err
    assert f"warning: card is stale: tone changed (card of {date})" in err
    assert "resolves-issue" not in err and "judge changed" not in err
    assert main(["validate", str(support), "--format", "json"]) == 0
    entry = _json(capsys)["files"][0]
    assert entry["card"] == "stale"
    assert any("tone changed" in p["message"] and p["severity"] == "warning" for p in entry["problems"])


def test_validate_says_when_the_judge_changed_since_the_card(support, server, capsys):
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    named = load_rubric(support).judge.model
    support.write_text(support.read_text().replace(f"model: {named}", "model: openai:gpt-4o-2024-08-06"))
    capsys.readouterr()
    assert main(["validate", str(support)]) == 0
    err = capsys.readouterr().err
    assert f"card is stale: judge changed: {named} → openai:gpt-4o-2024-08-06 (card of" in err and "tone" not in err


def test_an_unreadable_card_is_an_error_at_its_place_not_a_traceback(support, capsys):
    support.with_name("support_reply.card.yaml").write_text("just: [a, list\n")
    assert main(["validate", str(support)]) == 2
    err = capsys.readouterr().err
    assert "support_reply.card.yaml:2:1: not a card" in err and "Traceback" not in err


def test_three_labels_cannot_tell_kappa(tmp_path, server, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: tiny\njudge: {model: openai:gpt-4o-mini}\ncriteria:\n"
                      "  - id: short\n    check: {type: length, max_words: 3}\n")
    (tmp_path / "r.samples.jsonl").write_text(
        '{"id": "a", "output": "one two three four five", "label": "fail"}\n'
        '{"id": "b", "output": "ok", "label": "pass"}\n{"id": "c", "output": "fine then", "label": "fail"}\n')
    assert main(["card", str(rubric), "--format", "markdown", "--base-url", server.base_url_openai]) == 0
    text = capsys.readouterr().out
    card = _card(rubric)
    jsonschema.validate(card, SCHEMA)
    assert card["kappa"] == {"value": None, "ci": None, "n": 3,
                             "cant_tell": "fewer than 10 samples labelled and judged (n = 3)"}
    assert "| κ vs the consensus | can't tell — fewer than 10 samples labelled and judged (n = 3) | – | 3 |" in text


def test_bad_probe_kinds_are_a_usage_error(support, capsys):
    assert main(["card", str(support), "--probe-kinds", "loudness"]) == 2
    err = capsys.readouterr().err
    assert "loudness" in err and "Traceback" not in err
    assert not support.with_name("support_reply.card.yaml").exists()


def test_cost_per_100_and_its_interval_by_hand():
    # $0.03 over three samples whose judge tokens are 1:1:2 → shares $0.0075, $0.0075, $0.015
    fig = cost_figure(0.03, [100, 100, 200])
    shares = [0.0075, 0.0075, 0.015]
    half = Z95 * statistics.stdev(shares) / math.sqrt(3)
    assert fig["value"] == pytest.approx(1.0)  # $0.01 a sample, $1 per 100
    assert fig["ci"] == pytest.approx([(0.01 - half) * 100, (0.01 + half) * 100], abs=1e-6)
    assert fig["n"] == 3
    assert cost_figure(None, [1, 2])["cant_tell"].startswith("the judge model has no known price")
    assert cost_figure(0.01, [5])["cant_tell"] == "fewer than 2 samples graded"
    assert rate_figure(0, 0, "judged cells") == {"value": None, "ci": None, "n": 0, "cant_tell": "no judged cells"}


def test_a_promptfoo_export_names_a_fresh_card_in_a_comment(support, server, capsys, tmp_path):
    assert main(["export", str(support), "--to", "promptfoo", "-o", str(tmp_path / "before.yaml")]) == 0
    assert "rubric card" not in (tmp_path / "before.yaml").read_text()
    assert main(["card", str(support), "--base-url", server.base_url_openai]) == 0
    card = _card(support)
    assert main(["export", str(support), "--to", "promptfoo", "-o", str(tmp_path / "after.yaml")]) == 0
    kappa = card["kappa"]
    first = (tmp_path / "after.yaml").read_text().splitlines()[0]
    assert first == (f"# rubric card: hash {card['rubric']['hash']}, κ {kappa['value']:.2f} [{kappa['ci'][0]:.2f}, "
                     f"{kappa['ci'][1]:.2f}] (n=13), {card['date']} (support_reply.card.yaml)")
    assert yaml.safe_load((tmp_path / "after.yaml").read_text()) == yaml.safe_load((tmp_path / "before.yaml").read_text())
