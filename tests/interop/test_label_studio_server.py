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
