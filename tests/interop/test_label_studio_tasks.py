"""``labels export --to label-studio``: the sidecar's labels as annotations (one per annotator, the name
carried in each result item's ``meta``), a grading report's verdicts as predictions, and what
``labels import`` makes of Label Studio's export of them. The real server is in
``test_label_studio_server.py``; this file checks the JSON shapes and the refusals without one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label, load_labels
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.engine.report import Report

ROOT = Path(__file__).resolve().parents[2]
FIRST, SECOND, THIRD = "refund-within-window", "refund-late-request", "duplicate-charge"
NOTE = '  </View><script>alert("x")</script> & <b>"q"</b> ]]> <!-- c -->\r\nline two\ttab ✓  '
ODD_NAME = 'bob "<b>" & <i>'

SIDECAR = f"""\
{FIRST}:
  verdict: pass
  score: 9
  criteria: {{resolves-issue: met, policy-accurate: unmet, tone: met, short: met}}
  criterion_scores: {{tone: 8}}
  note: {json.dumps(NOTE)}
  annotator: alice
  annotators:
    {ODD_NAME}: {{verdict: fail, criteria: {{tone: unmet}}, note: "=SUM(A1)"}}
    adjudicated: {{verdict: pass, score: 7.5, criteria: {{resolves-issue: met}}}}
{THIRD}:
  verdict: fail
  criteria: {{asks-for-credentials: met, no-boilerplate: unmet}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path, dirs_exist_ok=True)
    (tmp_path / "support_reply.labels.yaml").write_text(SIDECAR, encoding="utf-8")
    return tmp_path / "support_reply.yaml"


def _export(project: Path, *extra: str) -> int:
    return main(["labels", "export", str(project), "--to", "label-studio", "-o", str(project.parent / "ls"), *extra])


def _tasks(project: Path) -> dict[str, dict]:
    tasks = json.loads((project.parent / "ls" / "support_reply.tasks.json").read_text(encoding="utf-8"))
    return {task["data"]["sample_id"]: task for task in tasks}


def _values(result: list[dict]) -> dict[str, tuple[str, dict]]:
    """control -> (type, value) of a result, after checking every item labels the output."""
    assert all(item["to_name"] == "output" for item in result)
    return {item["from_name"]: (item["type"], item["value"]) for item in result}


def _carried(annotation: dict) -> dict:
    """What every result item of ``annotation`` carries (they must all carry the same)."""
    carried = [item["meta"]["rubric_studio"] for item in annotation["result"]]
    assert all(one == carried[0] for one in carried)
    return carried[0]


# -- annotations --------------------------------------------------------------------------------
def test_each_annotator_of_a_sample_is_one_annotation_in_label_studios_shapes(project, capsys):
    assert _export(project) == 0
    tasks = _tasks(project)
    first = tasks[FIRST]["annotations"]
    assert [_carried(a)["annotator"] for a in first] == ["alice", ODD_NAME, "adjudicated"]
    alice, bob, adjudicated = first
    assert _values(alice["result"]) == {
        "verdict": ("choices", {"choices": ["pass"]}),
        "criterion:resolves-issue": ("choices", {"choices": ["met"]}),
        "criterion:policy-accurate": ("choices", {"choices": ["unmet"]}),
        "criterion:tone": ("number", {"number": 8}),  # the analytic criterion's score, not met / unmet
        "score": ("number", {"number": 9}),
        "note": ("textarea", {"text": [NOTE]}),
    }
    assert _carried(alice) == {"annotator": "alice", "criteria": {"short": "met"}}  # a check: no control shows it
    assert _values(bob["result"]) == {"verdict": ("choices", {"choices": ["fail"]}),
                                      "note": ("textarea", {"text": ["=SUM(A1)"]})}
    assert _carried(bob) == {"annotator": ODD_NAME, "criteria": {"tone": "unmet"}}  # met / unmet without a score
    assert _values(adjudicated["result"])["score"] == ("number", {"number": 7.5})
    assert [a["ground_truth"] for a in first] == [False, False, True]  # the adjudicated label settles it
    assert not any(a["was_cancelled"] for a in first)
    unnamed = tasks[THIRD]["annotations"]
    assert [_carried(a) for a in unnamed] == [{"annotator": "(unnamed)", "criteria": {"no-boilerplate": "unmet"}}]
    assert "annotations" not in tasks[SECOND] and "predictions" not in tasks[SECOND]  # nobody labelled it
    err = capsys.readouterr().err
    assert "15 tasks, 4 annotations by (unnamed), adjudicated, alice, " + ODD_NAME in err


