"""The Label Studio round trip against a real server (``label-studio`` 1.23, SQLite, on 127.0.0.1):
the exported config makes the project, the exported tasks are imported, two users annotate through
the API, the project's JSON export comes back in, and every label lands under the right person.

Needs ``RUBRIC_STUDIO_LABEL_STUDIO`` (the ``label-studio`` command; ``.ci/run`` installs it into
``.venv-ls``); skipped with the reason without it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label, load_labels
from tests import labelstudio
from tests.interop.test_label_studio_tasks import SIDECAR

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.labelstudio, pytest.mark.long]  # long: most of it the server starting
ADMIN, CAROL = labelstudio.ADMIN, "carol@example.com"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    executable = labelstudio.command()
    if executable is None:
        pytest.skip(f"no Label Studio server to test against: set {labelstudio.ENV} to the label-studio command "
                    "(.ci/run installs it into .venv-ls)")
    running = labelstudio.Server(executable, tmp_path_factory.mktemp("label-studio"))
    try:
        running.wait_until_up()
        yield running
    finally:
        running.stop()


def _annotation(verdict: str, tone: int | None, resolves: str, note: str | None = None) -> list[dict]:
    result = [{"from_name": "verdict", "to_name": "output", "type": "choices", "value": {"choices": [verdict]}},
              {"from_name": "criterion:resolves-issue", "to_name": "output", "type": "choices",
               "value": {"choices": [resolves]}}]
    if tone is not None:
        result.append({"from_name": "criterion:tone", "to_name": "output", "type": "number", "value": {"number": tone}})
    if note is not None:
        result.append({"from_name": "note", "to_name": "output", "type": "textarea", "value": {"text": [note]}})
    return result


def run_scenario(server, folder: Path) -> tuple[list, dict[str, int], str]:
    """Export the project, load it into the server, annotate as the admin and as Carol (one cancelled),
    and return (the server's JSON export, task id by sample id, the project's first two sample ids)."""
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", folder, dirs_exist_ok=True)
    (folder / "support_reply.labels.yaml").unlink()
    assert main(["labels", "export", str(folder / "support_reply.yaml"), "--to", "label-studio",
                 "-o", str(folder / "ls")]) == 0
    config = (folder / "ls" / "support_reply.label-studio.xml").read_text(encoding="utf-8")
    project = server.call("POST", "/api/projects", {"title": "support reply labels", "label_config": config})["id"]
    tasks = json.loads((folder / "ls" / "support_reply.tasks.json").read_text(encoding="utf-8"))
    assert server.call("POST", f"/api/projects/{project}/import", tasks)["task_count"] == len(tasks)
    listed = server.call("GET", f"/api/tasks?project={project}&page_size=1000")
    by_sample = {t["data"]["sample_id"]: t["id"] for t in (listed["tasks"] if isinstance(listed, dict) else listed)}
    first, second = tasks[0]["data"]["sample_id"], tasks[1]["data"]["sample_id"]
    carol = server.sign_up(CAROL, "carol-pass-1234")
    server.call("POST", f"/api/tasks/{by_sample[first]}/annotations/",
                {"result": _annotation("pass", 8, "met", "clear and kind")})
    server.call("POST", f"/api/tasks/{by_sample[first]}/annotations/",
                {"result": _annotation("fail", 3, "unmet")}, token=carol)
    server.call("POST", f"/api/tasks/{by_sample[second]}/annotations/",
                {"result": _annotation("pass", None, "met")}, token=carol)
    server.call("POST", f"/api/tasks/{by_sample[second]}/annotations/",
                {"result": _annotation("fail", 0, "unmet"), "was_cancelled": True})
    exported = server.call("GET", f"/api/projects/{project}/export?exportType=JSON")
    return exported, by_sample, f"{first} {second}"


def test_labels_round_trip_through_a_real_label_studio(server, tmp_path, monkeypatch):
    exported, by_sample, pair = run_scenario(server, tmp_path)
    first, second = pair.split()
    assert {t["data"]["sample_id"] for t in exported} == {first, second}  # the annotated tasks
    people = {a["completed_by"] for t in exported for a in t["annotations"]}
    assert all(isinstance(p, int) for p in people) and len(people) == 2  # 1.23 writes user ids
    export_file = tmp_path / "export.json"
    export_file.write_text(json.dumps(exported), encoding="utf-8")
    rubric = str(tmp_path / "support_reply.yaml")

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", labelstudio.TOKEN)
    assert main(["labels", "import", rubric, str(export_file), "--label-studio-url", server.url]) == 0
    labels = load_labels(tmp_path / "support_reply.labels.yaml").by_annotator
    assert set(labels) == {first, second}
    assert labels[first][ADMIN] == Label("pass", None, {"resolves-issue": "met", "tone": "met"}, "clear and kind",
                                         {"tone": 8.0})
    assert labels[first][CAROL] == Label("fail", None, {"resolves-issue": "unmet", "tone": "unmet"}, None,
                                         {"tone": 3.0})
    assert labels[second] == {CAROL: Label("pass", None, {"resolves-issue": "met"})}  # the cancelled one skipped

    sidecar = tmp_path / "by-id.labels.yaml"
    assert main(["labels", "import", rubric, str(export_file), "--labels", str(sidecar)]) == 0
    ids = {f"user-{p}" for p in people}
    assert set(load_labels(sidecar).by_annotator[first]) == ids


# -- the sidecar's labels and a report's verdicts, through a real Label Studio ---------------------------
DORA = "dora@example.com"


def _graded_report(rubric: Path, monkeypatch) -> Path:
    """The rubric graded by the fake judge (``grade --format json``), as a team's report would be."""
    from tests.fakellm import FakeLLM

    report = rubric.with_name("report.json")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLM() as judge:
        main(["grade", str(rubric), "--judge", "openai:gpt-4o-mini", "--base-url", judge.base_url_openai,
              "--no-cache", "--format", "json", "-o", str(report)])
    return report


