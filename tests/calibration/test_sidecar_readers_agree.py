"""The labels sidecar has two readers of each kind, kept in step on generated sidecars.

* Loading: :func:`~rubric_studio.core.labels._labels.load_sidecar` answers from the fast
  reading (libyaml's events, :func:`~rubric_studio.core.yamlpos.load_plain`) when it can vouch
  for the text, else from the careful one (positions and bounds,
  :func:`~rubric_studio.core.yamlpos.load_with_positions`). Where the fast one answers, it must
  give the careful one's labels; where the careful one finds a problem or refuses the text, the
  fast one must not answer.
* Editing: the entry-by-entry editor cuts the file at its column-0 lines
  (:func:`~rubric_studio.core.labels._splice.entries`) instead of reading the whole document.
  Where it cuts, the pieces must be the whole document's entries: the same ids in the same
  order, each piece read alone giving that entry's value; and an edit made piece by piece must
  give the labels the whole-document editor gives.

The sidecars are written as rubric-studio writes them and as people edit them: comments and
blank lines anywhere, indents of 2 or 4, short forms, flow mappings, block and quoted notes
(some running on at column 0), numeric, quoted and YAML-word ids, several annotators, and now
and then a value that is not a label.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric_studio.core.labels import Label, LabelChange, _splice, _store
from rubric_studio.core.labels._labels import _load_careful_labels, _load_plain_labels
from rubric_studio.core.problems import RubricError
from rubric_studio.core.yamlpos import load_plain, load_with_positions

FILE = "r.labels.yaml"

PLAIN_IDS = st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True)
IDS = st.one_of(
    PLAIN_IDS,
    PLAIN_IDS,
    PLAIN_IDS,
    st.integers(0, 99).map(str),  # read as a number
    st.from_regex(r"[a-z]{1,4} [a-z]{1,4}", fullmatch=True).map(json.dumps),  # "a b"
    st.integers(0, 99).map(lambda n: f'"{n}"'),  # "42": a string that looks like a number
    st.sampled_from(["yes", "no", "on", "null", "true", "1.5", "~", "'single q'"]),  # YAML 1.1 words
)
NAMES = st.sampled_from(["alice", "bob", "carol", "dana", "erin", "adjudicated", "7"])
CRITERIA = st.sampled_from(["tone", "facts", "refund-policy", "greets", "2"])
VERDICTS = st.sampled_from(["pass", "fail", "Pass", "FAIL", "true", "no"])  # YAML booleans read as verdicts
CELLS = st.sampled_from(["met", "unmet", "Met", "true"])
SCORES = st.one_of(st.integers(0, 10).map(str), st.sampled_from(["6.5", "0.5", "10.0", "1.0e+1", "0x0A"]))
TEXT = st.text(st.sampled_from("abcxyz ABC019,.:#-'\"?&!é"), min_size=1, max_size=24)
WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.]{0,20}[A-Za-z0-9.]", fullmatch=True)
COMMENT = st.one_of(st.just(""), WORDS.map(lambda words: f"  # {words}"))
NOT_A_LABEL = st.sampled_from(["verdict: maybe", "score: 11", "criteria: [met]", "colour: red", "score: true"])


@st.composite
def notes(draw, pad: str) -> list[str]:
    """A note's lines, after ``note:`` (the first) and below it (``pad``: the note key's indent)."""
    form = draw(st.sampled_from(["plain", "double", "single", "literal", "folded", "runs-on"]))
    if form == "plain":
        return [f" {draw(WORDS)}{draw(COMMENT)}"]
    if form == "double":
        return [f" {json.dumps(draw(TEXT), ensure_ascii=False)}{draw(COMMENT)}"]
    if form == "single":
        return [" '" + draw(TEXT).replace("'", "''") + "'"]
    if form == "runs-on":  # a quoted note going on at column 0: not an entry of its own
        return [f' "{draw(WORDS)}', f'{draw(PLAIN_IDS)}: {draw(WORDS)}"']
    lines = draw(st.lists(WORDS, min_size=1, max_size=3))
    return [" |" if form == "literal" else " >", *(f"{pad}  {line}" for line in lines)]


@st.composite
def labels(draw, pad: str, step: str, top: bool) -> list[str]:
    """A label's lines at indent ``pad``: its fields, and at the top of an entry its annotators."""
    lines: list[str] = []
    if top and draw(st.booleans()):
        lines.append(f"{pad}annotator: {draw(NAMES)}{draw(COMMENT)}")
    if draw(st.booleans()):
        lines.append(f"{pad}verdict: {draw(VERDICTS)}{draw(COMMENT)}")
    if draw(st.booleans()):
        lines.append(f"{pad}score: {draw(SCORES)}")
    cells = draw(st.dictionaries(CRITERIA, CELLS, max_size=3))
    if cells and draw(st.booleans()):
        lines.append(f"{pad}criteria: {{{', '.join(f'{k}: {v}' for k, v in cells.items())}}}")
    elif cells:
        lines += [f"{pad}criteria:", *(f"{pad}{step}{k}: {v}{draw(COMMENT)}" for k, v in cells.items())]
    if draw(st.booleans()):
        scores = draw(st.dictionaries(CRITERIA, SCORES, min_size=1, max_size=2))
        lines += [f"{pad}criterion_scores:", *(f"{pad}{step}{k}: {v}" for k, v in scores.items())]
    if draw(st.booleans()):
        first, *rest = draw(notes(pad))
        lines += [f"{pad}note:{first}", *rest]
    if draw(st.integers(0, 19)) == 0:
        lines.append(f"{pad}{draw(NOT_A_LABEL)}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f"{pad}# {draw(WORDS)}")
    if top and draw(st.booleans()):
        lines.append(f"{pad}annotators:")
        for name in draw(st.lists(NAMES, min_size=1, max_size=3, unique=True)):
            inner = draw(labels(pad + step * 2, step, top=False))
            lines += [f"{pad}{step}{name}:", *inner] if inner else [f"{pad}{step}{name}: {draw(VERDICTS)}"]
    return lines


@st.composite
def sidecars(draw) -> str:
    """A labels sidecar's text."""
    step = draw(st.sampled_from(["  ", "    "]))
    lines = [f"# {draw(WORDS)}" for _ in range(draw(st.integers(0, 2)))]
    for sample_id in draw(st.lists(IDS, min_size=1, max_size=6, unique=True)):
        if draw(st.integers(0, 2)) == 0:
            lines.append(draw(st.sampled_from(["", f"# {draw(WORDS)}"])))
        form = draw(st.sampled_from(["short", "flow", "block", "block"]))
        body = draw(labels(step, step, top=True)) if form == "block" else []
        if form == "short" or (form == "block" and not body):
            lines.append(f"{sample_id}: {draw(VERDICTS)}{draw(COMMENT)}")
        elif form == "flow":
            score = f", score: {draw(SCORES)}" if draw(st.booleans()) else ""
            lines.append(f"{sample_id}: {{verdict: {draw(VERDICTS)}{score}}}{draw(COMMENT)}")
        else:
            lines += [f"{sample_id}:{draw(COMMENT)}", *body]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "\n\n", "\n# the end\n"]))


