"""The run history on disk: versions outlive the session, bounded, and a bad file never breaks anything."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import rubric_studio.core.loading as loading
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.engine.versions import (
    RunHistory,
    VersionHistory,
    history_folder,
    history_path,
    open_history,
)
from tests.calibration.calib_helpers import result

TEXT = "name: t\ncriteria:\n  - id: q\n    outcome: Quotes {n}\n"
LABELS = {"a": Label(verdict="pass", criteria={"q": "met"}), "b": Label(verdict="fail")}


@pytest.fixture
def rubric_path(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / "r.yaml"
    path.parent.mkdir()
    path.write_text(TEXT.format(n=0))
    return path


def _history(rubric_path: Path, **options) -> VersionHistory:
    return open_history(rubric_path, cache_path=rubric_path.parent.parent / "cache.sqlite", **options)


def _grade(history: VersionHistory, rubric_path: Path, n: int, verdict: str = "pass", *, samples: str = "S", t=None):
    rubric = parse_rubric(TEXT.format(n=n), str(rubric_path))
    results = [result("a", verdict, {"q": "met" if verdict == "pass" else "unmet"}), result("b", "fail", {"q": "unmet"})]
    return history.record(rubric, results, samples_fingerprint=samples, judge_key="J", labels=LABELS,
                          timestamp=t)  # fmt: skip


def _file(rubric_path: Path) -> Path:
    return history_path(rubric_path, rubric_path.parent.parent / "cache.sqlite")


def test_versions_come_back_in_a_later_session_and_numbering_continues(rubric_path: Path, monkeypatch):
    first = _history(rubric_path)
    _grade(first, rubric_path, 1, "fail", t=1_000.0)
    _grade(first, rubric_path, 2, "pass", t=2_000.0)
    _grade(first, rubric_path, 2, "pass", samples="S2", t=3_000.0)
    assert first.warnings == []

    parsed: list[str] = []
    real_parse = loading.parse_rubric
    monkeypatch.setattr(loading, "parse_rubric", lambda text, *a, **k: parsed.append(text) or real_parse(text, *a, **k))
    later = _history(rubric_path)
    assert [(v.number, v.kind, v.timestamp) for v in later.versions] == [
        (1, "first run", 1_000.0), (2, "rubric edit", 2_000.0), (3, "samples change", 3_000.0)]
    old = later.get(2)
    assert (old.samples_fingerprint, old.judge_key, old.labels_fingerprint) == ("S", "J", first.get(2).labels_fingerprint)
    assert old.verdicts == {"a": "pass", "b": "fail"} and old.cells["a"] == {"q": "met"} and old.scores == first.get(2).scores
    assert old.labels == {"a": {"verdict": "pass", "criteria": {"q": "met"}}, "b": {"verdict": "fail", "criteria": {}}}
    assert old.figures()["overall"]["accuracy"] == 1.0
    assert parsed == []  # listing does not parse old rubrics

    today = _grade(later, rubric_path, 3, "fail", samples="S2")
    assert today.number == 4 and today.kind == "rubric edit"
    diff = later.diff(2, 4)
    assert diff.rubric_changes == ["changed q (outcome)"] and diff.overall.broken == ["a"]
    assert parsed == [TEXT.format(n=2)]  # only the stored text that was needed
    assert [v.number for v in _history(rubric_path).versions] == [1, 2, 3, 4]


def test_an_update_in_place_is_kept_and_an_identical_regrade_writes_nothing(rubric_path: Path):
    history = _history(rubric_path)
    _grade(history, rubric_path, 1, "fail")
    _grade(history, rubric_path, 1, "pass")  # same basis: the latest version is updated
    size = _file(rubric_path).stat().st_size
    _grade(history, rubric_path, 1, "pass")
    assert _file(rubric_path).stat().st_size == size
    (only,) = _history(rubric_path).versions
    assert only.number == 1 and only.verdicts["a"] == "pass"


def test_the_file_is_bounded_in_versions_and_bytes(rubric_path: Path):
    history = _history(rubric_path, limit=5)
    for n in range(1, 16):
        _grade(history, rubric_path, n)
    lines = _file(rubric_path).read_text().splitlines()
    assert len(lines) <= 5 * 3 // 2
    assert [v.number for v in _history(rubric_path, limit=5).versions] == [11, 12, 13, 14, 15]

    capped = VersionHistory(store=RunHistory(_file(rubric_path), rubric_path, max_bytes=4_000))
    capped.load_past()
    for n in range(16, 40):
        _grade(capped, rubric_path, n)
        assert _file(rubric_path).stat().st_size <= 4_000
    kept = [v.number for v in _history(rubric_path).versions]
    assert kept[-1] == 39 and len(kept) > 1 and kept == list(range(kept[0], 40))


def test_corrupt_and_foreign_lines_are_skipped_with_warnings(rubric_path: Path):
    history = _history(rubric_path)
    _grade(history, rubric_path, 1)
    _grade(history, rubric_path, 2)
    path = _file(rubric_path)
    good = path.read_text().splitlines()
    foreign = json.loads(good[0]) | {"rubric": "/elsewhere/other.yaml"}
    wrong_types = json.loads(good[0]) | {"number": "three"}
    newer = json.loads(good[0]) | {"format": 99}
    path.write_text("\n".join([
        "not json at all", "[1, 2, 3]", good[0], json.dumps(foreign), json.dumps(wrong_types), '{"timestamp": NaN}',
        "x" * 2_000_000, json.dumps(newer), "\x00\xff garbage", good[1], '{"format": 1, "rubric": "tor',
    ]))  # fmt: skip
    loaded = _history(rubric_path)
    assert [v.number for v in loaded.versions] == [1, 2]
    assert loaded.warnings and len(loaded.warnings) <= 6
    assert any("not shown" in w for w in loaded.warnings)
    # the torn last line does not swallow the next version
    _grade(loaded, rubric_path, 3)
    assert [v.number for v in _history(rubric_path).versions] == [1, 2, 3]


def test_a_history_that_cannot_be_read_or_written_never_fails_the_caller(rubric_path: Path):
    path = _file(rubric_path)
    path.mkdir(parents=True)  # a folder where the file should be
    history = _history(rubric_path)
    assert history.versions == [] and history.warnings
    version = _grade(history, rubric_path, 1)
    assert version.number == 1 and any("cannot record v1" in w for w in history.warnings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_never_opened_for_reading(rubric_path: Path):
    path = _file(rubric_path)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    history = _history(rubric_path)  # would block forever if the pipe were opened
    assert history.versions == [] and history.warnings
    assert _grade(history, rubric_path, 1).number == 1


def test_the_history_is_keyed_by_the_resolved_rubric_path(rubric_path: Path, monkeypatch, tmp_path: Path):
    link = tmp_path / "link.yaml"
    link.symlink_to(rubric_path)
    monkeypatch.chdir(rubric_path.parent)
    cache = tmp_path / "c.sqlite"
    assert history_path("r.yaml", cache) == history_path(rubric_path, cache) == history_path(link, cache)
    assert history_path(rubric_path.with_name("other.yaml"), cache) != history_path(rubric_path, cache)
    monkeypatch.setenv("RUBRIC_STUDIO_CACHE", str(tmp_path / "elsewhere" / "c.sqlite"))
    assert history_folder() == tmp_path / "elsewhere" / "history"
    assert history_path(rubric_path).parent == tmp_path / "elsewhere" / "history"


def test_a_stored_text_that_no_longer_parses_still_lists_and_diffs(rubric_path: Path):
    history = _history(rubric_path)
    _grade(history, rubric_path, 1)
    _grade(history, rubric_path, 2)
    path = _file(rubric_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["text"] = "criteria: [unclosed"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    loaded = _history(rubric_path)
    assert loaded.get(1).rubric is None
    assert loaded.diff(1, 2).rubric_changes[0].startswith("rubric changes unknown")


def test_an_oversized_file_is_read_only_from_its_end(rubric_path: Path):
    history = _history(rubric_path)
    for n in range(1, 4):
        _grade(history, rubric_path, n)
    path = _file(rubric_path)
    tail = path.read_bytes()
    path.write_bytes(b"junk " * 20_000 + b"\n" + tail)  # far beyond twice the cap below
    store = RunHistory(path, rubric_path, max_bytes=len(tail) + 10)
    assert [v.number for v in store.load()] == [1, 2, 3]
    assert any("only its end is read" in w for w in store.warnings)
