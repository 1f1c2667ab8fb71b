"""Hostile rubric, labels and foreign files end in a positioned message (exit 2): never a
traceback, a hang, a crash or a silently wrong value.

Cases that could crash the interpreter (very deep nesting) or block (a FIFO, /dev/zero)
run the real command in a subprocess under a timeout, so a segfault or a hang fails the
test instead of taking pytest down with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.document import EditError, RubricDocument
from rubric_studio.core.files import MAX_FILE_BYTES, parse_user_json, read_user_file
from rubric_studio.core.labels import load_labels, set_verdict
from rubric_studio.core.loading import load_rubric, parse_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import YamlLimits, load_with_positions, safe_load
from rubric_studio.interop import import_rubric
from tests._timing import scaled

ROOT = Path(__file__).resolve().parents[2]
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")
RUBRIC = "name: r\ncriteria:\n  - id: c\n    outcome: x\n"


def billion_laughs(levels: int = 9) -> str:
    """Nine lines that expand to 9**9 strings."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def refusal(text: str) -> str:
    """The one problem of ``text`` as ``file:line:col: message``."""
    with pytest.raises(RubricError) as caught:
        parse_rubric(text, "r.yaml")
    return "\n".join(str(p) for p in caught.value.problems)


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rubric_studio.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=scaled(timeout))


# ---------------------------------------------------------------------------- aliases


@pytest.mark.timeout(30)
def test_billion_laughs_is_refused_at_the_alias_before_expanding():
    text = billion_laughs() + "name: bomb\ncriteria:\n  - id: c1\n    outcome: *l8\n"
    message = refusal(text)
    assert message.startswith("r.yaml:6:10: YAML alias expansion too large")  # the first alias over the budget
    assert "refused" in message


@pytest.mark.timeout(30)
def test_an_absolute_cap_bounds_aliases_even_in_a_large_document():
    own = "items: [" + ", ".join(["x"] * 50_000) + "]\n"  # 50,000 own nodes: the ratio alone would allow 500,000
    text = own + "base: &b [" + ", ".join(["y"] * 999) + "]\nmore: [" + ", ".join(["*b"] * 300) + "]\n"
    with pytest.raises(RubricError, match="alias expansion too large"):
        safe_load(text, "big.yaml")
    assert safe_load(text, "big.yaml", limits=YamlLimits(max_alias_nodes=400_000))["more"][0][0] == "y"


@pytest.mark.parametrize("text, where", [
    ("name: rec\ncriteria: &c\n  - id: c1\n    outcome: x\n    tags: *c\n", "r.yaml:5:11:"),
    ("&a {name: rec, criteria: [{id: c1, outcome: x}], description: *a}\n", "r.yaml:1:63:"),
])
def test_a_recursive_alias_is_refused_with_its_position(text, where):
    message = refusal(text)
    assert message.startswith(where) and "recursive YAML alias" in message


def test_undefined_alias_and_twice_defined_anchor_are_positioned_messages():
    assert refusal("name: x\ncriteria: *nowhere\n").startswith("r.yaml:2:11: YAML alias *nowhere refers to no anchor")
    assert refusal("name: &n x\ndescription: &n y\ncriteria: [a]\n").startswith("r.yaml:2:14: YAML anchor &n is defined twice")


def test_merge_keys_keep_working_and_written_keys_win():
    rubric = parse_rubric(
        "name: merged\n"
        "criteria:\n"
        "  - &judged {outcome: Is polite, weight: 2, required: true}\n"
        "  - {<<: *judged, id: kind, outcome: Is kind}\n"
        "  - {<<: [{weight: 3}, *judged], id: warm, outcome: Is warm}\n",
        "r.yaml",
    )
    kind, warm = rubric.criterion("kind"), rubric.criterion("warm")
    assert (kind.outcome, kind.weight, kind.required) == ("Is kind", 2, True)
    assert (warm.weight, warm.required) == (3, True)  # the earlier merged mapping wins


def test_merge_of_something_else_than_a_mapping_is_a_positioned_problem():
    message = refusal("name: x\ncriteria:\n  - {<<: 5, outcome: a}\n")
    assert message.startswith("r.yaml:3:10: a merge key (<<) expects a mapping")


def test_duplicate_keys_written_twice_are_still_reported_once_per_node():
    data, _, problems = load_with_positions("a: &m {k: 1, k: 2}\nb: *m\nc: *m\n", "f.yaml")
    assert data["c"] == {"k": 1}
    assert [str(p) for p in problems] == ["f.yaml:1:14: duplicate key 'k' (first set on line 1); each key may appear once"]


