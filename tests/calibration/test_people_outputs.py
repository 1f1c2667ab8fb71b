"""What the reports say about people disagreeing: ties, the adjudication count, many annotators,
and no stray control pictures (␊ …) anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rubric_studio.cli import main
from rubric_studio.core.human_agreement import LOWEST_NAMED
from rubric_studio.core.labels import ADJUDICATED, LabelChange, apply_change

RUBRIC = """\
name: replies
pass_threshold: 0.5
criteria:
  - id: short
    check: {type: length, max_words: 5}
"""
#: U+2400–U+243F: the pictures of control characters a renderer shows for a raw newline, tab …
CONTROL_PICTURES = re.compile("[\u2400-\u243f]")


def _files(tmp_path: Path, annotators: dict[str, str]) -> Path:
    """A rubric, 8 samples (the check passes odd ones) and each annotator's verdicts (``P`` / ``F`` / ``-``)."""
    rubric = tmp_path / "replies.yaml"
    rubric.write_text(RUBRIC)
    lines = [json.dumps({"id": f"s{n}", "output": "ok" if n % 2 else "far too many words in this reply here"})
             for n in range(8)]
    (tmp_path / "replies.samples.jsonl").write_text("\n".join(lines) + "\n")
    sidecar = tmp_path / "replies.labels.yaml"
    for name, verdicts in annotators.items():
        for n, verdict in enumerate(verdicts):
            if verdict != "-":
                apply_change(sidecar, f"s{n}", LabelChange("verdict", "pass" if verdict == "P" else "fail"), name)
    return rubric


TWO = {"alice": "FPFPFPFP", "bob": "PFFPFPFP"}  # s0 and s1: a 1–1 tie each


def _outputs(tmp_path: Path, rubric: Path, capsys) -> dict[str, str]:
    labels = str(rubric.with_name("replies.labels.yaml"))
    found = {}
    for name, argv in {
        "calibrate table": ["calibrate", str(rubric)],
        "calibrate json": ["calibrate", str(rubric), "--format", "json"],
        "grade table": ["grade", str(rubric), "--labels", labels],
        "grade markdown": ["grade", str(rubric), "--labels", labels, "--format", "markdown"],
    }.items():
        main(argv)
        found[name] = capsys.readouterr().out
    page = tmp_path / "run.html"
    main(["grade", str(rubric), "--labels", labels, "--format", "html", "-o", str(page)])
    capsys.readouterr()
    found["grade html"] = page.read_text()
    return found


def test_no_output_holds_a_control_picture(tmp_path, capsys):
    rubric = _files(tmp_path, {**TWO, "carol": "FPFPFPF-"})
    apply_change(tmp_path / "replies.labels.yaml", "s0", LabelChange("verdict", "fail"), ADJUDICATED)
    outputs = _outputs(tmp_path, rubric, capsys)
    assert "humans:" in outputs["calibrate table"]  # the section that had a ␊ before it
    for name, text in outputs.items():
        stray = CONTROL_PICTURES.search(text)
        assert stray is None, f"{name}: {stray.group()!r} (U+{ord(stray.group()):04X}) at {stray.start()}"


def test_a_tie_between_people_is_shown_as_a_tie_not_as_no_label(tmp_path, capsys):
    rubric = _files(tmp_path, TWO)
    outputs = _outputs(tmp_path, rubric, capsys)
    for name in ("grade table", "grade markdown", "grade html"):
        text = outputs[name]
        assert text.count("⋈ tie") >= 2, name  # s0 and s1
    s0_row = next(line for line in outputs["grade markdown"].splitlines() if line.startswith("| s0 "))
    assert s0_row.rstrip().endswith("| ⋈ tie |")
    assert "⋈ tie: annotators split evenly" in outputs["grade table"]
    assert '<td class="verdict tie"' in outputs["grade html"]


def test_the_adjudication_count_means_the_open_ones_in_every_output(tmp_path, capsys):
    rubric = _files(tmp_path, TWO)
    apply_change(tmp_path / "replies.labels.yaml", "s0", LabelChange("verdict", "fail"), ADJUDICATED)
    outputs = _outputs(tmp_path, rubric, capsys)
    assert "1 to adjudicate (1 of 2 disagreements between annotators settled)" in outputs["calibrate table"]
    assert "<h3>To adjudicate (1)</h3>" in outputs["grade html"]
    assert "1 to adjudicate (1 of 2 disagreements between annotators settled)" in outputs["grade html"]
    humans = json.loads(outputs["calibrate json"])["humans"]
    assert [item["adjudicated"] for item in humans["disagreements"]] == ["fail", None]


def test_many_annotators_are_summarised_with_the_lowest_pairs_named(tmp_path, capsys):
    rng_rows = ["FPFPFPFP", "PFFPFPFP", "FPPPFPFP", "FPFFFPFP", "FPFPPPFP", "FPFPFFFP",
                "FPFPFPPP", "FPFPFPFF", "PPFPFPFP", "FFFPFPFP", "FPFPFPFP", "PFPFPFPF"]
    rubric = _files(tmp_path, {f"p{n:02d}": row for n, row in enumerate(rng_rows)})  # 66 pairs
    main(["calibrate", str(rubric), "--format", "json"])
    humans = json.loads(capsys.readouterr().out)["humans"]
    summary = humans["pairs_summary"]
    assert summary["pairs"] == 66 and summary["listed"] == "lowest"
    assert len(humans["pairs"]) == LOWEST_NAMED
    assert humans["pairs"][0]["kappa"] == -1.0  # p11 labels every sample opposite to p00 (and p10)
    assert {humans["pairs"][0]["a"], humans["pairs"][0]["b"]} == {"p00", "p11"}
    assert {humans["pairs"][1]["a"], humans["pairs"][1]["b"]} == {"p10", "p11"}
    assert summary["kappa_min"] == -1.0 and summary["kappa_max"] == 1.0
    main(["calibrate", str(rubric)])
    table = capsys.readouterr().out
    assert "66 pairs of annotators share an item; 66 have a kappa: min -1.00 · median" in table
    assert "p00 vs p11: kappa -1.00" in table and "p10 vs p11: kappa -1.00" in table
    assert "humans: 12 annotators (p00, p01," in table
    assert table.count(" vs ") < 66  # not every pair
