"""A corpus of hostile rubric and samples files, and the command-line runs to try on each.

:func:`write_corpus` writes every file into a folder, deterministically and small on disk
(alias bombs are a few lines that expand to billions of nodes). :func:`cases` lists the
``rubric-studio`` invocations to try, each with the exit codes a correct program gives and
the sample ids that must still be graded when only some records are bad.

Each file belongs to a *group*, a class of hostility run in its own subprocess so that a
crash (a signal) or a hang is attributed to that class.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

GRADED = frozenset({0, 1})  # every sample graded: pass or fail (no judge is configured)
INVALID = frozenset({2})
CELL_ERRORS = frozenset({3})
FORMATS = ("table", "json", "markdown", "junit", "jsonl")

NORMAL_RUBRIC = """\
name: normal
pass_threshold: 0.5
criteria:
  - id: short
    check: {type: length, max_words: 60}
  - id: no-boilerplate
    check: {type: keywords, forbidden: ["As an AI"]}
  - id: no-dates
    check: {type: regex, pattern: '\\d{4}-\\d{2}-\\d{2}', expect_match: false}
"""
NORMAL_IDS = ("n1", "n2", "n3")
GOOD = ("g1", "g2")  # ids of the good records around each bad one

MARKUP_IDS = ("x[/]", "q[a]", "\x1b]0;evil\x07", "[bold red]boom[/]", "tab\there\rline")


def _jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def _good(index: int) -> dict:
    return {"id": GOOD[index], "output": f"A fine answer number {index + 1}."}


def _around(bad_line: bytes) -> bytes:
    """A .jsonl file: a good record, the bad line, another good record."""
    return _jsonl(_good(0)) + bad_line.rstrip(b"\n") + b"\n" + _jsonl(_good(1))


def _csv_around(bad_row: bytes) -> bytes:
    return b"id,output\r\ng1,A fine answer number 1.\r\n" + bad_row + b"\r\ng2,A fine answer number 2.\r\n"


def _yaml_around(bad_record: bytes) -> bytes:
    return (b"- id: g1\n  output: A fine answer number 1.\n" + bad_record
            + b"- id: g2\n  output: A fine answer number 2.\n")


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Billion laughs: ``width ** levels`` strings from ``levels`` short lines."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def flow_nesting(depth: int) -> str:
    return "[" * depth + "]" * depth


def _schema_rubric(schema: str, timeout: float = 0.5) -> bytes:
    return (f"name: schema\ncriteria:\n  - id: shape\n    check: {{type: json, timeout: {timeout}, "
            f"schema: {schema}}}\n").encode()


def _rubric_with(line: str) -> bytes:
    """The normal rubric with one more top-level or criterion line (``line`` is YAML, indented as needed)."""
    return (NORMAL_RUBRIC + line + "\n").encode()


BIG = "9" * 5000
#: Files that load without any problem (hostile only to the output, or valid edge cases).
CLEAN = frozenset({
    "r_bom.yaml", "r_markup.yaml", "s_json_payloads.jsonl", "s_surrogate_pair.jsonl", "s_bom.jsonl", "s_bom.csv",
    "s_bom.yaml", "s_bom.json", "s_bom_folder", "s_nul_escaped.jsonl", "s_cr_only.csv", "s_big_field.csv",
    "s_markup.jsonl", "s_markup.csv", "s_identical.jsonl", "s_long_line.jsonl", "s_nul.csv",
})

# ---------------------------------------------------------------------------- files


@dataclass(frozen=True)
class HostileFile:
    """One file of the corpus.

    ``kind`` is "rubric", "samples", "labels" or "card" (written beside a copy of the normal rubric);
    ``special`` is "fifo", "link:<target>" or "folder" for
    files that are not plain bytes. ``valid`` means the rubric should validate cleanly.
    ``graded`` lists the sample ids that must still be graded (empty: the whole file is rejected).
    ``samples`` names the samples file a rubric is graded with (default: the normal one).
    """

    name: str
    kind: str
    group: str
    content: bytes = b""
    special: str | None = None
    valid: bool = False
    graded: tuple[str, ...] = ()
    samples: str = "normal.jsonl"
    grade_codes: frozenset[int] = field(default=INVALID)

    @property
    def clean(self) -> bool:
        return self.name in CLEAN


def _rubrics() -> list[HostileFile]:
    r = HostileFile
    bomb = alias_bomb()
    return [
        # YAML alias bombs, recursive aliases, deep nesting
        r("r_alias_bomb.yaml", "rubric", "yaml-bombs", (bomb + "name: bomb\ncriteria:\n  - id: c1\n    outcome: *l8\n").encode()),
        r("r_alias_bomb_in_key.yaml", "rubric", "yaml-bombs", (NORMAL_RUBRIC + bomb).encode()),
        r("r_alias_recursive.yaml", "rubric", "yaml-bombs", b"name: rec\ncriteria: &c\n  - id: c1\n    outcome: x\n    examples: *c\n"),
        r("r_alias_self_map.yaml", "rubric", "yaml-bombs", b"&a {name: rec, criteria: [{id: c1, outcome: x}], description: *a}\n"),
        r("r_nesting_600.yaml", "rubric", "yaml-deep", f"name: deep\ncriteria: {flow_nesting(600)}\n".encode()),
        r("r_nesting_600_block.yaml", "rubric", "yaml-deep", ("name: deep\ncriteria:\n" + "- " * 600 + "x\n").encode()),
        r("r_nesting_5000.yaml", "rubric", "yaml-deep", f"name: deep\ncriteria: {flow_nesting(5000)}\n".encode()),
        r("r_nesting_50000.yaml", "rubric", "nesting-50000", f"name: deep\ncriteria: {flow_nesting(50000)}\n".encode()),
        r("r_nesting_50000_map.yaml", "rubric", "nesting-50000", ("name: deep\ncriteria: " + "{a: " * 50000 + "1" + "}" * 50000 + "\n").encode()),
        # json check schemas
        r("r_schema_pattern.yaml", "rubric", "json-schema",
          _schema_rubric("{type: object, properties: {a: {type: string, pattern: '^(a|a)+$'}}}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_pattern_properties.yaml", "rubric", "json-schema",
          _schema_rubric("{type: object, patternProperties: {'^(a|a)+$': {type: string}}}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_additional.yaml", "rubric", "json-schema",
          _schema_rubric("{type: object, patternProperties: {'^(a|a)+$': {}}, additionalProperties: false}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_property_names.yaml", "rubric", "json-schema",
          _schema_rubric("{type: object, propertyNames: {pattern: '^(a|a)+$'}}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_ref_url.yaml", "rubric", "json-schema", _schema_rubric("{$ref: 'http://127.0.0.1:9/schema.json'}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_ref_file.yaml", "rubric", "json-schema", _schema_rubric("{$ref: 'file://@ROOT@/s_fifo.jsonl'}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_ref_cycle.yaml", "rubric", "json-schema", _schema_rubric("{$ref: '#'}"),
          valid=True, samples="s_json_payloads.jsonl", grade_codes=CELL_ERRORS),
        r("r_schema_deep.yaml", "rubric", "json-schema",
          _schema_rubric("{type: object, properties: {a: " * 80 + "{}" + "}}" * 80)),
        r("r_schema_bad_pattern.yaml", "rubric", "json-schema", _schema_rubric("{pattern: '(((('}")),
        r("r_schema_nested_groups.yaml", "rubric", "json-schema", _schema_rubric("{pattern: '" + "(" * 1500 + ")" * 1500 + "'}")),
        r("r_schema_bigint.yaml", "rubric", "numbers", _schema_rubric("{type: integer, maximum: " + BIG + "}")),
        r("r_schema_date.yaml", "rubric", "json-schema", _schema_rubric("{const: 2024-01-01}")),
        # 5,000-digit integers
        r("r_bigint_weight.yaml", "rubric", "numbers", f"name: n\ncriteria:\n  - id: c\n    outcome: x\n    weight: {BIG}\n".encode()),
        r("r_bigint_hex_weight.yaml", "rubric", "numbers", f"name: n\ncriteria:\n  - id: c\n    outcome: x\n    weight: 0x{'f' * 5000}\n".encode()),
        r("r_bigint_threshold.yaml", "rubric", "numbers", f"name: n\npass_threshold: {BIG}\ncriteria:\n  - id: c\n    outcome: x\n".encode()),
        r("r_bigint_max_words.yaml", "rubric", "numbers", f"name: n\ncriteria:\n  - id: c\n    check: {{type: length, max_words: {BIG}}}\n".encode()),
        r("r_bigint_name.yaml", "rubric", "numbers", f"name: {BIG}\ncriteria:\n  - id: c\n    outcome: x\n".encode()),
        # devices and pipes
        r("r_fifo.yaml", "rubric", "devices", special="fifo"),
        r("r_zero.yaml", "rubric", "devices", special="link:/dev/zero"),
        r("r_folder.yaml", "rubric", "devices", special="folder"),
        # encodings and bytes
        r("r_bom.yaml", "rubric", "encoding", b"\xef\xbb\xbf" + NORMAL_RUBRIC.encode(), valid=True, grade_codes=GRADED),
        r("r_latin1.yaml", "rubric", "encoding", "name: caf\xe9\ncriteria:\n  - id: c\n    outcome: r\xe9ponse\n".encode("latin-1")),
        r("r_nul.yaml", "rubric", "encoding", b"name: a\x00b\ncriteria:\n  - id: c\n    outcome: x\n"),
        r("r_esc.yaml", "rubric", "encoding", b"name: a\x1b[31mred\ncriteria:\n  - id: c\n    outcome: x\n"),
        r("r_bad_bytes.yaml", "rubric", "encoding", b"name: n\ncriteria:\n  - id: c\n    outcome: \xff\xfe\xfd\n"),
        r("r_utf16.yaml", "rubric", "encoding", NORMAL_RUBRIC.encode("utf-16")),
        # invalid values
        r("r_weight_nan.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    weight: .nan\n"),
        r("r_weight_inf.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    weight: .inf\n"),
        r("r_weight_neg_inf.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    weight: -.inf\n"),
        r("r_weight_true.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    weight: true\n"),
        r("r_threshold_true.yaml", "rubric", "values", b"name: v\npass_threshold: true\ncriteria:\n  - id: c\n    outcome: x\n"),
        r("r_threshold_nan.yaml", "rubric", "values", b"name: v\npass_threshold: .nan\ncriteria:\n  - id: c\n    outcome: x\n"),
        r("r_min_score_nan.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    min_score: .nan\n"),
        r("r_score_ranges_5_and_5.yaml", "rubric", "values",
          b"name: v\ncriteria:\n  - id: c\n    outcome: x\n    score_ranges: {0: bad, 5: fine, '5': also fine}\n"),
        r("r_check_timeout_inf.yaml", "rubric", "values", b"name: v\ncriteria:\n  - id: c\n    check: {type: length, max_words: 5, timeout: .inf}\n"),
        # markup and control characters in user strings (valid rubric: escaping is the output's job)
        r("r_markup.yaml", "rubric", "markup",
          b'name: "x[/] \\e]0;evil\\a q[a] [bold]b[/bold]"\ndescription: "[link=http://x]y[/link] \\e[2J"\n'
          b'criteria:\n  - id: q-a\n    outcome: "mentions [red]x[/] and \\e]8;;http://evil\\e\\\\"\n'
          b"  - id: short\n    check: {type: length, max_words: 60}\n", valid=True, grade_codes=GRADED),
        # shapes: empty, truncated, wrong top-level types
        r("r_empty.yaml", "rubric", "shapes", b""),
        r("r_blank.yaml", "rubric", "shapes", b"\n\n   \n"),
        r("r_truncated.yaml", "rubric", "shapes", NORMAL_RUBRIC.encode()[: NORMAL_RUBRIC.index("keywords") + 14]),
        r("r_list.yaml", "rubric", "shapes", b"- name: x\n- criteria: []\n"),
        r("r_scalar.yaml", "rubric", "shapes", b"just some text\n"),
        r("r_null.yaml", "rubric", "shapes", b"~\n"),
        r("r_criteria_scalar.yaml", "rubric", "shapes", b"name: x\ncriteria: 5\n"),
        r("r_criteria_strings.yaml", "rubric", "shapes", b"name: x\ncriteria: [a, b, 3, null]\n"),
        r("r_two_documents.yaml", "rubric", "shapes", NORMAL_RUBRIC.encode() + b"---\n" + NORMAL_RUBRIC.encode()),
    ]


def _samples() -> list[HostileFile]:
    s = HostileFile
    both = GOOD
    return [
        s("s_json_payloads.jsonl", "samples", "json-schema", _jsonl(
            {"id": "p1", "output": json.dumps({"a" * 30 + "!": "a" * 30 + "!", "a": "a" * 30 + "!"})},
            {"id": "p2", "output": json.dumps({"ok": "fine"})}), graded=("p1", "p2")),
        # lone surrogate escapes
        s("s_surrogate.jsonl", "samples", "encoding", _around(b'{"id": "bad", "output": "x \\ud800 y"}'), graded=both),
        s("s_surrogate_low.jsonl", "samples", "encoding", _around(b'{"id": "bad", "output": "\\udc00"}'), graded=both),
        s("s_surrogate_in_key.jsonl", "samples", "encoding", _around(b'{"id": "bad", "output": "x", "metadata": {"\\ud83d": 1}}'), graded=both),
        s("s_surrogate_id.jsonl", "samples", "encoding", _around(b'{"id": "\\udfff", "output": "x"}'), graded=both),
        s("s_surrogate_pair.jsonl", "samples", "encoding", _around(b'{"id": "pair", "output": "smile \\ud83d\\ude00"}'), graded=(*both, "pair")),
        s("s_surrogate.json", "samples", "encoding", b'[{"id": "g1", "output": "fine"}, {"id": "bad", "output": "\\ud800"}, {"id": "g2", "output": "fine"}]', graded=both),
        s("s_surrogate.yaml", "samples", "encoding", _yaml_around(b'- id: bad\n  output: "\\ud800"\n')),
        s("s_surrogate_bytes.csv", "samples", "encoding", _csv_around(b"bad,x \xed\xa0\x80 y"), graded=both),
        s("s_surrogate_bytes.jsonl", "samples", "encoding", _around(b'{"id": "bad", "output": "x \xed\xa0\x80 y"}'), graded=both),
        s("s_surrogate_metadata.csv", "samples", "encoding",
          b"id,output,metadata\r\ng1,fine,\r\nbad,x,\"{\"\"k\"\": \"\"\\ud800\"\"}\"\r\ng2,fine,\r\n", graded=both),
        # BOMs
        s("s_bom.jsonl", "samples", "encoding", b"\xef\xbb\xbf" + _jsonl(_good(0), _good(1)), graded=both),
        s("s_bom.csv", "samples", "encoding", b"\xef\xbb\xbfid,output\r\ng1,one\r\ng2,two\r\n", graded=both),
        s("s_bom.yaml", "samples", "encoding", b"\xef\xbb\xbf" + _yaml_around(b""), graded=both),
        s("s_bom.json", "samples", "encoding", b"\xef\xbb\xbf" + json.dumps([_good(0), _good(1)]).encode(), graded=both),
        s("s_bom_folder", "samples", "encoding", special="folder:g1.txt=\ufeffone;g2.md=two", graded=both),
        # latin-1 and other bytes
        s("s_latin1.jsonl", "samples", "encoding", _around('{"id": "bad", "output": "caf\xe9"}'.encode("latin-1")), graded=both),
        s("s_latin1.csv", "samples", "encoding", _csv_around("bad,caf\xe9".encode("latin-1")), graded=both),
        s("s_latin1.yaml", "samples", "encoding", _yaml_around("- id: bad\n  output: caf\xe9\n".encode("latin-1"))),
        s("s_latin1.json", "samples", "encoding", '[{"id": "g1", "output": "caf\xe9"}]'.encode("latin-1")),
        s("s_latin1_folder", "samples", "encoding", special="folder:g1.txt=one;bad.txt=caf\xe9;g2.txt=two", graded=both),
        s("s_utf16.jsonl", "samples", "encoding", _jsonl(_good(0)).decode().encode("utf-16")),
        s("s_nul_raw.jsonl", "samples", "encoding", _around(b'{"id": "bad", "output": "a\x00b"}'), graded=both),
        s("s_nul_escaped.jsonl", "samples", "encoding", _around(b'{"id": "nul", "output": "a\\u0000b\\u001b[2J"}'), graded=(*both, "nul")),
        s("s_nul.csv", "samples", "encoding", _csv_around(b"nul,a\x00b"), graded=(*both, "nul")),
        s("s_cr_only.csv", "samples", "encoding", b"id,output\rg1,one\rg2,two\r", graded=both),
        # CSV structure
        s("s_big_field.csv", "samples", "csv", _csv_around(b'big,"' + b"word " * 40_000 + b'"'), graded=(*both, "big")),
        s("s_unclosed_quote.csv", "samples", "csv", b'id,output\r\ng1,fine\r\nbad,"never closed\r\ng2,fine\r\ng3,fine\r\n', graded=(*both, "g3")),
        s("s_unclosed_quote_last.csv", "samples", "csv", b'id,output\r\ng1,fine\r\ng2,fine\r\nbad,"open', graded=both),
        s("s_unclosed_quotes_many.csv", "samples", "csv", b"id,output\r\n" + b'x,"open\r\n' * 200 + b"g1,fine\r\n", graded=("g1",)),
        s("s_text_after_quote.csv", "samples", "csv", _csv_around(b'bad,"quoted"tail'), graded=both),
        s("s_ragged.csv", "samples", "csv", _csv_around(b"bad,x,extra,cells"), graded=both),
        s("s_bad_json_column.csv", "samples", "csv", b'id,output,metadata\r\ng1,x,\r\nbad,x,"{not json"\r\ng2,x,\r\n', graded=both),
        s("s_header_only.csv", "samples", "csv", b"id,output\r\n"),
        s("s_no_output_column.csv", "samples", "csv", b"id,answer\r\na,x\r\n"),
        # 5,000-digit integers
        s("s_bigint.jsonl", "samples", "numbers", _around(b'{"id": "bad", "output": ' + BIG.encode() + b"}"), graded=both),
        s("s_bigint_id.jsonl", "samples", "numbers", _around(b'{"id": ' + BIG.encode() + b', "output": "x"}'), graded=both),
        s("s_bigint_metadata.jsonl", "samples", "numbers", _around(b'{"id": "bad", "output": "x", "metadata": {"n": [' + BIG.encode() + b"]}}"), graded=both),
        s("s_bigint.json", "samples", "numbers", b'[{"id": "g1", "output": "x"}, {"id": "bad", "output": ' + BIG.encode() + b'}, {"id": "g2", "output": "y"}]', graded=both),
        s("s_bigint.yaml", "samples", "numbers", _yaml_around(b"- id: bad\n  output: " + BIG.encode() + b"\n"), graded=both),
        s("s_bigint_hex.yaml", "samples", "numbers", _yaml_around(b"- id: bad\n  output: 0x" + b"f" * 5000 + b"\n"), graded=both),
        s("s_bigint_csv_metadata.csv", "samples", "numbers", b'id,output,metadata\r\ng1,x,\r\nbad,x,"{""n"": ' + BIG.encode() + b'}"\r\ng2,x,\r\n', graded=both),
        # nesting
        s("s_deep.jsonl", "samples", "yaml-deep", _around(b'{"id": "bad", "output": "x", "metadata": {"m": ' + flow_nesting(100_000).encode() + b"}}"), graded=both),
        s("s_deep_200.jsonl", "samples", "yaml-deep", _around(b'{"id": "bad", "output": "x", "metadata": {"m": ' + flow_nesting(200).encode() + b"}}"), graded=both),
        s("s_deep.json", "samples", "yaml-deep", flow_nesting(100_000).encode()),
        s("s_deep_150.yaml", "samples", "yaml-deep", _yaml_around(b"- id: bad\n  output: x\n  metadata: {m: " + flow_nesting(150).encode() + b"}\n")),
        s("s_deep_1000.yaml", "samples", "yaml-deep", _yaml_around(b"- id: bad\n  output: x\n  metadata: {m: " + flow_nesting(1000).encode() + b"}\n")),
        s("s_deep_50000.yaml", "samples", "nesting-50000", ("- id: bad\n  output: " + flow_nesting(50_000) + "\n").encode()),
        s("s_alias_bomb.yaml", "samples", "yaml-bombs", (alias_bomb() + "samples:\n  - id: b\n    output: x\n    metadata: {m: *l8}\n").encode()),
        s("s_alias_recursive.yaml", "samples", "yaml-bombs", b"- &r {id: b, output: x, metadata: {m: *r}}\n"),
        # devices and pipes
        s("s_fifo.jsonl", "samples", "devices", special="fifo"),
        s("s_fifo.csv", "samples", "devices", special="fifo"),
        s("s_fifo.yaml", "samples", "devices", special="fifo"),
        s("s_fifo.txt", "samples", "devices", special="fifo"),
        s("s_zero.jsonl", "samples", "devices", special="link:/dev/zero"),
        s("s_zero.json", "samples", "devices", special="link:/dev/zero"),
        s("s_zero.csv", "samples", "devices", special="link:/dev/zero"),
        s("s_fifo_folder", "samples", "devices", special="folder:g1.txt=one;b.txt=@fifo;g2.md=two", graded=both),
        # markup and control characters as ids
        s("s_markup.jsonl", "samples", "markup", _jsonl(*({"id": i, "output": f"answer [b]{n}[/b] \x1b[2J"} for n, i in enumerate(MARKUP_IDS))), graded=MARKUP_IDS),
        s("s_markup.csv", "samples", "markup", ("id,output\r\n" + "".join(f'"{i}",x\r\n' for i in MARKUP_IDS)).encode(), graded=MARKUP_IDS),
        # shapes
        s("s_identical.jsonl", "samples", "shapes", _jsonl({"id": "twin-a", "output": "same text"}, {"id": "twin-b", "output": "same text"}), graded=("twin-a", "twin-b")),
        s("s_duplicate_ids.jsonl", "samples", "shapes", _jsonl(_good(0), {"id": "g1", "output": "again"}, _good(1)), graded=both),
        s("s_empty.jsonl", "samples", "shapes"),
        s("s_empty.csv", "samples", "shapes"),
        s("s_empty.yaml", "samples", "shapes"),
        s("s_empty.json", "samples", "shapes"),
        s("s_empty_folder", "samples", "shapes", special="folder:"),
        s("s_truncated.jsonl", "samples", "shapes", _jsonl(_good(0), _good(1))[:-15], graded=("g1",)),
        s("s_truncated.json", "samples", "shapes", json.dumps([_good(0), _good(1)]).encode()[:-9]),
        s("s_truncated.yaml", "samples", "shapes", b'- id: g1\n  output: fine\n- id: g2\n  output: "never'),
        s("s_truncated.csv", "samples", "shapes", b'id,output\r\ng1,fine\r\ng2,"cut', graded=("g1",)),
        s("s_object.json", "samples", "shapes", b'{"id": "x", "output": "y"}'),
        s("s_number.json", "samples", "shapes", b"42"),
        s("s_scalar.yaml", "samples", "shapes", b"just text\n"),
        s("s_lines_not_records.jsonl", "samples", "shapes", b'5\n[1, 2]\n"text"\nnull\n'),
        s("s_wrong_types.jsonl", "samples", "shapes", _around(_jsonl(
            {"id": ["a"], "output": "x"}, {"id": "m", "output": "x", "metadata": [1]},
            {"id": "t", "messages": "not a list"}, {"id": "e", "output": "x", "id2": None},
            {"id": "u", "messages": [{"role": "user", "content": "no assistant"}]},
            {"id": "obj", "output": {"nested": [1, 2.5, None, True]}}, {"id": 7, "output": 8})),
          graded=(*both, "e", "obj", "7")),
        s("s_long_line.jsonl", "samples", "shapes", _around(b'{"id": "long", "output": "' + b"x" * 300_000 + b'"}'), graded=(*both, "long")),
    ]


def _ls_export(*annotations: object, sample_id: object = "n1") -> bytes:
    """A Label Studio JSON export of one task holding ``annotations``."""
    return json.dumps([{"id": 1, "data": {"sample_id": sample_id}, "annotations": list(annotations)}]).encode()


#: Labels files that import (``labels import``: exit 0; what cannot be used is a named warning).
LABELS_CLEAN = frozenset({"l_cr_note.csv", "l_semicolons.csv", "l_long_annotator.json"})


def _labels() -> list[HostileFile]:
    """Files for ``labels import normal.yaml FILE --samples normal.jsonl`` (and one rubric whose samples
    are a link out of its folder, for ``labels export``): each refused with its place, never a traceback."""
    lab = HostileFile
    return [
        lab("l_deep.jsonl", "labels", "labels", _jsonl({"id": "n1", "verdict": "pass"})
            + b'{"id": "n2", "note": ' + flow_nesting(100_000).encode() + b"}\n"),
        lab("l_deep.json", "labels", "labels", flow_nesting(100_000).encode()),
        lab("l_deep_annotator.json", "labels", "labels", _ls_export({"completed_by": {"id": "@DEEP@"}})
            .replace(b'"@DEEP@"', flow_nesting(100_000).encode())),
        lab("l_long_annotator.json", "labels", "labels", _ls_export({"completed_by": "x" * 100_000 + ":"})),
        lab("l_bigint.jsonl", "labels", "labels", b'{"id": "n1", "score": ' + BIG.encode() + b"}\n"),
        lab("l_bigint.json", "labels", "labels", b'[{"id": ' + BIG.encode() + b', "data": {"sample_id": "n1"}}]'),
        lab("l_bool.jsonl", "labels", "labels", _jsonl({"id": "n1", "short": True})),
        lab("l_note_object.jsonl", "labels", "labels", _jsonl({"id": "n1", "note": {}})),
        lab("l_unknown_id.jsonl", "labels", "labels", _jsonl({"id": "n1", "verdict": "pass"}, {"id": "n9", "verdict": "fail"})),
        lab("l_unknown_id.json", "labels", "labels", _ls_export({"id": 2, "completed_by": 1, "result": []}, sample_id="n9")),
        lab("l_short_row.csv", "labels", "labels", b"id,annotator,verdict,note\r\nn1,al\r\n"),
        lab("l_wide_row.csv", "labels", "labels", b"id,annotator,verdict\nn1,al,pass" + b",x" * 200_000 + b"\n"),
        lab("l_wide_header.csv", "labels", "labels", b"id" + b",id" * 200_000 + b"\n"),
        lab("l_unclosed.csv", "labels", "labels", b'id,annotator,note\nn1,al,"never closed\n' + b"x" * 100_000),
        lab("l_latin1.csv", "labels", "labels", "id,annotator,note\nn1,al,caf\xe9\n".encode("latin-1")),
        lab("l_escape.csv", "labels", "labels", b"id,annotator,note\nn1,al,\x1b[2J\n"),
        lab("l_cr_note.csv", "labels", "labels", b'id,annotator,note\r\nn1,al,"one\rtwo\r\nthree"\r\n'),
        lab("l_semicolons.csv", "labels", "labels", b'id;annotator;verdict;note\nn1;al;pass;"a; b, c"\n'),
        lab("l_fifo.csv", "labels", "labels", special="fifo"),
        lab("l_zero.jsonl", "labels", "labels", special="link:/dev/zero"),
        lab("l_linked.yaml", "labels", "labels", NORMAL_RUBRIC.encode()),
        lab("l_linked.samples.jsonl", "labels", "labels", special="link:/etc/passwd"),
    ]


def _cards() -> list[HostileFile]:
    """Rubric cards (``<stem>.card.yaml``), each beside a copy of the normal rubric named ``<stem>.yaml``:
    ``validate`` reads the card (exit 2 at its place), ``export`` heads its file with a fresh card's figures."""
    k = HostileFile
    return [
        k("k_nesting_5000.card.yaml", "card", "cards", f"card_version: 1\nrubric: {flow_nesting(5000)}\n".encode()),
        k("k_nesting_5000_map.card.yaml", "card", "cards",
          ("card_version: 1\nrubric: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n").encode()),
        k("k_bigint.card.yaml", "card", "cards", f"card_version: 1\nsamples: {BIG}\nrubric: {{}}\n".encode()),
        k("k_alias_bomb.card.yaml", "card", "cards", (alias_bomb() + "rubric: *l8\n").encode()),
        k("k_syntax.card.yaml", "card", "cards", b"card_version: 1\nrubric: [a, list\n"),
        k("k_shape.card.yaml", "card", "cards", b"rubric: {hash: [1], criteria: x, parts: {}}\nkappa: [1, 2]\n"),
        k("k_latin1.card.yaml", "card", "cards", "rubric: caf\xe9\n".encode("latin-1")),
        k("k_fifo.card.yaml", "card", "cards", special="fifo"),
    ]


