"""A rubric folder with samples (some hostile), and the web labeller over it, driven in-process."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rubric_studio.core.labels import LabelStore, labels_path_for
from rubric_studio.session.labelling import LabellingSession, Person, check_people, read_report
from rubric_studio.web import Door, create_app, token_hash

RUBRIC = """\
name: demo
criteria:
  - id: correct
    outcome: Gives the right answer
    required: true
  - id: tone
    outcome: Warm tone
    score_ranges: {0: Rude, 4: Neutral, 7: Friendly, 10: Warm}
  - id: short
    check: {type: length, max_words: 100}
"""
HOSTILE_OUTPUT = (
    "Hello <script>alert('x')</script> <img src=x onerror=alert(1)> "
    "[click](javascript:alert(1)) [file](file:///etc/passwd) [ftp](ftp://host/x) [ok](https://example.org/a) "
    "![pic](https://tracker.example/p.png) <svg onload=alert(2)><circle/></svg> "
    "<a href=\"javascript:alert(3)\">raw</a> RLO\u202eevil\u2066 ctl\x1b[31m bell\x07 alm\u061c"
)
TOKENS = {name: f"token-of-{name}-0123456789abcdef" for name in ("alice", "bob", "cara", "lena")}


def sample_rows() -> list[dict]:
    rows = [{"id": f"s{i}", "input": f"question {i}", "output": f"answer **{i}**"} for i in range(5)]
    rows.append({"id": "hostile", "input": "<b>in</b>\u202e", "output": HOSTILE_OUTPUT, "ground_truth": "<i>ref</i>"})
    rows.append({"id": "chat", "messages": [
        {"role": "system", "content": "be kind"},
        {"role": "user<script>", "content": "hi <img src=x onerror=alert(1)>"},
        {"role": "assistant", "content": "{\"answer\": \"<script>x</script>\"}"}]})
    return rows


def write_samples(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@dataclass
class Labeller:
    folder: Path
    rubric: Path
    samples: Path
    session: LabellingSession
    door: Door
    app: object
    people: dict[str, Person]

    def client(self, name: str | None = None) -> TestClient:
        """A browser of ``name``: logged in through their link (cookie), or nobody's."""
        client = TestClient(self.app)
        if name is not None:
            answer = client.get(f"/?token={TOKENS[name]}", follow_redirects=False)
            assert answer.status_code == 303, answer.text
        return client

    def csrf(self, name: str) -> dict[str, str]:
        return {"X-CSRF-Token": self.door.csrf_token(self.people[name])}

    def store(self) -> LabelStore:
        """A fresh store over the sidecar: what another process (the studio) reads."""
        return LabelStore(labels_path_for(self.rubric))


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def make_labeller(folder: Path, *, annotators=("alice", "bob", "cara"), lead: str | None = "lena",
                  overlap: int | None = None, report: dict | None = None, rows: list[dict] | None = None,
                  tokens_file: Path | None = None) -> Labeller:
    rubric = folder / "r.yaml"
    if not rubric.exists():
        rubric.write_text(RUBRIC, encoding="utf-8")
    samples = folder / "r.samples.jsonl"
    write_samples(samples, rows if rows is not None else sample_rows())
    people = check_people(list(annotators), lead)
    judge = None
    if report is not None:
        path = folder / "report.json"
        path.write_text(json.dumps(report), encoding="utf-8")
        judge = read_report(path.read_text(encoding="utf-8"), str(path))
    session = LabellingSession(rubric, samples, people, store=LabelStore(labels_path_for(rubric)), overlap=overlap,
                               report=judge)
    by_name = {p.name: p for p in people}
    door = Door(by_name, {name: token_hash(TOKENS[name]) for name in by_name}, tokens_file=tokens_file)
    return Labeller(folder, rubric, samples, session, door, create_app(session, door), by_name)


@pytest.fixture
def labeller(tmp_path: Path) -> Labeller:
    return make_labeller(tmp_path)
