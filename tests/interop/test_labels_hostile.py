"""``rubric-studio labels import|export`` on hostile input: every bad file or reply is exit 2 with
file:line:col (never a traceback), no import changes a label without saying so, notes round-trip
byte for byte, and the samples guard of ``grade`` applies to the Label Studio tasks file.

The Label Studio server side (token, redirects) is in ``test_labels_hostile_server.py``.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label, load_labels

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "fixtures" / "label_studio"
SAMPLE = "refund-within-window"  # an id of the samples beside the rubric
OTHER = "duplicate-charge"

SIDECAR = """\
refund-within-window:
  verdict: pass
  note: kept as it is
  annotator: alice
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path, dirs_exist_ok=True)
    (tmp_path / "support_reply.labels.yaml").write_text(SIDECAR, encoding="utf-8")
    return tmp_path / "support_reply.yaml"


def _sidecar(project: Path) -> str:
    return project.with_name("support_reply.labels.yaml").read_text(encoding="utf-8")


def _import(project: Path, name: str, content: str | bytes, *extra: str) -> int:
    target = project.with_name(name)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8", newline="")
    return main(["labels", "import", str(project), str(target), *extra])


def _jsonl(sample_id: str, **raw: str) -> str:
    """One JSON Lines row: the sample's id and columns given as raw JSON (``score="9"``, ``note="{}"``)."""
    return "{" + ", ".join([f'"id": {json.dumps(sample_id)}', *(f'"{k}": {v}' for k, v in raw.items())]) + "}\n"


def _refused(project: Path, capsys, where: str, *what: str) -> str:
    """stderr, after checking it names ``where`` and each of ``what``, shows no traceback and nothing was written."""
    err = capsys.readouterr().err
    assert f"{project.parent / where}" in err, err
    for part in what:
        assert part in err, err
    assert "Traceback" not in err
    assert _sidecar(project) == SIDECAR
    return err


# -- tracebacks ----------------------------------------------------------------------------------
def test_jsonl_nested_100000_deep_is_refused_with_its_place(project, capsys):
    line = _jsonl(SAMPLE, note="[" * 100_000 + "]" * 100_000)
    assert _import(project, "rows.jsonl", _jsonl(OTHER, verdict='"pass"') + line) == 2
    _refused(project, capsys, "rows.jsonl:2:1", "nested deeper than 100 levels")


def test_label_studio_export_nested_100000_deep_is_refused_with_its_place(project, capsys):
    assert _import(project, "export.json", "[" * 100_000 + "]" * 100_000) == 2
    _refused(project, capsys, "export.json:1:1", "nested deeper than 100 levels")


def test_a_5000_digit_number_in_jsonl_is_refused_with_its_place(project, capsys):
    assert _import(project, "rows.jsonl", _jsonl(SAMPLE, score="9" * 5000)) == 2
    _refused(project, capsys, "rows.jsonl:1:", "a number with 5000 digits")


def test_users_file_nested_deep_or_with_a_huge_number_is_refused(project, capsys):
    export = str(RECORDED / "support_reply.export.json")
    for content in ("[" * 100_000 + "]" * 100_000, '{"1": %s}' % ("9" * 5000)):
        users = project.with_name("users.json")
        users.write_text(content, encoding="utf-8")
        assert main(["labels", "import", str(project), export, "--users", str(users)]) == 2
        _refused(project, capsys, "users.json:1:1", "users.json")


def test_a_huge_csv_field_is_read_and_a_row_of_endless_cells_is_refused(project, capsys):
    note = "word, \"quoted\"\r\n" * 200_000
    cell = '"' + note.replace('"', '""') + '"'
    assert _import(project, "sheet.csv", f"id,annotator,note\r\n{SAMPLE},bob,{cell}\r\n") == 0
    assert load_labels(project.with_name("support_reply.labels.yaml")).by_annotator[SAMPLE]["bob"].note == note
    project.with_name("support_reply.labels.yaml").write_text(SIDECAR, encoding="utf-8")
    assert _import(project, "wide.csv", f"id,annotator,verdict\n{SAMPLE},bob,pass" + ",x" * 300_000 + "\n") == 2
    _refused(project, capsys, "wide.csv:2:", "expected 3 cells as in the header")