def test_reasonable_aliasing_loads():
    defaults = "defaults: &d {weight: 2, required: false, tags: [a, b, c]}\n"
    criteria = "".join(f"  - {{<<: *d, id: c{n}, outcome: thing {n}}}\n" for n in range(300))
    data = safe_load(defaults + "criteria:\n" + criteria, "r.yaml")
    assert len(data["criteria"]) == 300 and data["criteria"][299]["tags"] == ["a", "b", "c"]


# ---------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [101, 600, 5000])
def test_nesting_deeper_than_the_limit_is_a_message_not_a_recursion_error(depth):
    message = refusal("name: deep\ncriteria: " + "[" * depth + "]" * depth + "\n")
    # libyaml >= 0.2.6 (PyYAML 6.0.4) stops at its own cap of 1000 levels, before ours counts:
    # the message is the same, the column is where it stopped.
    position = "r.yaml:2:110: " if depth < 1000 else "r.yaml:2:"
    assert message.startswith(position) and "YAML nested deeper than 100 levels" in message


def test_nesting_up_to_the_limit_loads():
    data = safe_load("x: " + "[" * 99 + "]" * 99 + "\n", "f.yaml")
    depth, value = 1, data["x"]
    while value:
        depth, value = depth + 1, value[0]
    assert depth == 99


def test_nesting_counts_what_aliases_bring_in():
    anchored = "a: &a " + "[" * 50 + "]" * 50 + "\n"
    assert safe_load(anchored + "b: " + "[" * 49 + "*a" + "]" * 49 + "\n", "f.yaml")["b"]
    with pytest.raises(RubricError, match=r"f.yaml:2:54: YAML nested deeper than 100 levels once alias \*a"):
        safe_load(anchored + "b: " + "[" * 50 + "*a" + "]" * 50 + "\n", "f.yaml")


@POSIX_ONLY
@pytest.mark.parametrize("body", ["[" * 50_000 + "]" * 50_000, "{a: " * 50_000 + "1" + "}" * 50_000],
                         ids=["lists", "mappings"])
def test_50000_deep_nesting_is_refused_in_a_real_run(tmp_path, body):
    rubric = tmp_path / "deep.yaml"
    rubric.write_text("name: deep\ncriteria: " + body + "\n")
    done = run_cli("validate", str(rubric))
    assert done.returncode == 2, done.stderr[-2000:]  # a segfault is -11, a RecursionError traceback exits 1
    assert f"{rubric}:2:" in done.stderr and "nested deeper than 100 levels" in done.stderr
    assert "Traceback" not in done.stderr


@POSIX_ONLY
def test_50000_deep_nesting_in_the_studio_document_is_refused(tmp_path):
    rubric = tmp_path / "deep.yaml"
    rubric.write_text("name: deep\ncriteria: " + "[" * 50_000 + "]" * 50_000 + "\n")
    script = ("import sys\nfrom rubric_studio.core.document._document import RubricDocument\n"
              "doc = RubricDocument.load(sys.argv[1], allow_syntax_errors=True)\n"
              "print(doc.yaml_problem)\nprint(doc.structure_problem)\n")
    done = subprocess.run([sys.executable, "-c", script, str(rubric)], cwd=ROOT, capture_output=True, text=True,
                          timeout=scaled(60))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("nested deeper than 100 levels") == 2


# ---------------------------------------------------------------------------- the studio document and labels


@pytest.mark.timeout(30)
def test_the_studio_document_refuses_a_bomb_before_ruamel_reads_it(tmp_path):
    rubric = tmp_path / "bomb.yaml"
    rubric.write_text(billion_laughs() + "name: bomb\ncriteria:\n  - id: c1\n    outcome: *l8\n")
    with pytest.raises(RubricError, match="alias expansion too large"):
        RubricDocument.load(rubric)
    document = RubricDocument.load(rubric, allow_syntax_errors=True)
    assert "alias expansion too large" in str(document.yaml_problem)
    with pytest.raises(EditError, match="alias expansion too large"):
        document.set_rubric_field("name", "x")


@pytest.mark.timeout(30)
def test_a_labels_sidecar_bomb_is_refused_on_read_and_on_write(tmp_path):
    labels = tmp_path / "r.labels.yaml"
    labels.write_text(billion_laughs() + "s1: pass\n")
    with pytest.raises(RubricError, match="alias expansion too large"):
        load_labels(labels)
    with pytest.raises(ValueError, match="alias expansion too large"):
        set_verdict(labels, "s1", "fail")


