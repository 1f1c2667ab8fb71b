"""Several annotators: the sidecar keeps each one's labels, agreement among them, the judge within it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.human_agreement import alpha_with_ci, human_agreement, krippendorff_alpha
from rubric_studio.core.labels import (
    ADJUDICATED,
    UNNAMED,
    LabelChange,
    apply_change,
    current_annotator,
    load_labels,
)
from tests.calibration.calib_helpers import result

OLD_SIDECAR = """\
# Labelled by the support lead.
s1:
  verdict: pass   # sure about this one
  criteria: {tone: met}
  note: polite and right

# the hard one
s2: fail
"""


def label(path: Path, sample: str, annotator: str, verdict: str | None = None, **cells: str) -> None:
    if verdict is not None:
        apply_change(path, sample, LabelChange("verdict", verdict), annotator)
    for criterion, state in cells.items():
        apply_change(path, sample, LabelChange("cell", state, criterion), annotator)


def test_who_labels_comes_from_the_flag_then_the_environment_then_the_os_user(monkeypatch):
    assert current_annotator("alice", {"RUBRIC_STUDIO_ANNOTATOR": "bob"}) == "alice"
    assert current_annotator(None, {"RUBRIC_STUDIO_ANNOTATOR": " bob "}) == "bob"
    monkeypatch.setattr("getpass.getuser", lambda: "carol")
    assert current_annotator(None, {}) == "carol"
    with pytest.raises(ValueError, match="not an annotator name"):
        current_annotator("a: b", {})


def test_an_old_sidecar_loads_unchanged_and_takes_a_second_annotator_without_losing_anything(tmp_path):
    path = tmp_path / "r.labels.yaml"
    path.write_text(OLD_SIDECAR)
    old = load_labels(path)
    assert not old.problems
    assert old.labels["s1"].verdict == "pass" and old.labels["s2"].verdict == "fail"
    assert set(old.by_annotator["s1"]) == {UNNAMED}
    assert path.read_text() == OLD_SIDECAR  # loading writes nothing

    label(path, "s1", "bob", "fail", tone="unmet")
    text = path.read_text()
    for kept in ("# Labelled by the support lead.", "verdict: pass   # sure about this one", "# the hard one",
                 "note: polite and right"):
        assert kept in text
    both = load_labels(path)
    assert both.by_annotator["s1"][UNNAMED].verdict == "pass"
    assert both.by_annotator["s1"][UNNAMED].criteria == {"tone": "met"}
    assert both.by_annotator["s1"]["bob"].verdict == "fail"
    assert both.by_annotator["s1"]["bob"].criteria == {"tone": "unmet"}
    assert both.by_annotator["s2"] == {UNNAMED: old.labels["s2"]}
    # bob clears his label: the file is the old one again, comments and all
    apply_change(path, "s1", LabelChange("label", None), "bob")
    assert path.read_text() == OLD_SIDECAR


def test_two_annotators_labelling_the_same_cell_are_both_kept(tmp_path):
    path = tmp_path / "r.labels.yaml"
    label(path, "s1", "alice", "pass", tone="met")
    label(path, "s1", "bob", "fail", tone="unmet")
    label(path, "s1", "alice", tone="unmet")  # alice changes her mind: bob's label is untouched
    labels = load_labels(path).by_annotator["s1"]
    assert labels["alice"].verdict == "pass" and labels["alice"].criteria == {"tone": "unmet"}
    assert labels["bob"].verdict == "fail" and labels["bob"].criteria == {"tone": "unmet"}
    before, after = apply_change(path, "s1", LabelChange("verdict", "fail"), "bob")
    assert before.verdict == "fail" and after.verdict == "fail"  # bob's own label, not alice's


def test_adjudication_is_recorded_and_wins_for_consensus(tmp_path):
    path = tmp_path / "r.labels.yaml"
    label(path, "s1", "alice", "pass", tone="met")
    label(path, "s1", "bob", "fail", tone="met")
    tied = load_labels(path)
    assert tied.labels["s1"].verdict is None  # a tie is no consensus
    assert tied.labels["s1"].criteria == {"tone": "met"}  # agreed cells still are
    queue = human_agreement(tied.by_annotator, [], ["tone"])["disagreements"]
    assert queue == [{"id": "s1", "criterion": None, "labels": {"alice": "pass", "bob": "fail"},
                      "adjudicated": None, "consensus": None}]

    label(path, "s1", ADJUDICATED, "fail")
    settled = load_labels(path)
    assert f"{ADJUDICATED}:" in path.read_text()
    assert settled.labels["s1"].verdict == "fail"
    humans = human_agreement(settled.by_annotator, [], ["tone"])
    assert humans["annotators"] == ["alice", "bob"] and humans["adjudicated"] == 1
    assert humans["disagreements"][0]["adjudicated"] == "fail"
    assert humans["disagreements"][0]["consensus"] == "fail"
    # two to one: the majority is the consensus without adjudication
    label(path, "s2", "alice", "pass")
    label(path, "s2", "bob", "pass")
    label(path, "s2", "carol", "fail")
    assert load_labels(path).labels["s2"].verdict == "pass"


def test_kappa_between_two_annotators_is_the_hand_calculation(tmp_path):
    # The 2×2 table of alice (rows) × bob (columns) over 10 samples:
    #                 bob pass   bob fail
    #   alice pass       4          2
    #   alice fail       1          3
    # p_o = (4 + 3) / 10 = 0.7; alice passes 6, bob 5: p_e = (6·5 + 4·5) / 100 = 0.5;
    # kappa = (0.7 − 0.5) / (1 − 0.5) = 0.4
    path = tmp_path / "r.labels.yaml"
    pairs = [("pass", "pass")] * 4 + [("pass", "fail")] * 2 + [("fail", "pass")] + [("fail", "fail")] * 3
    for n, (alice, bob) in enumerate(pairs):
        label(path, f"s{n}", "alice", alice)
        label(path, f"s{n}", "bob", bob)
    humans = human_agreement(load_labels(path).by_annotator, [], [])
    [pair] = humans["pairs"]
    assert (pair["a"], pair["b"], pair["n"]) == ("alice", "bob", 10)
    assert pair["kappa"] == pytest.approx(0.4)
    low, high = pair["ci"]
    assert low < 0.4 < high
    assert humans["alpha"] is None  # alpha is reported for three or more


def test_krippendorffs_alpha_of_three_annotators_is_the_hand_calculation(tmp_path):
    # Items (alice, bob, carol): s1 p p p · s2 p p f · s3 f f f · s4 p f f
    # Coincidences (each ordered pair of an item's values weighs 1/(3 − 1)):
    #   s1: pp 3   s2: pp 1, pf 1, fp 1   s3: ff 3   s4: ff 1, pf 1, fp 1
    #   o_pp = 4, o_ff = 4, o_pf = o_fp = 2; n_p = n_f = 6, n = 12
    # alpha = 1 − (n − 1)·(o_pf + o_fp) / (n_p·n_f + n_f·n_p) = 1 − 11·4 / 72 = 7/18
    path = tmp_path / "r.labels.yaml"
    rows = {"s1": "ppp", "s2": "ppf", "s3": "fff", "s4": "pff"}
    for sample, verdicts in rows.items():
        for name, verdict in zip(("alice", "bob", "carol"), verdicts, strict=True):
            label(path, sample, name, {"p": "pass", "f": "fail"}[verdict])
    humans = human_agreement(load_labels(path).by_annotator, [], [])
    assert humans["alpha"]["value"] == pytest.approx(7 / 18, abs=1e-4)
    assert humans["alpha"]["n"] == 4
    assert len(humans["pairs"]) == 3


def test_krippendorffs_alpha_matches_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units with
    # missing values; nominal alpha 0.743, interval alpha 0.849.
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
              [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    units = [[v for v in unit if v is not None] for unit in zip(*coders, strict=True)]
    assert krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "interval") == pytest.approx(0.849, abs=5e-4)
    first, again = alpha_with_ci(units), alpha_with_ci(units)
    assert first == again  # the bootstrap is seeded
    assert first["ci"][0] <= first["value"] <= first["ci"][1]


HUMANS = {  # three annotators over 12 samples; each pair disagrees on a few
    "alice": "PPPPPPFFFFFF",
    "bob":   "PPPPPFFFFFFP",  # noqa: E241
    "carol": "PPPPPPPFFFFF",
}


def _three_annotators(path: Path) -> None:
    for name, verdicts in HUMANS.items():
        for n, verdict in enumerate(verdicts):
            label(path, f"s{n}", name, "pass" if verdict == "P" else "fail")


def _judge(verdicts: str) -> list:
    return [result(f"s{n}", "pass" if v == "P" else "fail") for n, v in enumerate(verdicts)]


def test_the_judge_within_the_humans_agreement_both_ways(tmp_path):
    path = tmp_path / "r.labels.yaml"
    _three_annotators(path)
    by_annotator = load_labels(path).by_annotator
    # a judge that agrees like a human: it labels exactly as alice does
    like_alice = human_agreement(by_annotator, _judge(HUMANS["alice"]), [])
    kappas = [p["kappa"] for p in like_alice["pairs"]]
    assert like_alice["judge_vs"]["alice"]["kappa"] == pytest.approx(1.0)
    assert like_alice["within_humans"]["human_kappa_min"] == pytest.approx(min(kappas))
    assert like_alice["judge_within_humans"] is True
    # a judge worse than the humans: it fails what alice passes
    contrary = human_agreement(by_annotator, _judge(HUMANS["alice"].translate(str.maketrans("PF", "FP"))), [])
    assert contrary["within_humans"]["judge_kappa_mean"] < min(kappas)
    assert contrary["judge_within_humans"] is False
    # judge vs the consensus (majority of three): the consensus of s5 is fail (bob, carol... see HUMANS)
    consensus = "".join("P" if [HUMANS[n][i] for n in HUMANS].count("P") >= 2 else "F" for i in range(12))
    assert human_agreement(by_annotator, _judge(consensus), [])["judge_vs_consensus"]["kappa"] == 1.0


def test_too_few_shared_items_is_not_enough_overlap(tmp_path):
    path = tmp_path / "r.labels.yaml"
    for n in range(3):  # alice and bob share 3 samples (fewer than MIN_OVERLAP)
        label(path, f"s{n}", "alice", "pass" if n else "fail")
        label(path, f"s{n}", "bob", "pass" if n else "fail")
    humans = human_agreement(load_labels(path).by_annotator, _judge("FPP"), [])
    assert humans["judge_within_humans"] is None
    assert humans["within_humans"]["reason"].startswith("not enough overlap")


RUBRIC = """\
name: replies
pass_threshold: 0.5
criteria:
  - id: short
    check: {type: length, max_words: 5}