def _checked_by_label_studio(config: str, tasks: list[dict]) -> list[str]:
    """What Label Studio's own checker (its SDK's LabelInterface, in the server's environment) finds wrong
    with the tasks' annotations and predictions for ``config``."""
    import subprocess

    python = Path(labelstudio.command()).with_name("python")
    script = ("import json, sys\nfrom label_studio_sdk.label_interface import LabelInterface\n"
              "config, tasks = json.load(sys.stdin)\nface = LabelInterface(config)\nwrong = []\n"
              "for task in tasks:\n"
              "    wrong += [task['data']['sample_id'] for a in task.get('annotations', []) "
              "if not face.validate_annotation(a)]\n"
              "    for p in task.get('predictions', []):\n"
              "        wrong += face.validate_prediction(p, return_errors=True)\n"
              "print(json.dumps(wrong))\n")
    done = subprocess.run([str(python), "-c", script], input=json.dumps([config, tasks]), capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_the_sidecars_labels_and_a_reports_verdicts_round_trip_through_a_real_label_studio(server, tmp_path,
                                                                                        monkeypatch):
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path, dirs_exist_ok=True)
    sidecar = tmp_path / "support_reply.labels.yaml"
    sidecar.write_text(SIDECAR, encoding="utf-8")
    rubric = tmp_path / "support_reply.yaml"
    report = _graded_report(rubric, monkeypatch)
    assert main(["labels", "export", str(rubric), "--to", "label-studio", "-o", str(tmp_path / "ls"),
                 "--predictions", str(report)]) == 0
    config = (tmp_path / "ls" / "support_reply.label-studio.xml").read_text(encoding="utf-8")
    tasks = json.loads((tmp_path / "ls" / "support_reply.tasks.json").read_text(encoding="utf-8"))
    assert _checked_by_label_studio(config, tasks) == []

    project = server.call("POST", "/api/projects", {"title": "carried labels", "label_config": config})["id"]
    imported = server.call("POST", f"/api/projects/{project}/import", tasks)
    assert (imported["task_count"], imported["annotation_count"], imported["prediction_count"]) == (15, 4, 15)
    listed = server.call("GET", f"/api/tasks?project={project}&page_size=1000")
    by_sample = {t["data"]["sample_id"]: t["id"] for t in (listed["tasks"] if isinstance(listed, dict) else listed)}
    first = server.call("GET", f"/api/tasks/{by_sample['refund-within-window']}")
    [prediction] = first["predictions"]  # shown as the pre-annotation of the judge's model
    assert prediction["model_version"] == "gpt-4o-mini"
    sent = tasks[0]["predictions"][0]["result"]
    assert [(i["from_name"], i["value"]) for i in prediction["result"]] == [(i["from_name"], i["value"]) for i in sent]

    alice = next(a for a in first["annotations"] if a["result"][0]["meta"]["rubric_studio"]["annotator"] == "alice")
    edited = [dict(item, value={"choices": ["fail"]}) if item["from_name"] == "verdict" else item
              for item in alice["result"]]  # as the labelling screen sends an edit (measured): meta kept,
    edited.append({"from_name": "criterion:asks-for-credentials", "to_name": "output", "type": "choices",
                   "value": {"choices": ["unmet"]}, "origin": "manual"})  # a new item without one
    server.call("PATCH", f"/api/annotations/{alice['id']}/", {"result": edited})
    dora = server.sign_up(DORA, "dora-pass-1234")
    server.call("POST", f"/api/tasks/{by_sample['refund-late-request']}/annotations/",
                {"result": _annotation("fail", 2, "unmet", "too curt")}, token=dora)

    exported = server.call("GET", f"/api/projects/{project}/export?exportType=JSON")
    imported_by = {a["completed_by"] for t in exported for a in t["annotations"] if a["result"][0].get("meta")}
    assert len(imported_by) == 1  # Label Studio gives every imported annotation to the importing user
    export_file = tmp_path / "export.json"
    export_file.write_text(json.dumps(exported), encoding="utf-8")
    back = tmp_path / "back.labels.yaml"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", labelstudio.TOKEN)
    assert main(["labels", "import", str(rubric), str(export_file), "--labels", str(back),
                 "--label-studio-url", server.url]) == 0

    expected = load_labels(sidecar).by_annotator
    expected["refund-within-window"]["alice"].verdict = "fail"
    expected["refund-within-window"]["alice"].criteria["asks-for-credentials"] = "unmet"
    expected["refund-late-request"] = {DORA: Label("fail", None, {"resolves-issue": "unmet", "tone": "unmet"},
                                                   "too curt", {"tone": 2.0})}
    assert load_labels(back).by_annotator == expected
    assert ADMIN not in {name for labels in load_labels(back).by_annotator.values() for name in labels}