def test_a_latin1_labels_file_is_a_positioned_message(tmp_path):
    labels = tmp_path / "r.labels.yaml"
    labels.write_bytes("s1: {verdict: pass, note: caf\xe9}\n".encode("latin-1"))
    with pytest.raises(RubricError) as caught:
        load_labels(labels)
    assert str(caught.value).startswith(f"{labels}:1:30: not UTF-8 text: byte 0xe9")


# ---------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("literal", ["9" * 5000, "0x" + "f" * 5000], ids=["decimal", "hex"])
def test_a_5000_digit_integer_is_a_positioned_message(literal):
    message = refusal(f"name: n\ncriteria:\n  - id: c\n    outcome: x\n    weight: {literal}\n")
    assert message.startswith("r.yaml:5:13: a number with") and "digits" in message
    assert message.count("\n") == 0  # not repeated as "weight: Input should be a valid number (got None)"


# ---------------------------------------------------------------------------- files: devices, size, encoding


@POSIX_ONLY
@pytest.mark.parametrize("command", ["validate", "grade"])
def test_dev_zero_and_a_fifo_as_the_rubric_exit_2_without_hanging(tmp_path, command):
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"id": "a", "output": "x"}\n')
    fifo = tmp_path / "r.yaml"
    os.mkfifo(fifo)
    for rubric, kind in ((fifo, "named pipe"), (Path("/dev/zero"), "device")):
        args = [command, str(rubric)] + ([str(samples)] if command == "grade" else [])
        done = run_cli(*args, timeout=60)  # a blocking open would time out here
        assert done.returncode == 2, done.stderr[-2000:]
        assert f"{rubric}: expected a rubric file, got a {kind}" in done.stderr


def test_a_file_over_the_size_cap_is_refused_before_reading_it(tmp_path):
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(RubricError, match="file larger than 20 MB"):
        load_rubric(huge)
    with pytest.raises(RubricError, match=r"huge.yaml:1:1: control character U\+0000"):  # read: the cap is a parameter
        read_user_file(huge, max_bytes=MAX_FILE_BYTES + 1)