"""


def _cli_files(tmp_path: Path) -> Path:
    rubric = tmp_path / "replies.yaml"
    rubric.write_text(RUBRIC)
    lines = [json.dumps({"id": f"s{n}", "output": "ok" if n % 2 else "far too many words in this reply here"})
             for n in range(8)]
    (tmp_path / "replies.samples.jsonl").write_text("\n".join(lines) + "\n")
    path = tmp_path / "replies.labels.yaml"
    for n in range(8):  # the check passes odd samples; alice agrees everywhere, bob on all but s0, s1
        label(path, f"s{n}", "alice", "pass" if n % 2 else "fail", short="met" if n % 2 else "unmet")
        label(path, f"s{n}", "bob", "pass" if (n % 2) != (n < 2) else "fail")
    return rubric


def test_calibrate_json_has_the_humans_section(tmp_path, capsys):
    rubric = _cli_files(tmp_path)
    assert main(["calibrate", str(rubric), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    humans = data["humans"]
    assert humans["annotators"] == ["alice", "bob"]
    [pair] = humans["pairs"]
    assert set(pair) == {"a", "b", "kappa", "ci", "n"} and pair["n"] == 8
    assert pair["kappa"] == pytest.approx(0.5)  # 3 both pass, 3 both fail, 1 + 1 apart: (0.75 − 0.5) / 0.5
    assert humans["alpha"] is None
    assert set(humans["judge_vs"]) == {"alice", "bob"}
    # 8 of 8 agree, p_e 0.5: Wilson's lower bound 8/(8 + z²) = 0.6756 → kappa (0.6756 − 0.5)/0.5 = 0.3512
    assert humans["judge_vs"]["alice"] == {"kappa": 1.0, "ci": [0.3512, 1.0], "n": 8}
    assert set(humans["judge_vs_consensus"]) == {"kappa", "ci", "n"}
    assert humans["judge_within_humans"] is True
    assert set(humans["per_criterion"]) == {"short"}
    assert humans["per_criterion"]["short"]["judge_vs"]["alice"]["n"] == 8
    assert [item["id"] for item in humans["disagreements"]] == ["s0", "s1"]
    # judge-vs-human figures compare with the consensus: s0 and s1 are ties, so 6 verdicts compared
    assert data["overall"]["n"] == 6

    assert main(["calibrate", str(rubric), "--format", "json", "--annotator", "bob"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["n"] == 8
    assert main(["calibrate", str(rubric), "--annotator", "dave"]) == 2
    assert "no labels by dave" in capsys.readouterr().err


def test_calibrate_table_shows_the_humans_and_the_adjudication_queue(tmp_path, capsys):
    rubric = _cli_files(tmp_path)
    label(tmp_path / "replies.labels.yaml", "s0", ADJUDICATED, "fail")
    assert main(["calibrate", str(rubric)]) == 0
    out = capsys.readouterr().out
    assert "humans: alice, bob; 1 samples adjudicated" in out
    assert "alice vs bob: kappa 0.50" in out
    assert "judge within humans: yes" in out
    assert "to adjudicate: 1 of 2" in out
    assert "s0 verdict: alice fail · bob pass → adjudicated fail" in out
    assert "s1 verdict: alice pass · bob fail (not adjudicated)" in out


def test_the_html_report_shows_the_annotators_agreement(tmp_path):
    rubric = _cli_files(tmp_path)
    page = tmp_path / "run.html"
    labels = tmp_path / "replies.labels.yaml"
    assert main(["grade", str(rubric), "--labels", str(labels), "--format", "html", "-o", str(page)]) == 1
    html = page.read_text()
    assert "Agreement among annotators" in html
    assert "alice vs bob: kappa 0.50" in html
    assert "s1 verdict: alice pass · bob fail (not adjudicated)" in html