def hostile_files() -> list[HostileFile]:
    """Every file of the corpus."""
    return _rubrics() + _samples() + _labels() + _cards()


def _write_folder(path: Path, spec: str) -> None:
    path.mkdir()
    for entry in filter(None, spec.split(";")):
        name, _, text = entry.partition("=")
        if text == "@fifo":
            os.mkfifo(path / name)
        else:
            (path / name).write_bytes(text.encode("latin-1" if "\xe9" in text else "utf-8"))


def write_corpus(root: Path) -> None:
    """Write the normal files and every hostile file into ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "normal.yaml").write_text(NORMAL_RUBRIC)
    (root / "normal.jsonl").write_bytes(_jsonl(*({"id": i, "output": f"Plain answer {i}."} for i in NORMAL_IDS)))
    for hostile in hostile_files():
        target = root / hostile.name
        if hostile.special == "fifo":
            os.mkfifo(target)
        elif hostile.special == "folder":
            target.mkdir()
        elif hostile.special and hostile.special.startswith("folder:"):
            _write_folder(target, hostile.special.removeprefix("folder:"))
        elif hostile.special and hostile.special.startswith("link:"):
            target.symlink_to(hostile.special.removeprefix("link:"))
        else:
            target.write_bytes(hostile.content.replace(b"@ROOT@", str(root).encode()))
        if hostile.kind == "card":  # the rubric the card is beside
            (root / hostile.name.replace(".card.yaml", ".yaml")).write_text(NORMAL_RUBRIC)


# ---------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Case:
    """One ``rubric-studio`` run on the corpus and what a correct program does.

    ``named`` is the path a problem message must name on stderr (``named_in_stderr`` True),
    must not name (False: the file loads cleanly), or None when either is right.
    """

    id: str
    group: str
    argv: tuple[str, ...]
    codes: frozenset[int]
    graded: tuple[str, ...] = ()
    fmt: str | None = None
    named: str = ""
    named_in_stderr: bool | None = None


def _grade(root: Path, rubric: str, samples: str, fmt: str = "json") -> tuple[str, ...]:
    return ("grade", str(root / rubric), str(root / samples), "--format", fmt, "--no-cache")


def _rubric_cases(root: Path, hostile: HostileFile) -> list[Case]:
    path = str(root / hostile.name)
    named = True if not hostile.valid else (False if hostile.clean else None)
    validate = Case(f"validate {hostile.name}", hostile.group, ("validate", path),
                    frozenset({0}) if hostile.valid else INVALID, named=path, named_in_stderr=named)
    fmts = FORMATS if hostile.group == "markup" else ("json",)
    grades = [Case(f"grade {hostile.name} {hostile.samples} --format {fmt}", hostile.group,
                   _grade(root, hostile.name, hostile.samples, fmt), hostile.grade_codes, fmt=fmt,
                   named=path, named_in_stderr=named) for fmt in fmts]
    return [validate, *grades]


def _samples_cases(root: Path, hostile: HostileFile) -> list[Case]:
    codes = GRADED if hostile.graded else INVALID
    fmts = ["json"]
    if hostile.group == "markup":
        fmts = list(FORMATS)
    elif hostile.name.endswith((".jsonl", ".csv")):
        fmts.append("jsonl")  # the streaming reader
    return [Case(f"grade normal.yaml {hostile.name} --format {fmt}", hostile.group,
                 _grade(root, "normal.yaml", hostile.name, fmt), codes, hostile.graded, fmt,
                 named=str(root / hostile.name), named_in_stderr=not hostile.clean) for fmt in fmts]


def _labels_cases(root: Path, hostile: HostileFile) -> list[Case]:
    """``labels import`` of a labels file (``labels export`` of the rubric whose samples are linked out)."""
    path = str(root / hostile.name)
    if hostile.name.endswith(".samples.jsonl"):
        return []
    if hostile.name.endswith(".yaml"):
        argv = ("labels", "export", path, "--to", "label-studio", "-o", str(root / "l_ls"))
        return [Case(f"labels export {hostile.name}", hostile.group, argv, INVALID,
                     named=str(root / hostile.name.replace(".yaml", ".samples.jsonl")), named_in_stderr=True)]
    clean = hostile.name in LABELS_CLEAN
    argv = ("labels", "import", str(root / "normal.yaml"), path, "--samples", str(root / "normal.jsonl"),
            "--labels", str(root / "l_out.labels.yaml"))
    return [Case(f"labels import {hostile.name}", hostile.group, argv, frozenset({0}) if clean else INVALID,
                 named=path, named_in_stderr=None if clean else True)]


def _card_cases(root: Path, hostile: HostileFile) -> list[Case]:
    """``validate`` refuses the card at its place; ``export`` leaves an unreadable card out of its header."""
    rubric, card = str(root / hostile.name.replace(".card.yaml", ".yaml")), str(root / hostile.name)
    exports = [Case(f"export beside {hostile.name} --to {target}", hostile.group, ("export", rubric, "--to", target),
                    frozenset({0}), named=card, named_in_stderr=False) for target in ("promptfoo", "agentv")]
    return [Case(f"validate beside {hostile.name}", hostile.group, ("validate", rubric), INVALID, named=card,
                 named_in_stderr=True), *exports]


def cases(root: Path) -> list[Case]:
    """Every run to try, in a stable order."""
    normal, samples = str(root / "normal.yaml"), str(root / "normal.jsonl")
    found: list[Case] = [
        Case("validate /dev/zero", "devices", ("validate", "/dev/zero"), INVALID, named="/dev/zero", named_in_stderr=True),
        Case("grade /dev/zero normal.jsonl", "devices", ("grade", "/dev/zero", samples), INVALID, named="/dev/zero", named_in_stderr=True),
        Case("grade normal.yaml /dev/zero", "devices", ("grade", normal, "/dev/zero"), INVALID, named="/dev/zero", named_in_stderr=True),
    ]
    for hostile in hostile_files():
        if hostile.kind == "labels":
            found.extend(_labels_cases(root, hostile))
            continue
        if hostile.kind == "card":
            found.extend(_card_cases(root, hostile))
            continue
        found.extend(_rubric_cases(root, hostile) if hostile.kind == "rubric" else _samples_cases(root, hostile))
    return found


def groups() -> list[str]:
    """The subprocess groups, in a stable order."""
    return sorted({h.group for h in hostile_files()})
