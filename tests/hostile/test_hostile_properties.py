"""Property: no mutation of a valid rubric or samples file makes ``validate`` or ``grade`` raise.

Valid files are mutated with byte flips, deletions, truncation and insertions of hostile
fragments taken from the corpus; ``rubric_studio.cli.main`` runs in this process and must
return an exit code in 0-3 without an exception escaping it or a traceback printed, and
``load_samples`` (what the studio calls) may raise nothing but ``RubricError``.
Fragments that would hang or crash the process on purpose (alias bombs, 50,000-deep
nesting) stay in the subprocess corpus.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_studio.cli import main
from rubric_studio.core.problems import RubricError
from rubric_studio.core.samples import load_samples
from tests.hostile.corpus import BIG, MARKUP_IDS, NORMAL_IDS, NORMAL_RUBRIC

FRAGMENTS = [
    b"\x00", b"\x1b]0;evil\x07", b"x[/]", b"q[a]", b"[bold]", b"\xef\xbb\xbf", b"caf\xe9", b"\xff\xfe", b"\xed\xa0\x80",
    b"\\ud800", b"\\udc00x", b'"', b"'", b"\r", b"\n", b"\t", b",", b"- ", b": ", b"{", b"}", b"[", b"]",
    b"&a [1, 2]", b"*a", b"*b", b"<<: *a", b"!!binary aGk=", b"!!python/object/apply:os.system ['true']",
    b"!!set {a, b}", b"%YAML 1.1\n", b"---\n", b"...\n", b"[" * 600, b"{a: " * 200, BIG.encode(),
    b"0x" + b"f" * 5000, b"-" + BIG.encode(), b"1e999999", b".nan", b".inf", b"-.inf", b"true", b"~", b"null",
    b"2024-01-01", b"weight: .nan\n", b"pass_threshold: true\n", b"score_ranges: {5: a, '5': b}\n",
    b"check: {type: json, schema: {pattern: '(('}}", b"check: {type: regex, pattern: '(a'}", b'"x\n',
    b'{"id": "z", "output": "\\ud800"}\n', b'z,"open\n', b"id,output\n", b"samples:\n",
]

SAMPLES = {
    ".jsonl": "".join(json.dumps({"id": i, "output": f"Plain answer {i}.", "metadata": {"k": [1, 2]}}) + "\n" for i in NORMAL_IDS),
    ".csv": "id,input,output,metadata\n" + "".join(f'{i},q,"Plain, answer {i}.","{{""k"": 1}}"\n' for i in NORMAL_IDS),
    ".yaml": "".join(f"- id: {i}\n  output: |\n    Plain answer {i}.\n  metadata: {{k: [1, 2]}}\n" for i in NORMAL_IDS),
    ".json": json.dumps({"samples": [{"id": i, "output": f"Plain answer {i}."} for i in (*NORMAL_IDS, MARKUP_IDS[0])]}),
}
RUBRIC_MORE = NORMAL_RUBRIC + """\
  - id: shape
    check: {type: json, timeout: 0.2, schema: {type: object, properties: {a: {pattern: '^x+$'}}}}
  - id: judged
    outcome: "States the [b]policy[/b]"
    weight: 2
    required: true
    score_ranges: {0: bad, 5: fine, 10: great}
"""


@st.composite
def mutated(draw, text: str) -> bytes:
    """``text`` with up to five flips, deletions, hostile insertions, and maybe a truncation."""
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        action = draw(st.sampled_from(["flip", "delete", "insert", "insert"]))
        if action == "flip" and at < len(data):
            data[at] ^= draw(st.integers(min_value=1, max_value=255))
        elif action == "delete":
            del data[at : at + draw(st.integers(min_value=1, max_value=20))]
        else:
            data[at:at] = draw(st.sampled_from(FRAGMENTS))
    if draw(st.booleans()):
        del data[draw(st.integers(min_value=0, max_value=len(data))) :]
    return bytes(data)


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def assert_handled(argv: list[str]) -> None:
    code, err = run_cli(argv)
    assert code in (0, 1, 2, 3), (code, err)
    assert "Traceback" not in err, err


@pytest.mark.timeout(300)
@settings(max_examples=60)
@given(mutated(RUBRIC_MORE))
def test_mutated_rubrics_never_make_validate_or_grade_raise(content: bytes):
    with tempfile.TemporaryDirectory() as folder:
        rubric, samples = Path(folder) / "r.yaml", Path(folder) / "s.jsonl"
        rubric.write_bytes(content)
        samples.write_text(SAMPLES[".jsonl"])
        assert_handled(["validate", str(rubric)])
        assert_handled(["grade", str(rubric), str(samples), "--format", "json", "--no-cache"])


@pytest.mark.timeout(300)
@settings(max_examples=40)
@pytest.mark.parametrize("suffix", sorted(SAMPLES))
@given(data=st.data())
def test_mutated_samples_never_make_grade_or_the_studio_loader_raise(suffix: str, data):
    content = data.draw(mutated(SAMPLES[suffix]))
    with tempfile.TemporaryDirectory() as folder:
        rubric, samples = Path(folder) / "r.yaml", Path(folder) / f"s{suffix}"
        rubric.write_text(NORMAL_RUBRIC)
        samples.write_bytes(content)
        with contextlib.suppress(RubricError):
            load_samples(samples)
        for fmt in ("json", "jsonl"):
            assert_handled(["grade", str(rubric), str(samples), "--format", fmt, "--no-cache"])
