"""Samples loading: every format, aliases, transcripts, and bad records reported with lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.core.problems import RubricError
from rubric_studio.core.samples import iter_samples, load_samples

ROOT = Path(__file__).resolve().parents[2]


def test_folder_of_text_files_uses_stems_as_ids(tmp_path: Path):
    (tmp_path / "b.md").write_text("# second")
    (tmp_path / "a.txt").write_text("first")
    (tmp_path / "ignored.json").write_text("{}")
    loaded = load_samples(tmp_path)
    assert [s.id for s in loaded] == ["a", "b"]
    assert loaded.samples[1].output == "# second"


def test_jsonl_aliases_and_bad_lines_are_reported_with_line_numbers(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps({"id": "a", "input": "q", "submission": "answer", "expected": "gt"}),
        "{not json",
        json.dumps({"id": "b", "ouput": "typo"}),
        "",
        json.dumps({"id": "c", "output": "ok", "metadata": {"k": 1}, "model": "x"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["a", "c"]
    a = loaded.samples[0]
    assert (a.output, a.input, a.ground_truth) == ("answer", "q", "gt")
    assert loaded.samples[1].metadata == {"k": 1, "model": "x"}
    where = [(p.line, p.message) for p in loaded.problems]
    assert where[0][0] == 2 and "not valid JSON" in where[0][1]
    assert where[1][0] == 3 and "'ouput'" in where[1][1]


def test_transcript_grades_last_assistant_message(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    record = {
        "id": "t",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "first"},
            {"role": "user", "content": "more"},
            {"role": "assistant", "content": [{"type": "text", "text": "final answer"}]},
        ],
    }
    path.write_text(json.dumps(record) + "\n")
    assert load_samples(path).samples[0].output == "final answer"
    transcript = load_samples(path, extractor="transcript").samples[0].output
    assert transcript.startswith("user: hi") and "assistant: final answer" in transcript


def test_yaml_records_report_bad_ones_at_their_line(tmp_path: Path):
    path = tmp_path / "s.yaml"
    path.write_text("- id: a\n  output: fine\n- id: b\n  input: no output here\n- id: c\n  output: also fine\n")
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["a", "c"]
    assert loaded.problems[0].line == 3 and "no 'output'" in loaded.problems[0].message


def test_csv_with_json_columns_and_ragged_rows(tmp_path: Path):
    path = tmp_path / "s.csv"
    path.write_text('id,input,output,metadata\na,q,"hello, world","{""k"": 2}"\nb,q,x,{},extra\nc,,plain,\n')
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["a", "c"]
    assert loaded.samples[0].output == "hello, world" and loaded.samples[0].metadata == {"k": 2}
    assert loaded.problems[0].line == 3


def test_duplicate_ids_keep_the_first(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a", "output": "1"}\n{"id": "a", "output": "2"}\n')
    loaded = load_samples(path)
    assert [s.output for s in loaded] == ["1"]
    assert "duplicate sample id 'a'" in loaded.problems[0].message and loaded.problems[0].line == 2


def test_empty_and_missing_sources_get_clear_messages(tmp_path: Path):
    with pytest.raises(RubricError, match="not found"):
        load_samples(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RubricError, match="no samples found"):
        load_samples(tmp_path / "empty.jsonl")
    (tmp_path / "x.parquet").write_text("")
    with pytest.raises(RubricError, match="unknown samples format"):
        load_samples(tmp_path / "x.parquet")


def test_iter_samples_streams_without_loading_everything(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "output": "x"}) + "\n" for i in range(1000)))
    stream = iter_samples(path)
    first = next(stream)
    assert first.id == "0"


def test_bundled_sample_sets_load_cleanly():
    for source in [
        ROOT / "sample_rubrics/support_reply/support_reply.samples.jsonl",
        ROOT / "sample_rubrics/code_review/samples",
        ROOT / "sample_rubrics/doc_summary/doc_summary.samples.yaml",
    ]:
        loaded = load_samples(source)
        assert len(loaded) >= 10 and loaded.problems == []