def test_names_and_notes_go_into_the_tasks_json_only_never_into_the_config(project):
    assert _export(project) == 0
    config = (project.parent / "ls" / "support_reply.label-studio.xml").read_text(encoding="utf-8")
    for text in ("alice", "bob", "<script>", "=SUM", "adjudicated", "line two"):
        assert text not in config
    raw = (project.parent / "ls" / "support_reply.tasks.json").read_text(encoding="utf-8")
    assert "\\r\\nline two\\ttab" in raw  # escaped by JSON, not written as it is
    assert _values(_tasks(project)[FIRST]["annotations"][0]["result"])["note"][1] == {"text": [NOTE]}


def test_a_label_no_control_shows_and_labels_of_other_samples_are_warned_about(project, capsys):
    sidecar = project.with_name("support_reply.labels.yaml")
    sidecar.write_text(SIDECAR + f"{SECOND}:\n  criteria: {{short: unmet}}\n  annotator: carol\n"
                       "not-a-sample:\n  verdict: pass\n", encoding="utf-8")
    assert _export(project) == 0
    assert "annotations" not in _tasks(project)[SECOND]
    err = capsys.readouterr().err
    assert "1 label holds nothing a control of the labeling config shows" in err and f"{SECOND} by carol" in err
    assert "labels of 1 sample not among the samples are not in the tasks: not-a-sample" in err


# -- what Label Studio gives back ----------------------------------------------------------------
def _as_label_studio_exports(tasks: dict[str, dict]) -> list[dict]:
    """The tasks as Label Studio 1.23's JSON export gives them back after importing them (measured): ids
    added, every imported annotation ``completed_by`` the importing user (id 1), result items as imported."""
    exported, number = [], 0
    for task_id, task in enumerate(tasks.values(), start=1):
        annotations = []
        for annotation in task.get("annotations", []):
            number += 1
            annotations.append({**annotation, "id": number, "completed_by": 1, "task": task_id})
        exported.append({"id": task_id, "data": task["data"], "annotations": annotations,
                         "predictions": list(range(1, len(task.get("predictions", [])) + 1))})
    return exported


def _import(project: Path, exported: list[dict], sidecar: str = "back.labels.yaml", *extra: str) -> Path:
    path = project.with_name("export.json")
    path.write_text(json.dumps(exported), encoding="utf-8")
    target = project.with_name(sidecar)
    assert main(["labels", "import", str(project), str(path), "--labels", str(target), *extra]) == 0
    return target


def test_labels_import_gives_every_label_back_to_its_annotator(project, capsys):
    assert _export(project) == 0
    back = _import(project, _as_label_studio_exports(_tasks(project)))
    assert load_labels(back).by_annotator == load_labels(project.with_name("support_reply.labels.yaml")).by_annotator
    err = capsys.readouterr().err
    assert "4 annotations kept the annotator rubric-studio exported it with (not Label Studio's completed_by)" in err
    assert "user-1" not in err