def careful(text: str):
    """What the careful reading makes of ``text``: its label set, or the refusal's text."""
    try:
        return _load_careful_labels(text, FILE)
    except RubricError as exc:
        return f"refused: {exc}"


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(sidecars())
def test_where_the_fast_reading_answers_it_gives_the_careful_readings_labels(text: str):
    readable, data = load_plain(text)
    slow = careful(text)
    if readable:
        assert not isinstance(slow, str), f"the fast reading took a text the careful one refuses: {slow}"
        assert data == load_with_positions(text, FILE)[0]
    fast = _load_plain_labels(text, FILE)
    if fast is None:
        return
    assert not isinstance(slow, str) and slow.problems == [], "the fast reading answered for a sidecar with a problem"
    assert (fast.labels, fast.by_annotator) == (slow.labels, slow.by_annotator)


def test_the_generated_sidecars_take_both_readings_and_both_editors():
    """The properties above and below are not empty: the fast reading and the entry splitter each
    answer for some generated sidecars, and decline others."""
    seen = {"fast": 0, "careful only": 0, "cut": 0, "whole": 0}

    @settings(max_examples=200, database=None, derandomize=True)
    @given(sidecars())
    def count(text: str) -> None:
        seen["fast" if _load_plain_labels(text, FILE) is not None else "careful only"] += 1
        seen["cut" if _splice.entries(text) is not None else "whole"] += 1

    count()
    assert all(number >= 10 for number in seen.values()), seen


def whole_document(text: str) -> dict | None:
    """The sidecar's entries as the whole-document reader gives them (None: it refuses the text)."""
    try:
        data, _, problems = load_with_positions(text, FILE)
    except RubricError:
        return None
    return data if isinstance(data, dict) else None


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(sidecars())
def test_where_the_splitter_cuts_the_pieces_are_the_whole_documents_entries(text: str):
    found = _splice.entries(text)
    whole = whole_document(text)
    if found is None or whole is None:
        return
    first, spans, index = found
    assert all(line == "" or line.startswith("#") for line in text[:first].splitlines()), "a value before the first entry"
    assert list(index) == [str(key) for key in whole], "the cut entries are not the document's, in its order"
    for (start, end), key in zip(spans, whole, strict=True):
        piece = text[start:end]
        assert whole_document(piece) == {key: whole[key]}, f"the entry {key!r} reads differently on its own:\n{piece}"


CHANGES = st.lists(
    st.tuples(
        st.one_of(PLAIN_IDS, st.integers(0, 99).map(str)),
        st.one_of(
            st.builds(LabelChange, st.just("verdict"), st.sampled_from(["pass", "fail", None])),
            st.builds(LabelChange, st.just("score"), st.sampled_from([3, 6.5, None])),
            st.builds(LabelChange, st.just("note"), st.sampled_from(["two\nlines", "why: unclear", "#1", None])),
            st.builds(LabelChange, st.just("cell"), st.sampled_from(["met", "unmet", None]), CRITERIA),
            st.builds(LabelChange, st.just("label"), st.sampled_from([None, Label(verdict="pass", score=5)])),
        ),
        st.one_of(st.none(), NAMES),
    ),
    min_size=1,
    max_size=4,
)


def _read(text: str | None, original: str):
    loaded = careful(original if text is None else text)
    assert not isinstance(loaded, str), loaded
    return loaded.by_annotator, [problem.message for problem in loaded.problems]


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(sidecars(), CHANGES)
def test_an_edit_made_piece_by_piece_gives_the_whole_document_editors_labels(text: str, changes):
    if _splice.entries(text) is None or whole_document(text) is None:
        return
    target = Path(FILE)
    try:
        whole = _whole_text(text, target, changes)
    except ValueError:
        return  # the whole-document editor refuses the file too
    spliced = _store.text_with_changes(text, target, changes)
    assert _read(spliced, text) == _read(whole, text)


def _whole_text(text: str, target: Path, changes) -> str | None:
    """The text the whole-document editor gives (the splitter declining every file)."""
    with mock.patch.object(_store, "entries", lambda _text: None):
        return _store.text_with_changes(text, target, changes)