# -- silent changes ------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "content", "where"), [
    ("sheet.csv", f"id,annotator,verdict\n{SAMPLE},bob,pass\nrefund-within-windw,bob,fail\n", "sheet.csv:3:1"),
    ("rows.jsonl", f'{{"id": "{SAMPLE}", "verdict": "pass"}}\n{{"annotator": "bob", "id": "nobody", "verdict": "fail"}}\n',
     "rows.jsonl:2:"),
])
def test_labels_of_samples_in_no_samples_file_are_refused(project, capsys, name, content, where):
    assert _import(project, name, content) == 2
    err = _refused(project, capsys, where, "is in no samples file", "support_reply.samples.jsonl")
    if name == "sheet.csv":
        assert f"did you mean {SAMPLE!r}" in err


def test_label_studio_tasks_of_samples_in_no_samples_file_are_refused(project, capsys):
    tasks = json.loads((RECORDED / "support_reply.export.json").read_text(encoding="utf-8"))
    tasks[1]["data"]["sample_id"] = "gone-since"
    assert _import(project, "export.json", json.dumps(tasks)) == 2
    _refused(project, capsys, "export.json", f"task {tasks[1]['id']}", "'gone-since' is in no samples file")


def test_samples_named_with_samples_decide_which_ids_are_known(project, capsys):
    other = project.with_name("other.jsonl")
    other.write_text('{"id": "elsewhere", "output": "x"}\n', encoding="utf-8")
    assert _import(project, "sheet.csv", "id,annotator,verdict\nelsewhere,bob,pass\n", "--samples", str(other)) == 0
    assert load_labels(project.with_name("support_reply.labels.yaml")).by_annotator["elsewhere"]["bob"].verdict == "pass"


@pytest.mark.parametrize("row", [f"{SAMPLE},bob", f"{SAMPLE},bob,pass", SAMPLE])
def test_a_short_csv_row_is_refused_not_read_as_no_label(project, capsys, row):
    assert _import(project, "sheet.csv", f"id,annotator,verdict,note\n{row}\n") == 2
    _refused(project, capsys, "sheet.csv:2:", "expected 4 cells as in the header", f"got {row.count(',') + 1}")


@pytest.mark.parametrize(("annotation", "said"), [
    ({"id": 41, "completed_by": 1}, "annotation 41 has no result"),
    ({"id": 42, "completed_by": 1, "result": []}, "annotation 42 has no result"),
    ({"id": 43, "completed_by": 1, "result": "junk"}, "annotation 43 has no result"),
    ({"id": 44, "completed_by": 1, "result": [5, {"from_name": "verdict"}]}, "annotation 44 has no result"),
])
def test_a_label_studio_annotation_without_a_result_changes_nothing_and_says_so(project, capsys, annotation, said):
    sidecar = project.with_name("support_reply.labels.yaml")
    sidecar.write_text(SIDECAR.replace("annotator: alice", "annotator: user-1"), encoding="utf-8")
    tasks = [{"id": 7, "data": {"sample_id": SAMPLE}, "annotations": [annotation]}]
    assert _import(project, "export.json", json.dumps(tasks)) == 0
    err = capsys.readouterr().err
    assert f"task 7: {said}" in err and "0 labels by 0 annotators" in err
    assert load_labels(sidecar).by_annotator[SAMPLE]["user-1"] == Label("pass", note="kept as it is")


def test_a_malformed_control_value_is_named(project, capsys):
    result = [{"from_name": "verdict", "value": {"choices": ["pass"]}},
              {"from_name": "score", "value": {"number": "lots"}},
              {"from_name": "note", "value": {"text": [{"nested": 1}]}}]
    tasks = [{"id": 7, "data": {"sample_id": SAMPLE}, "annotations": [{"id": 9, "completed_by": 1, "result": result}]}]
    assert _import(project, "export.json", json.dumps(tasks)) == 0
    err = capsys.readouterr().err
    assert "task 7: annotation 9: control 'score'" in err and "task 7: annotation 9: control 'note'" in err


@pytest.mark.parametrize("value", ["true", "false"])
def test_a_boolean_cell_is_refused(project, capsys, value):
    assert _import(project, "rows.jsonl", _jsonl(SAMPLE, **{"resolves-issue": value})) == 2
    _refused(project, capsys, "rows.jsonl:1:", f"resolves-issue: expected met, unmet or nothing, got {value}")


@pytest.mark.parametrize(("value", "kind"), [("{}", "an object"), ("[\"a\"]", "a list"), ("7", "a number"),
                                             ("true", "true")])
def test_a_note_that_is_not_text_is_refused(project, capsys, value, kind):
    assert _import(project, "rows.jsonl", _jsonl(SAMPLE, note=value)) == 2
    _refused(project, capsys, "rows.jsonl:1:", f"note: expected text or nothing, got {kind}")