def test_an_annotation_edited_in_label_studio_stays_its_annotators(project):
    """The labelling screen keeps the meta of the items it had and adds new items without one (measured)."""
    assert _export(project) == 0
    exported = _as_label_studio_exports(_tasks(project))
    alice = exported[0]["annotations"][0]
    alice["result"] = [item for item in alice["result"] if item["from_name"] != "criterion:policy-accurate"]
    alice["result"][0]["value"] = {"choices": ["fail"]}
    alice["result"].append({"id": "x1", "from_name": "criterion:asks-for-credentials", "to_name": "output",
                            "type": "choices", "value": {"choices": ["unmet"]}, "origin": "manual"})
    labels = load_labels(_import(project, exported)).by_annotator[FIRST]
    assert labels["alice"] == Label("fail", 9, {"resolves-issue": "met", "tone": "met", "short": "met",
                                                "asks-for-credentials": "unmet"}, NOTE, {"tone": 8})
    assert set(labels) == {"alice", ODD_NAME, "adjudicated"}


def test_a_new_annotation_made_in_label_studio_belongs_to_its_user(project):
    assert _export(project) == 0
    exported = _as_label_studio_exports(_tasks(project))
    exported[1]["annotations"] = [{"id": 99, "completed_by": 3, "result": [
        {"from_name": "verdict", "to_name": "output", "type": "choices", "value": {"choices": ["pass"]}}]}]
    labels = load_labels(_import(project, exported)).by_annotator
    assert labels[SECOND] == {"user-3": Label("pass")}


def test_a_carried_met_of_an_analytic_criterion_counts_only_while_its_number_is_empty(project):
    assert _export(project) == 0
    exported = _as_label_studio_exports(_tasks(project))
    bob = exported[0]["annotations"][1]
    assert _carried(bob)["criteria"] == {"tone": "unmet"}
    labels = load_labels(_import(project, exported, "kept.labels.yaml")).by_annotator
    assert labels[FIRST][ODD_NAME].criteria == {"tone": "unmet"}
    bob["result"].append({"from_name": "criterion:tone", "to_name": "output", "type": "number",
                          "value": {"number": 9}})  # someone scored it in Label Studio
    labels = load_labels(_import(project, exported, "scored.labels.yaml")).by_annotator
    assert labels[FIRST][ODD_NAME].criteria == {"tone": "met"}
    assert labels[FIRST][ODD_NAME].criterion_scores == {"tone": 9.0}


@pytest.mark.parametrize(("meta", "said"), [
    ([{"rubric_studio": {"annotator": "alice"}}, {"rubric_studio": {"annotator": "bob"}}],
     "its result items carry different annotators ('alice', 'bob')"),
    ([{"rubric_studio": {"annotator": "a:b"}}] * 2, "not an annotator name: 'a:b' (use letters"),
    ([{"rubric_studio": {"annotator": 7}}] * 2, "meta.rubric_studio.annotator is a number, not a name"),
    ([{"rubric_studio": ["alice"]}] * 2, "meta.rubric_studio of a result item is not what rubric-studio exports"),
    ([{"rubric_studio": {"annotator": "a", "criteria": {"short": "met"}}},
      {"rubric_studio": {"annotator": "a", "criteria": {"short": "unmet"}}}],
     "its result items carry different labels of 'short'"),
])
def test_an_annotation_whose_carried_annotator_cannot_be_read_is_skipped_and_named(project, capsys, meta, said):
    result = [{"from_name": "verdict", "to_name": "output", "type": "choices", "value": {"choices": ["fail"]},
               "meta": meta[0]},
              {"from_name": "score", "to_name": "output", "type": "number", "value": {"number": 2}, "meta": meta[1]}]
    exported = [{"id": 5, "data": {"sample_id": FIRST}, "annotations": [{"id": 8, "completed_by": 1, "result": result}]}]
    back = _import(project, exported)
    assert load_labels(back).by_annotator == {}
    err = capsys.readouterr().err
    assert f"task 5: annotation 8: {said}" in err and "; skipped" in err


