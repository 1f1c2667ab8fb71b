"""The card records the probes as they were decided: one decision per kind, pooled over criteria, the
kinds that can't tell with why, and a judge that never changes its verdict named — through ``card
--probe-kinds`` with the scripted judges of tests/engine/test_probe_decisions.py."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from rubric_studio.cli import main
from tests.engine.test_probe_decisions import question, server, write_project  # noqa: F401 (a fixture)

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs/reference/schemas/card.schema.json").read_text())


def card(project: Path, capsys, *extra: str) -> tuple[dict, str]:
    """(the card written beside the rubric, the Markdown printed)."""
    code = main(["card", str(project / "r.yaml"), str(project / "s.jsonl"), "--format", "markdown", *extra])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err, captured.err
    written = yaml.safe_load((project / "r.card.yaml").read_text())
    jsonschema.validate(written, SCHEMA)
    return written, " ".join(captured.out.split())


def test_a_kind_beyond_noise_pooled_over_criteria_is_the_cards_finding(tmp_path, server, capsys):  # noqa: F811
    """The length-biased judge: padding turns 16 of 37 unmet cells met, the noise none. Only refund
    (7 of 10) shows on its own, yet the finding is the kind, with what it moved over all four."""
    written, markdown = card(write_project(tmp_path), capsys, "--probe-kinds", "verbosity,paraphrase",
                             "--judge", "openai:judge-long")  # fmt: skip
    probes = written["probes"]
    assert [f["kind"] for f in probes["findings"]] == ["verbosity"]
    verbosity = probes["findings"][0]
    assert verbosity["counted"] == "unmet → met" and verbosity["criteria"] == ["refund"]
    assert (verbosity["moved"]["n"], verbosity["moved"]["value"]) == (37, round(16 / 37, 4))
    assert verbosity["noise_moved"]["value"] == 0 and verbosity["noise_moved"]["ci"][1] > 0
    assert verbosity["test"]["p_value"] == pytest.approx(2**-16, abs=1e-6) and verbosity["test"]["level"] == 0.05
    assert verbosity["reads"].startswith("beyond this judge's noise: 16 of 37 unmet → met, 0 of 37 under the noise")
    assert probes["cant_tell_kinds"] == [] and "constant" not in probes  # paraphrase: decided, not beyond
    assert "- verbosity: beyond this judge's noise: 16 of 37 unmet → met" in markdown
    assert "on its own on refund" in markdown and "no finding" not in markdown


def test_cant_tell_and_a_constant_judge_are_carried_not_read_as_no_finding(tmp_path, server, capsys):  # noqa: F811
    (tmp_path / "few").mkdir()
    few = write_project(tmp_path / "few", samples=7, subjects=("refund", "bill"))
    written, markdown = card(few, capsys, "--probe-kinds", "paraphrase", "--judge", "openai:judge-right")
    reason = "can't tell with 14 cells: a shift below 35 points would not show (0 of 14 cells flipped, 0 of 14 under the noise)"
    assert written["probes"]["findings"] == [] and written["probes"]["cant_tell_kinds"] == [
        {"kind": "paraphrase", "why": reason}]
    assert f"- probes · paraphrase: can't tell — {reason}" in markdown
    assert "no finding" not in markdown

    (tmp_path / "yes").mkdir()
    yes = write_project(tmp_path / "yes", samples=21, subjects=("refund", "bill"), inputs=question)
    written, markdown = card(yes, capsys, "--probe-kinds", "verbosity,leniency", "--judge", "openai:judge-yes",
                             "--batch")  # fmt: skip
    named = "met 42 of 42 cells: probes cannot see a bias in a judge that never changes its verdict"
    probes = written["probes"]
    assert probes["constant"] == named
    assert probes["cant_tell_kinds"] == [{"kind": "verbosity", "why": named}]
    assert [(f["kind"], f["criteria"]) for f in probes["findings"]] == [("leniency", ["refund", "bill"])]
    assert markdown.count(named) == 1 and "no finding" not in markdown


def test_a_probe_run_with_every_kind_decided_and_none_beyond_says_no_finding(tmp_path, server, capsys):  # noqa: F811
    written, markdown = card(write_project(tmp_path), capsys, "--probe-kinds", "paraphrase", "--judge", "openai:judge-right")
    assert written["probes"]["findings"] == [] and written["probes"]["cant_tell_kinds"] == []
    assert "- probes (paraphrase): no finding beyond this judge's own noise" in markdown