NOTES = ["  leading and trailing  ", "tab\tinside\t", "cr\rlf\r\nand lf\n", "\rstarts with CR", "\tstarts with TAB",
         "=SUM(A1)", "+1", "-1", "@handle", "'=already quoted", "''+two quotes", "'plain quote", "line\u2028separator",
         "next\x85line", "ends with a newline\n", '"quoted", with commas', "é ✓ 𝄞"]


def _yaml_string(text: str) -> str:
    """``text`` as a YAML double-quoted string (JSON's escapes, and ``\\u`` for what is not printable)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in quoted)


def _hand_written(notes: list[str]) -> str:
    """A sidecar holding ``notes`` exactly, annotator ``a<i>`` giving note i (odd ones on one sample, even on another)."""
    text = ""
    for sample, first in ((OTHER, 0), (SAMPLE, 1)):
        text += f"{sample}:\n  annotators:\n" + "".join(
            f"    a{i}: {{verdict: pass, note: {_yaml_string(notes[i])}}}\n" for i in range(first, len(notes), 2))
    return text


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_notes_round_trip_byte_for_byte(project, fmt):
    sidecar = project.with_name("support_reply.labels.yaml")
    sidecar.write_text(_hand_written(NOTES), encoding="utf-8")
    original = load_labels(sidecar).by_annotator
    assert sorted(lab.note for labels in original.values() for lab in labels.values()) == sorted(NOTES)
    out = project.with_name(f"labels.{fmt}")
    assert main(["labels", "export", str(project), "--to", fmt, "-o", str(out)]) == 0
    fresh = project.with_name("fresh.labels.yaml")
    assert main(["labels", "import", str(project), str(out), "--labels", str(fresh)]) == 0
    assert load_labels(fresh).by_annotator == original
    again = project.with_name(f"again.{fmt}")
    assert main(["labels", "export", str(project), "--to", fmt, "--labels", str(fresh), "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


# -- CSV export ----------------------------------------------------------------------------------
def test_csv_export_quotes_line_breaks_and_defuses_formulas(project, capsys):
    project.with_name("support_reply.labels.yaml").write_text(_hand_written(NOTES), encoding="utf-8")
    assert main(["labels", "export", str(project), "--to", "csv"]) == 0
    out = capsys.readouterr().out
    rows = list(csv.reader(io.StringIO(out, newline="")))
    width = len(rows[0])
    assert all(len(row) == width for row in rows)  # no row split by a CR
    notes = {row[1]: row[4] for row in rows[1:] if row[1]}
    assert notes["a2"] == "cr\rlf\r\nand lf\n"
    for index, note in enumerate(NOTES):
        expected = "'" + note if note.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r") else note
        assert notes[f"a{index}"] == expected


@pytest.mark.parametrize(("separator", "name"), [(";", "';'"), ("\t", "tab")])
def test_a_semicolon_or_tab_separated_sheet_is_read(project, capsys, separator, name):
    rows = [["id", "annotator", "verdict", "note"], [SAMPLE, "bob", "fail", "a, b; c"]]
    text = "".join(separator.join(f'"{c}"' if separator in c else c for c in row) + "\n" for row in rows)
    assert _import(project, "sheet.csv", text) == 0
    assert f"read as {name}-separated" in capsys.readouterr().err
    assert load_labels(project.with_name("support_reply.labels.yaml")).by_annotator[SAMPLE]["bob"] == Label(
        "fail", note="a, b; c")


# -- export guard --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["label-studio", "csv"])
def test_export_refuses_samples_linked_out_of_the_rubric_folder(project, tmp_path_factory, monkeypatch, capsys, fmt):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh").mkdir()
    decoy = home / ".ssh" / "id_decoy"
    decoy.write_text('{"id": "secret", "output": "DECOY-PRIVATE-KEY"}\n', encoding="utf-8")
    planted = project.with_name("support_reply.samples.jsonl")
    planted.unlink()
    planted.symlink_to(decoy)
    out = project.parent / "out"
    assert main(["labels", "export", str(project), "--to", fmt, "-o", str(out / "x.csv" if fmt == "csv" else out)]) == 2
    err = capsys.readouterr().err
    assert "is outside the folder" in err and "Traceback" not in err
    assert "--allow-code" not in err  # labels has no such option: naming the samples is the way
    written = [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()] if out.exists() else []
    assert not any("DECOY" in text for text in written)