def test_a_carried_label_of_a_criterion_the_rubric_lacks_is_warned_and_changes_nothing(project, capsys):
    meta = {"rubric_studio": {"annotator": "dana", "criteria": {"gone": "met", "short": "sometimes"}}}
    exported = [{"id": 5, "data": {"sample_id": FIRST}, "annotations": [{"id": 8, "completed_by": 1, "result": [
        {"from_name": "verdict", "to_name": "output", "type": "choices", "value": {"choices": ["pass"]}, "meta": meta}]}]}]
    labels = load_labels(_import(project, exported)).by_annotator
    assert labels[FIRST]["dana"] == Label("pass")
    err = capsys.readouterr().err
    assert "carried label of 'gone': not a criterion of the rubric; skipped" in err
    assert "carried label of 'short': expected met, unmet or nothing, got 'sometimes'; left as it was" in err


# -- predictions ---------------------------------------------------------------------------------
def _report(project: Path, samples: list[SampleResult], *, digest: str | None = None,
            judge: dict | None = None) -> Path:
    rubric = load_rubric(project)
    report = Report(rubric.name, str(project), digest or rubric.content_hash(),
                    judge if judge is not None else {"provider": "openai", "model": "gpt-4o-mini"}, samples)
    path = project.with_name("report.json")
    path.write_text(report.to_json(), encoding="utf-8")
    return path


def _graded(sample_id: str, verdict: Verdict, score: float | None, **cells: tuple[Status, float | None]) -> SampleResult:
    criteria = [CriterionResult(key.replace("_", "-"), status, 1.0 if status is Status.MET else 0.0, raw,
                                source="judge") for key, (status, raw) in cells.items()]
    criteria.append(CriterionResult("short", Status.MET, 1.0))  # a check: no control to show it
    return SampleResult(sample_id, score, verdict, criteria)


def test_a_reports_verdicts_become_predictions_of_the_judges_model(project, capsys):
    report = _report(project, [
        _graded(FIRST, Verdict.FAIL, 0.4567, resolves_issue=(Status.MET, None), policy_accurate=(Status.UNMET, None),
                tone=(Status.UNMET, 4.0), asks_for_credentials=(Status.ERROR, None)),
        _graded(SECOND, Verdict.ERROR, None, resolves_issue=(Status.MET, None)),
    ])
    assert _export(project, "--predictions", str(report)) == 0
    tasks = _tasks(project)
    [first] = tasks[FIRST]["predictions"]
    assert first["model_version"] == "gpt-4o-mini"
    assert _values(first["result"]) == {
        "verdict": ("choices", {"choices": ["fail"]}),
        "criterion:resolves-issue": ("choices", {"choices": ["met"]}),
        "criterion:policy-accurate": ("choices", {"choices": ["unmet"]}),
        "criterion:tone": ("number", {"number": 4}),  # the analytic criterion's 0-10 score
        "score": ("number", {"number": 4.567}),  # the sample's 0-1 score on the control's 0-10
    }  # the errored cell and the check are not predicted
    assert not any("meta" in item for item in first["result"])
    [second] = tasks[SECOND]["predictions"]
    assert _values(second["result"]) == {"criterion:resolves-issue": ("choices", {"choices": ["met"]})}  # no verdict
    assert "predictions" not in tasks[THIRD]  # not in the report
    assert len(tasks[FIRST]["annotations"]) == 3  # the labels are there as well
    err = capsys.readouterr().err
    assert "warning" not in err and "2 with predictions of gpt-4o-mini" in err


def test_a_judge_panels_name_is_the_model_version(project):
    report = _report(project, [_graded(FIRST, Verdict.PASS, 1.0)],
                     judge={"provider": "panel", "model": "panel(a,b)", "members": []})
    assert _export(project, "--predictions", str(report)) == 0
    assert _tasks(project)[FIRST]["predictions"][0]["model_version"] == "panel(a,b)"


