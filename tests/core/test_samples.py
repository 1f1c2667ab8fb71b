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


def _good_around(bad: bytes) -> bytes:
    return b'{"id": "g1", "output": "one"}\n' + bad + b'\n{"id": "g2", "output": "two"}\n'


def test_lone_surrogate_escape_is_one_bad_record_at_its_column(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_good_around(b'{"id": "bad", "output": "x \\ud800 y"}'))
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["g1", "g2"]
    (problem,) = loaded.problems
    assert (problem.line, problem.column) == (2, 28) and "lone surrogate" in problem.message
    assert all(s.fingerprint() for s in loaded)


def test_surrogate_pairs_and_escaped_controls_are_fine(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"id": "a", "output": "smile \\ud83d\\ude00 \\u0000\\u001b"}\n')
    loaded = load_samples(path)
    assert loaded.samples[0].output == "smile \U0001f600 \x00\x1b" and loaded.problems == []


def test_jsonl_files_joined_with_cat_keep_the_record_after_each_bom(tmp_path: Path):
    bom = b"\xef\xbb\xbf"
    path = tmp_path / "s.jsonl"
    path.write_bytes(bom + b'{"id": "a", "output": "1"}\n' + bom + b'{"id": "b", "output": "2"}\n')
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["a", "b"] and loaded.problems == []


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".yaml", ".json"])
def test_a_bom_at_the_start_keeps_the_first_record(tmp_path: Path, suffix: str):
    body = {
        ".jsonl": b'{"id": "first", "output": "1"}\n{"id": "second", "output": "2"}\n',
        ".csv": b"id,output\r\nfirst,1\r\nsecond,2\r\n",
        ".yaml": b"- {id: first, output: '1'}\n- {id: second, output: '2'}\n",
        ".json": b'[{"id": "first", "output": "1"}, {"id": "second", "output": "2"}]',
    }[suffix]
    path = tmp_path / f"s{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + body)
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["first", "second"] and loaded.problems == []


def test_latin1_records_are_reported_at_line_and_column_not_guessed(tmp_path: Path):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(_good_around('{"id": "bad", "output": "caf\xe9"}'.encode("latin-1")))
    loaded = load_samples(jsonl)
    assert [s.id for s in loaded] == ["g1", "g2"]
    assert str(loaded.problems[0]) == f"{jsonl}:2:29: not UTF-8 text: byte 0xe9 cannot be decoded; save the file as UTF-8"
    table = tmp_path / "s.csv"
    table.write_bytes("id,output\nbad,caf\xe9\ngood,ok\n".encode("latin-1"))
    loaded = load_samples(table)
    assert [s.id for s in loaded] == ["good"] and (loaded.problems[0].line, loaded.problems[0].column) == (2, 8)


@pytest.mark.parametrize(("suffix", "where"), [(".yaml", (2, 15)), (".json", (1, 28))])
def test_latin1_whole_documents_fail_with_line_and_column(tmp_path: Path, suffix: str, where: tuple[int, int]):
    path = tmp_path / f"s{suffix}"
    text = '- id: a\n  output: "caf\xe9"\n' if suffix == ".yaml" else '[{"id": "a", "output": "caf\xe9"}]'
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(RubricError) as caught:
        load_samples(path)
    problem = caught.value.problems[0]
    assert (problem.line, problem.column) == where and "not UTF-8" in problem.message


def test_csv_fields_larger_than_the_csv_module_limit_load(tmp_path: Path):
    path = tmp_path / "s.csv"
    big = "word " * 40_000  # 200 kB, over csv's default 128 kB field limit
    path.write_text(f'id,output\nbig,"{big}"\nsmall,ok\n')
    loaded = load_samples(path)
    assert [len(s.output) for s in loaded] == [len(big), 2] and loaded.problems == []


def test_unclosed_csv_quote_is_reported_and_the_rows_after_it_still_load(tmp_path: Path):
    path = tmp_path / "s.csv"
    path.write_text('id,output\ng1,fine\nbad,"never closed\ng2,fine\ng3,"a\nb"\n')
    loaded = load_samples(path)
    assert [(s.id, s.output) for s in loaded] == [("g1", "fine"), ("g2", "fine"), ("g3", "a\nb")]
    (problem,) = loaded.problems
    assert (problem.line, problem.column) == (3, 5)
    assert problem.message.startswith("unclosed quote opened on line 3") and "resumes on line 4" in problem.message


def test_other_malformed_csv_records_are_reported_one_by_one(tmp_path: Path):
    path = tmp_path / "s.csv"
    path.write_text('id,output\ng1,fine\nbad,"quoted"tail\ng2,fine\n')
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["g1", "g2"]
    assert loaded.problems[0].line == 3 and "malformed CSV record" in loaded.problems[0].message


def test_many_unclosed_quotes_end_the_reading_with_a_message(tmp_path: Path):
    from rubric_studio.core.samples import MAX_RECOVERIES

    path = tmp_path / "s.csv"
    path.write_text("id,output\ng1,fine\n" + 'x,"open\n' * (MAX_RECOVERIES + 5))
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["g1"]
    assert len(loaded.problems) == MAX_RECOVERIES and "rest of the file is not read" in loaded.problems[-1].message


