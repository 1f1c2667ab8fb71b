"""``rubric-studio labels import|export``: CSV / JSON Lines round trips, bad input, a recorded Label Studio export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label, LabelChange, apply_changes, load_labels

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "fixtures" / "label_studio"

SIDECAR = """\
# team labels
refund-within-window:
  verdict: pass
  score: 9
  criteria: {resolves-issue: met, tone: met}
  criterion_scores: {tone: 8}
  annotator: alice
  annotators:
    bob: {verdict: fail, criteria: {tone: unmet}, note: "=SUM(A1) looks like a formula, \\"quoted\\", and\\nsplit"}
duplicate-charge:
  verdict: pass
  criteria: {policy-accurate: unmet, short: met}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path, dirs_exist_ok=True)
    (tmp_path / "support_reply.labels.yaml").write_text(SIDECAR, encoding="utf-8")
    return tmp_path / "support_reply.yaml"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_then_import_is_lossless(project, fmt):
    out = project.with_name(f"labels.{fmt}")
    assert main(["labels", "export", str(project), "--to", fmt, "-o", str(out)]) == 0
    fresh = project.with_name("fresh.labels.yaml")
    assert main(["labels", "import", str(project), str(out), "--labels", str(fresh)]) == 0
    assert load_labels(fresh).by_annotator == load_labels(project.with_name("support_reply.labels.yaml")).by_annotator
    again = project.with_name(f"again.{fmt}")
    assert main(["labels", "export", str(project), "--to", fmt, "--labels", str(fresh), "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


def test_csv_has_one_row_per_sample_and_annotator(project, capsys):
    assert main(["labels", "export", str(project), "--to", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("id,annotator,verdict,score,note,resolves-issue,policy-accurate,tone,")
    assert lines[1].startswith("refund-within-window,alice,pass,9,,met,,8,")  # the analytic cell's score
    assert lines[2].startswith("refund-within-window,bob,fail,,\"'=SUM(A1)")  # a formula is quoted
    unlabelled = [line for line in lines if line.startswith("refund-late-request,")]
    assert unlabelled == ["refund-late-request" + "," * (len(lines[0].split(",")) - 1)]


def test_import_merges_per_annotator_and_fills_in_the_annotator(project):
    sheet = project.with_name("sheet.csv")
    sheet.write_text("id,verdict,tone\nrefund-within-window,fail,3\nduplicate-charge,,\n", encoding="utf-8")
    assert main(["labels", "import", str(project), str(sheet), "--annotator", "carol"]) == 0
    labels = load_labels(project.with_name("support_reply.labels.yaml")).by_annotator
    assert labels["refund-within-window"]["carol"] == Label("fail", None, {"tone": "unmet"}, None, {"tone": 3.0})
    assert labels["refund-within-window"]["alice"].criterion_scores == {"tone": 8.0}  # untouched
    assert labels["refund-within-window"]["bob"].verdict == "fail"
    assert "carol" not in labels["duplicate-charge"]  # an empty row is skipped


@pytest.mark.parametrize(("text", "where", "what"), [
    ("id,annotator,verdict,tonne\nx,al,pass,met\n", "sheet.csv:1:22", "unknown column 'tonne'"),
    ("id,annotator,verdict\nx,al,pas\n", "sheet.csv:2:6", "verdict: expected pass, fail or nothing, got 'pas'"),
    ("id,annotator,tone\nx,al,met\ny,al,11\n", "sheet.csv:3:6", "tone: expected met, unmet, a score from 0 to 10"),
    ("id,annotator,verdict\nx,al,pass\nx,al,fail\n", "sheet.csv:3:1", "a second row for sample 'x' by 'al'"),
    ('id,annotator,note\nx,al,"never closed\n', "sheet.csv:2:6", "a quoted cell is never closed"),
    ("annotator,verdict\nal,pass\n", "sheet.csv:1:1", "expected an id column"),
])
def test_bad_csv_names_the_place_and_writes_nothing(project, capsys, text, where, what):
    sheet = project.with_name("sheet.csv")
    sheet.write_text(text, encoding="utf-8")
    sidecar = project.with_name("support_reply.labels.yaml")
    assert main(["labels", "import", str(project), str(sheet)]) == 2
    err = capsys.readouterr().err
    assert f"{sheet.parent / where}: " in err and what in err and "Traceback" not in err
    assert sidecar.read_text(encoding="utf-8") == SIDECAR


def test_bad_jsonl_names_line_and_column(project, capsys):
    sheet = project.with_name("rows.jsonl")
    sheet.write_text('{"id": "x", "annotator": "al", "verdict": "pass"}\n{"id": "y", "tonne": "met"}\n',
                     encoding="utf-8")
    assert main(["labels", "import", str(project), str(sheet)]) == 2
    assert f"{sheet}:2:13: unknown column 'tonne'" in capsys.readouterr().err
    sheet.write_text('{"id": "x", "verdict": "pass"\n', encoding="utf-8")
    assert main(["labels", "import", str(project), str(sheet)]) == 2
    assert f"{sheet}:1:30: not valid JSON" in capsys.readouterr().err
    assert project.with_name("support_reply.labels.yaml").read_text(encoding="utf-8") == SIDECAR


def test_label_studio_export_writes_a_config_and_tasks(project):
    assert main(["labels", "export", str(project), "--to", "label-studio", "-o", str(project.parent / "ls")]) == 0
    config = (project.parent / "ls" / "support_reply.label-studio.xml").read_text(encoding="utf-8")
    assert '<Choices name="criterion:resolves-issue" toName="output"' in config
    assert '<Number name="criterion:tone" toName="output" min="0" max="10"/>' in config
    assert 'name="criterion:short"' not in config  # a deterministic check is not labelled
    assert '<Choices name="verdict"' in config and '<TextArea name="note"' in config
    tasks = json.loads((project.parent / "ls" / "support_reply.tasks.json").read_text(encoding="utf-8"))
    assert len(tasks) == 15 and tasks[0]["data"]["sample_id"] == "refund-within-window"
    assert tasks[0]["data"]["output"].startswith("Hi Dana")


def test_recorded_label_studio_export_maps_users(project, capsys):
    sidecar = project.with_name("ls.labels.yaml")
    export = RECORDED / "support_reply.export.json"
    assert main(["labels", "import", str(project), str(export), "--labels", str(sidecar),
                 "--users", str(RECORDED / "users.json")]) == 0
    labels = load_labels(sidecar).by_annotator
    assert labels["refund-within-window"]["admin@example.com"] == Label(
        "pass", None, {"resolves-issue": "met", "tone": "met"}, "clear and kind", {"tone": 8.0})
    assert labels["refund-within-window"]["carol@example.com"].criterion_scores == {"tone": 3.0}
    assert set(labels["refund-late-request"]) == {"carol@example.com"}  # the admin's was cancelled
    assert "2 annotators (admin@example.com, carol@example.com)" in capsys.readouterr().err
    bare = project.with_name("bare.labels.yaml")
    assert main(["labels", "import", str(project), str(export), "--labels", str(bare)]) == 0
    assert set(load_labels(bare).by_annotator["refund-within-window"]) == {"user-1", "user-3"}


def test_label_studio_user_objects_and_unmapped_parts_are_warned(project, capsys):
    tasks = json.loads((RECORDED / "support_reply.export.json").read_text(encoding="utf-8"))
    tasks[0]["annotations"][0]["completed_by"] = {"id": 1, "email": "dana@example.com"}
    tasks[0]["annotations"][0]["result"].append({"from_name": "mood", "type": "choices", "value": {"choices": ["x"]}})
    tasks.append({"id": 99, "data": {"text": "not ours"}, "annotations": []})
    export = project.with_name("export.json")
    export.write_text(json.dumps(tasks), encoding="utf-8")
    sidecar = project.with_name("ls.labels.yaml")
    assert main(["labels", "import", str(project), str(export), "--labels", str(sidecar)]) == 0
    err = capsys.readouterr().err
    assert "task 99: no data.sample_id" in err and "control 'mood' is not one of the rubric's" in err
    assert "dana@example.com" in load_labels(sidecar).by_annotator["refund-within-window"]


def test_apply_changes_writes_many_labels_once_and_keeps_others(tmp_path):
    sidecar = tmp_path / "r.labels.yaml"
    sidecar.write_text("# kept\ns1:\n  verdict: pass  # mine\n  annotator: alice\n", encoding="utf-8")
    changed = apply_changes(sidecar, [("s1", LabelChange("verdict", "fail"), "bob"),
                                      ("s1", LabelChange("cell_score", 7, "tone"), "bob"),
                                      ("s2", LabelChange("note", "hi"), "bob"),
                                      ("s3", LabelChange("verdict", None), "bob")])
    assert changed == 2
    text = sidecar.read_text(encoding="utf-8")
    assert text.startswith("# kept\n") and "verdict: pass  # mine" in text and "s3" not in text
    labels = load_labels(sidecar).by_annotator
    assert labels["s1"]["bob"] == Label("fail", criterion_scores={"tone": 7.0})
    assert labels["s1"]["alice"] == Label("pass") and labels["s2"] == {"bob": Label(note="hi")}
    with pytest.raises(ValueError, match="score must be a number from 0 to 10"):
        apply_changes(sidecar, [("s1", LabelChange("cell_score", 11, "tone"), "bob")])
    assert sidecar.read_text(encoding="utf-8") == text