def test_a_report_graded_by_the_fake_judge_gives_a_prediction_per_sample(project, capsys, monkeypatch):
    from tests.fakellm import FakeLLM

    report = project.with_name("graded.json")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLM() as server:
        main(["grade", str(project), "--judge", "openai:gpt-4o-mini", "--base-url", server.base_url_openai,
              "--no-cache", "--format", "json", "-o", str(report)])
    graded = {s["id"]: s for s in json.loads(report.read_text(encoding="utf-8"))["samples"]}
    capsys.readouterr()
    assert _export(project, "--predictions", str(report)) == 0
    tasks = _tasks(project)
    assert set(tasks) == set(graded) and all(len(t["predictions"]) == 1 for t in tasks.values())
    for sample_id, task in tasks.items():
        values = _values(task["predictions"][0]["result"])
        assert values["verdict"] == ("choices", {"choices": [graded[sample_id]["verdict"]]})
        cells = {c["id"]: c for c in graded[sample_id]["criteria"]}
        assert values["criterion:resolves-issue"] == ("choices", {"choices": [cells["resolves-issue"]["status"]]})
        assert values["criterion:tone"] == ("number", {"number": cells["tone"]["raw_score"]})
    assert "warning" not in capsys.readouterr().err


def test_a_report_of_another_version_of_the_rubric_is_said_naming_both_hashes_and_still_written(project, capsys):
    report = _report(project, [_graded(FIRST, Verdict.PASS, 1.0)], digest="0123456789abcdef")
    now = load_rubric(project).content_hash()
    assert _export(project, "--predictions", str(report)) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1
    assert f"report's rubric hash 0123456789abcdef, the rubric's now {now}" in err and str(report) in err
    assert _tasks(project)[FIRST]["predictions"][0]["model_version"] == "gpt-4o-mini"


def test_samples_of_the_report_that_are_not_exported_are_left_out_with_one_warning(project, capsys):
    others = [_graded(f"elsewhere-{n}", Verdict.PASS, 1.0) for n in range(7)]
    report = _report(project, [_graded(FIRST, Verdict.PASS, 1.0), *others])
    assert _export(project, "--predictions", str(report)) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1
    assert ("7 of its 8 samples are not among the samples exported; their verdicts are left out: "
            "elsewhere-0, elsewhere-1, elsewhere-2, elsewhere-3, elsewhere-4 and 2 more") in err
    assert "1 with predictions" in err and len(_tasks(project)[FIRST]["predictions"]) == 1


@pytest.mark.parametrize(("content", "said"), [
    ("{not json", ":1:2: not valid JSON"),
    ("[]", ":1:1: expected the JSON report of rubric-studio grade --format json"),
    ('{"samples": {"a": 1}}', "got an object without a samples list"),
    ('{"samples": [{"verdict": "pass"}]}', "samples[0]: expected a sample with an id"),
    ('{"samples": [{"id": "a", "criteria": "met"}]}', "samples[0]: criteria is text, expected a list of cells"),
    ('{"samples": [{"id": "a"}, {"id": "a"}]}', "samples[1]: sample 'a' is in the report twice"),
    ("[" * 100_000, "nested deeper than"),
    ('{"samples": [], "x": ' + "9" * 5000 + "}", "invalid JSON value"),
    (None, "report not found: no such file"),
    ("folder", "expected a report file, got a folder"),
])
def test_an_unreadable_report_is_exit_2_and_nothing_is_written(project, capsys, content, said):
    report = project.with_name("report.json")
    if content == "folder":
        report.mkdir()
    elif content is not None:
        report.write_text(content, encoding="utf-8")
    assert _export(project, "--predictions", str(report)) == 2
    err = capsys.readouterr().err
    assert said in err and str(report) in err and "Traceback" not in err and err.count("\n") == 1
    assert not (project.parent / "ls").exists()


def test_predictions_for_a_table_export_is_a_usage_error(project, capsys):
    report = _report(project, [_graded(FIRST, Verdict.PASS, 1.0)])
    assert main(["labels", "export", str(project), "--to", "csv", "--predictions", str(report)]) == 2
    assert "use it with --to label-studio" in capsys.readouterr().err