def test_huge_integers_are_one_bad_record_in_every_format(tmp_path: Path):
    big = "9" * 5000
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(_good_around(b'{"id": "bad", "output": ' + big.encode() + b"}"))
    loaded = load_samples(jsonl)
    assert [s.id for s in loaded] == ["g1", "g2"]
    assert (loaded.problems[0].line, loaded.problems[0].column) == (2, 25) and "5000 digits" in loaded.problems[0].message
    whole = tmp_path / "s.json"
    whole.write_text(f'[{{"id": "g1", "output": "x"}}, {{"id": "bad", "metadata": {{"n": {big}}}, "output": "x"}}]')
    loaded = load_samples(whole)
    assert [s.id for s in loaded] == ["g1"] and loaded.problems[0].message.startswith("record 2: metadata.n:")
    assert (loaded.problems[0].line, loaded.problems[0].column) == (1, 31)
    hexed = tmp_path / "s.yaml"
    hexed.write_text(f"- id: g1\n  output: x\n- id: bad\n  output: 0x{'f' * 5000}\n")
    loaded = load_samples(hexed)
    assert [s.id for s in loaded] == ["g1"] and loaded.problems[0].line == 4 and "digits" in loaded.problems[0].message


def test_deep_nesting_in_a_record_is_one_bad_record(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_good_around(b'{"id": "a", "output": "x", "metadata": {"m": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}")
                     + b'{"id": "b", "output": "x", "metadata": {"m": ' + b"[" * 150 + b"]" * 150 + b"}}\n")
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["g1", "g2"]
    assert "nested too deeply" in loaded.problems[0].message and "nested deeper than 100" in loaded.problems[1].message


@pytest.mark.timeout(20)
@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".yaml", ".json", ".txt"])
def test_pipes_and_devices_are_refused_without_blocking(tmp_path: Path, suffix: str):
    import os

    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    with pytest.raises(RubricError, match="got a named pipe"):
        load_samples(fifo)
    zero = tmp_path / f"zero{suffix}"
    zero.symlink_to("/dev/zero")
    with pytest.raises(RubricError, match="got a device"):
        load_samples(zero)


@pytest.mark.timeout(20)
def test_a_pipe_inside_a_samples_folder_is_reported_and_skipped(tmp_path: Path):
    import os

    (tmp_path / "a.txt").write_text("first")
    os.mkfifo(tmp_path / "b.txt")
    loaded = load_samples(tmp_path)
    assert [s.id for s in loaded] == ["a"] and "named pipe" in loaded.problems[0].message


def test_empty_sources_say_so_when_streamed_too(tmp_path: Path):
    for name, text in (("e.jsonl", ""), ("h.csv", "id,output\n")):
        (tmp_path / name).write_text(text)
        assert [p.message for p in iter_samples(tmp_path / name)][-1].startswith("no samples found")


def test_overlong_lines_are_skipped_without_being_kept(tmp_path: Path):
    from rubric_studio.core.textstream import iter_lines

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"short\n" + b"x" * 1000 + b"\nafter\r\nlast")
    with path.open("rb") as handle:
        lines = list(iter_lines(handle, max_chars=100))
    assert [(line.number, line.text, line.too_long) for line in lines] == [
        (1, "short\n", False), (2, "", True), (3, "after\r\n", False), (4, "last", False)]


def test_streaming_a_large_file_keeps_memory_small(tmp_path: Path):
    import tracemalloc

    path = tmp_path / "s.jsonl"
    record = json.dumps({"output": "x" * 200})
    with path.open("w") as handle:
        for index in range(40_000):  # ~9 MB
            handle.write(record.replace("{", f'{{"id": "{index}", ', 1) + "\n")
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_samples(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 40_000 and peak < 6_000_000  # ids are remembered for duplicates; texts are not


def test_a_half_written_last_line_is_reported_on_that_line(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a", "output": "x"}\n{"id": "broken", "output": \n')
    loaded = load_samples(path)
    assert [s.id for s in loaded] == ["a"] and (loaded.problems[0].line, loaded.problems[0].column) == (2, 28)


def test_a_json_samples_file_names_the_line_and_column_of_a_bad_record(tmp_path: Path):
    listed = tmp_path / "list.json"
    listed.write_text('[\n  {"id": "a", "output": "x"},\n  {"id": "b", "outputz": 3},\n  5\n]\n')
    loaded = load_samples(listed)
    assert [(p.line, p.column) for p in loaded.problems] == [(3, 3), (4, 3)]
    assert str(loaded.problems[0]).startswith(f"{listed}:3:3: record 2: record has no 'output'")
    assert "got int" in str(loaded.problems[1])
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text('{"name": "x", "samples": [\n  {"id": "a", "output": "x"},\n    {"id": "b"}, [1]\n],\n "other": [{}]}')
    loaded = load_samples(wrapped)
    assert [(p.line, p.column) for p in loaded.problems] == [(3, 5), (3, 18)]
    twice = tmp_path / "twice.json"  # the last "samples" key is the one read, as json.loads does
    twice.write_text('{"samples": [{"id": "a", "output": "x"}, {}],\n "samples": [\n  {"id": "b", "output": "y"}, {"id": "c"}]}')
    loaded = load_samples(twice)
    assert [s.id for s in loaded] == ["b"] and [(p.line, p.column) for p in loaded.problems] == [(3, 31)]