def test_a_latin1_rubric_names_line_and_column_of_the_byte(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_bytes("name: n\ncriteria:\n  - id: c\n    outcome: r\xe9ponse\n".encode("latin-1"))
    with pytest.raises(RubricError) as caught:
        load_rubric(rubric)
    assert str(caught.value) == (f"{rubric}:4:15: not UTF-8 text: byte 0xe9 cannot be decoded; "
                                 "save the file as UTF-8")


def test_a_utf16_rubric_says_so(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_bytes(RUBRIC.encode("utf-16"))
    with pytest.raises(RubricError, match="the file is UTF-16; save it as UTF-8"):
        load_rubric(rubric)


def test_a_bom_is_accepted(tmp_path):
    rubric = tmp_path / "r.yaml"
    rubric.write_bytes(b"\xef\xbb\xbf" + RUBRIC.encode())
    assert load_rubric(rubric).name == "r"


@pytest.mark.parametrize("raw, where, name", [
    (b"name: a\x00b\ncriteria: [x]\n", "1:8", "U+0000 (NUL)"),
    (b"name: a\ncriteria: [\x1b[31mred]\n", "2:12", "U+001B (ESC)"),
    (b"name: a\ncriteria: [x]\ndescription: \x7f\n", "3:14", "U+007F"),
])
def test_control_characters_are_refused_with_line_and_column(tmp_path, raw, where, name):
    rubric = tmp_path / "r.yaml"
    rubric.write_bytes(raw)
    with pytest.raises(RubricError) as caught:
        load_rubric(rubric)
    assert str(caught.value).startswith(f"{rubric}:{where}: control character {name} is not allowed")


def test_control_characters_in_editor_text_are_refused_with_line_and_column():
    assert refusal("name: a\ncriteria: [x\x07]\n").startswith("r.yaml:2:13: control character U+0007 (BEL)")


# ---------------------------------------------------------------------------- values


def _bad(line: str, indent: str = "    ") -> str:
    return f"name: v\ncriteria:\n  - id: c\n    outcome: x\n{indent}{line}\n"


@pytest.mark.parametrize("text, where, expected", [
    (_bad("weight: .nan"), "5:13", "criteria[0].weight: expected a finite number, got nan"),
    (_bad("weight: .inf"), "5:13", "criteria[0].weight: expected a finite number, got inf"),
    (_bad("weight: -.inf"), "5:13", "criteria[0].weight: expected a finite number, got -inf"),
    (_bad("weight: 1.0e+400"), "5:13", "criteria[0].weight: expected a finite number, got inf"),
    (_bad("weight: true"), "5:13", "criteria[0].weight: expected a number, got true"),
    (_bad("weight: 10000001"), "5:13", "criteria[0].weight: Input should be less than or equal to 1000000"),
    (_bad("min_score: .nan"), "5:16", "criteria[0].min_score: expected a finite number, got nan"),
    (_bad("pass_threshold: true", indent=""), "5:17", "pass_threshold: expected a number, got true"),
    (_bad("pass_threshold: .nan", indent=""), "5:17", "pass_threshold: expected a finite number, got nan"),
    (_bad("judge: {temperature: .nan}", indent=""), "5:22", "judge.temperature: expected a finite number"),
    (_bad("judge: {timeout: .inf}", indent=""), "5:18", "judge.timeout: expected a finite number, got inf"),
    (_bad("judge: {concurrency: true}", indent=""), "5:22", "judge.concurrency: expected a number, got true"),
    ("name: v\ncriteria:\n  - check: {type: length, max_words: 5, timeout: .inf}\n", "3:50",
     "criteria[0].check.timeout: expected a finite number, got inf"),
    ("name: v\ncriteria:\n  - check: {type: length, max_words: true}\n", "3:38",
     "criteria[0].check.max_words: expected a number, got true"),
    ("name: v\ncriteria:\n  - check: {type: length, max_chars: 10000000000}\n", "3:38",
     "criteria[0].check.max_chars: Input should be less than or equal to 1000000000"),
])
def test_invalid_values_exit_2_with_the_line_and_column_of_the_value(tmp_path, capsys, text, where, expected):
    rubric = tmp_path / "r.yaml"
    rubric.write_text(text)
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert f"{rubric}:{where}: {expected}" in err, err


def test_score_range_keys_naming_the_same_band_name_both_positions(tmp_path, capsys):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("name: v\ncriteria:\n  - id: c\n    outcome: x\n    score_ranges:\n"
                      "      0: bad\n      5: fine\n      '5': also fine\n")
    assert main(["validate", str(rubric)]) == 2
    err = capsys.readouterr().err
    assert (f"{rubric}:8:7: criteria[0].score_ranges: key '5' is the same band as key 5 (line 7, column 7); "
            "keep one") in err


# ---------------------------------------------------------------------------- foreign files and safe_load


def test_safe_load_returns_plain_data_and_refuses_what_load_with_positions_reports():
    assert safe_load("a: [1, {b: c}]\n", "f.yaml") == {"a": [1, {"b": "c"}]}
    assert safe_load("", "f.yaml") is None
    with pytest.raises(RubricError, match=r"f.yaml:2:1: duplicate key 'a'"):
        safe_load("a: 1\na: 2\n", "f.yaml")
    with pytest.raises(RubricError, match="alias expansion too large"):
        safe_load(billion_laughs(), "f.yaml")


@pytest.mark.parametrize("body, expected", [
    ('{"criterion": "x", "points": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 100 levels"),
    ('{"criterion": "x", "points": ' + "9" * 5000 + "}", "a number with 5000 digits"),
], ids=["deep", "long-number"])
def test_hostile_healthbench_json_is_a_positioned_message(tmp_path, body, expected):
    items = tmp_path / "items.jsonl"
    items.write_text('{"criterion": "Is kind", "points": 2, "tags": []}\n' + body + "\n")
    with pytest.raises(RubricError) as caught:
        import_rubric(items, "healthbench")
    problem = caught.value.problems[0]
    assert (problem.file, problem.line) == (str(items), 2) and expected in problem.message


def test_parse_user_json_positions_syntax_errors_by_the_line_given():
    with pytest.raises(RubricError) as caught:
        parse_user_json('{"a": }', "f.jsonl", line=7)
    assert str(caught.value) == "f.jsonl:7:7: invalid JSON: Expecting value"


@POSIX_ONLY
@pytest.mark.timeout(30)
def test_a_letta_prompt_path_naming_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "prompt.txt")
    suite = tmp_path / "suite.yaml"
    suite.write_text("name: s\ndataset: d.jsonl\ngraders:\n  quality:\n    kind: model_judge\n"
                     "    prompt_path: prompt.txt\n")
    with pytest.raises(RubricError, match="prompt_path: .*expected a prompt file, got a named pipe"):
        import_rubric(suite, "letta")
