"""The studio's pure pieces: flips, filters, sorting, redaction, watch targets, cell texts and marks."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len

from rubric_studio.core.agreement import Agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import CriterionResult, Evidence, SampleResult, Status, Verdict
from rubric_studio.core.samples import Sample
from rubric_studio.session.results_model import (
    ResultsModel,
    compute_flips,
    disagrees,
    filter_label,
    has_made_up_quote,
    matches,
    redact,
)
from rubric_studio.tui.calibration import ID_READABLE, agreement_cells, plan_agreement, wrap_id
from rubric_studio.tui.results import (
    CRIT_MIN,
    ID_COMPACT,
    ID_MAX,
    Column,
    cell_mark,
    cell_text,
    column_title,
    evidence_lines,
    fit,
    input_highlighted,
    plan_layout,
    share,
    squeeze,
    verdict_mark,
)
from rubric_studio.tui.watch import WatchTargets

RUBRIC = parse_rubric(
    "name: t\ncriteria:\n"
    "  - id: a\n    outcome: A\n"
    "  - id: bad\n    outcome: Bad thing\n    weight: -2\n"
    "  - id: tone\n    outcome: Tone\n    score_ranges: {0: low, 10: high}\n"
    "  - id: len\n    check: {type: length, max_words: 10}\n"
)


def result(sample_id: str, verdict: Verdict, score: float | None, **cells: Status) -> SampleResult:
    made = [CriterionResult(cid, status, score=1.0 if status is Status.MET else 0.0) for cid, status in cells.items()]
    return SampleResult(sample_id, score, verdict, made)


def test_flips_count_only_met_unmet_changes():
    before = result("s", Verdict.PASS, 1.0, a=Status.MET, bad=Status.UNMET, tone=Status.PENDING)
    after = result("s", Verdict.FAIL, 0.5, a=Status.UNMET, bad=Status.MET, tone=Status.MET)
    cells, verdict = compute_flips(before, after)
    assert cells == {"a": -1, "bad": 1}  # pending -> met is not a flip
    assert verdict == -1
    assert compute_flips(None, after) == ({}, 0)


def test_model_flip_counts_against_the_baseline():
    model = ResultsModel()
    model.set_samples(["s1", "s2"])
    first = [result("s1", Verdict.PASS, 1.0, a=Status.MET), result("s2", Verdict.FAIL, 0.0, a=Status.UNMET)]
    model.update(first)
    assert model.flip_counts() == (0, 0)
    model.start_run({r.id: r for r in first})
    model.update([result("s1", Verdict.FAIL, 0.0, a=Status.UNMET), result("s2", Verdict.PASS, 1.0, a=Status.MET)])
    assert model.flip_counts() == (1, 1)
    assert model.verdict_flips == {"s1": -1, "s2": 1}


def test_filters_and_disagreement():
    fail = result("f", Verdict.FAIL, 0.2, a=Status.UNMET)
    error = result("e", Verdict.ERROR, None, a=Status.ERROR)
    pending = result("p", Verdict.PENDING, None, a=Status.PENDING)
    assert matches("failing", fail, None) and not matches("failing", error, None)
    assert matches("errors", error, None) and matches("pending", pending, None)
    assert matches("pending", None, None)
    human_pass = Label(verdict="pass")
    assert disagrees(fail, human_pass) and matches("disagree", fail, human_pass)
    assert not disagrees(pending, human_pass)  # not final: no disagreement yet
    cell_label = Label(criteria={"a": "met"})
    assert disagrees(fail, cell_label)


def test_sorting_and_filtering_keep_file_order_by_default():
    model = ResultsModel()
    model.set_samples(["b10", "a", "b2"])
    model.update([
        result("b10", Verdict.PASS, 0.9, a=Status.MET),
        result("a", Verdict.FAIL, 0.1, a=Status.UNMET),
        result("b2", Verdict.ERROR, None, a=Status.ERROR),
    ])
    assert model.visible() == ["b10", "a", "b2"]
    assert model.visible(sort="id") == ["a", "b2", "b10"]
    assert model.visible(sort="score") == ["a", "b10", "b2"]  # worst first, unscored last
    assert model.visible(sort="verdict") == ["b2", "a", "b10"]
    assert model.visible("failing") == ["a"]
    assert model.visible(sort="id", reverse=True) == ["b10", "b2", "a"]
    counts = model.counts()
    assert (counts.passed, counts.failed, counts.errors) == (1, 1, 1)


def test_redaction_hides_keys():
    text = 'Authorization: Bearer abcdefghijklmnop {"api_key": "sk-proj-abcdefghijkl"} x-api-key=secret123 mykey99'
    out = redact(text, secrets=["mykey99"])
    assert "abcdefghijklmnop" not in out and "sk-proj-abcdefghijkl" not in out and "secret123" not in out
    assert "mykey99" not in out and "••••" in out


def test_cell_texts():
    a, bad, tone, length = RUBRIC.criteria
    met = CriterionResult("a", Status.MET, score=1.0)
    # In words, for the inspector and the cell hint.
    assert cell_text(a, met) == ("✓ met", "good")
    assert cell_text(bad, CriterionResult("bad", Status.MET, score=1.0)) == ("✓ met", "bad")  # penalty present
    assert cell_text(tone, CriterionResult("tone", Status.UNMET, score=0.4, raw_score=4)) == ("✗ 4", "bad")
    assert cell_text(length, CriterionResult("len", Status.UNMET, score=0.67)) == ("✗ .67", "bad")
    assert cell_text(a, CriterionResult("a", Status.UNJUDGED)) == ("unjudged", "unjudged")
    assert cell_text(a, CriterionResult("a", Status.ERROR, error="x")) == ("⚠ error", "error")
    assert fit("abcdef", 4) == "abc…" and fit("ab", 4) == "ab  "


def test_matrix_cell_marks_are_compact():
    a, bad, tone, length = RUBRIC.criteria
    assert cell_mark(a, CriterionResult("a", Status.MET, score=1.0)) == ("✓", "good")
    assert cell_mark(a, CriterionResult("a", Status.UNMET, score=0.0)) == ("✗", "bad")
    assert cell_mark(bad, CriterionResult("bad", Status.MET, score=1.0)) == ("✓", "bad")  # penalty present
    assert cell_mark(bad, CriterionResult("bad", Status.UNMET, score=0.0)) == ("✗", "good")
    assert cell_mark(tone, CriterionResult("tone", Status.MET, score=0.8, raw_score=8)) == ("✓ 8", "good")
    assert cell_mark(tone, CriterionResult("tone", Status.UNMET, score=0.3, raw_score=3)) == ("✗ 3", "bad")
    assert cell_mark(length, CriterionResult("len", Status.UNMET, score=0.29)) == ("✗.29", "bad")
    assert cell_mark(length, CriterionResult("len", Status.MET, score=1.0)) == ("✓", "good")
    assert cell_mark(a, CriterionResult("a", Status.ERROR, error="x")) == ("⚠", "error")
    assert cell_mark(a, CriterionResult("a", Status.UNJUDGED)) == ("·", "unjudged")
    assert cell_mark(a, CriterionResult("a", Status.PENDING)) == ("⋯", "pending")
    assert cell_mark(a, None) == ("⋯", "pending")
    marks = [cell_mark(c, CriterionResult(c.key, s, score=0.29, raw_score=10)) for c in RUBRIC.criteria
             for s in Status]
    assert max(cell_len(text) for text, _ in marks) <= 4  # a flip mark and ≠ fit a 5-wide column (squeezed)
    assert squeeze("✓ 10≠", 4) == "✓10≠" and squeeze("✗.29≠", 4) == "✗.29" and squeeze("✓≠", 4) == "✓≠"

    def verdict(v: Verdict) -> str:
        return verdict_mark(SampleResult("s", None, v, []))[0]

    assert [verdict(v) for v in (Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.PENDING, Verdict.UNJUDGED)] == [
        "✓ pass", "✗ fail", "⚠ err", "⋯", "·"]
    required = parse_rubric("name: t\ncriteria:\n  - id: resolves-issue\n    outcome: x\n    required: true\n")
    assert column_title(required.criteria[0], 5) == "res…*" and column_title(required.criteria[0], 16) == "resolves-issue* "
    assert column_title(tone, 5) == "tone "


def test_watch_targets_match_the_files_in_use(tmp_path: Path):
    rubric = tmp_path / "r.yaml"
    rubric.write_text("x")
    folder = tmp_path / "outs"
    folder.mkdir()
    targets = WatchTargets(rubric, folder, tmp_path / "r.labels.yaml")
    assert targets.kind_of(tmp_path / "r.yaml") == "rubric"
    assert targets.kind_of(tmp_path / "r.labels.yaml") == "labels"
    assert targets.kind_of(folder / "one.md") == "samples"
    assert targets.kind_of(folder / "notes.bin") is None
    assert targets.kind_of(tmp_path / ".r.yaml.swp") is None
    # the labels journal (web and studio labels land there first) is watched in the working folder
    assert targets.kind_of(tmp_path / ".rubric-studio" / "r.labels.yaml.journal") == "labels"
    assert targets.kind_of(tmp_path / ".rubric-studio" / "lock") is None
    assert set(targets.folders()) == {tmp_path.resolve(), folder.resolve(), (tmp_path / ".rubric-studio").resolve()}
    discovering = WatchTargets(rubric, None, None, discover=True)
    assert discovering.kind_of(tmp_path / "r.samples.jsonl") == "samples"


# -- finding samples: search and the filters a labelling run needs ---------------------------------
def searchable_model() -> ResultsModel:
    model = ResultsModel()
    model.set_samples([
        Sample("order-17", "Refunds take 5-7 days.", input="Can I get my MONEY back?"),
        Sample("order-18", "Your card was charged twice; we refunded one charge.", input="Double charge"),
        Sample("REFUND-3", "Sorry, that is outside the window."),
    ])
    return model


def test_search_reads_ids_inputs_and_outputs_in_any_case():
    model = searchable_model()
    assert model.visible(search="money back") == ["order-17"]  # in the input
    assert model.visible(search="CHARGED TWICE") == ["order-18"]  # in the output
    assert model.visible(search="refund") == ["order-17", "order-18", "REFUND-3"]  # output, output, id
    assert model.visible(search="order-1") == ["order-17", "order-18"]
    assert model.visible(search="nowhere") == [] and model.visible(search="  ") == model.order
    assert model.visible(sort="id", reverse=True, search="order") == ["order-18", "order-17"]


def test_a_model_given_only_ids_searches_the_ids():
    model = ResultsModel()
    model.set_samples(["order-17", "order-18"])
    assert model.visible(search="ORDER-18") == ["order-18"] and model.visible(search="money") == []


def cells_result(sample_id: str, **cells: CriterionResult) -> SampleResult:
    return SampleResult(sample_id, None, Verdict.FAIL, [CriterionResult(cid, cell.status, evidence=cell.evidence)
                                                       for cid, cell in cells.items()])


def test_criterion_filters_look_at_the_focused_criterion_or_at_every_cell():
    model = ResultsModel()
    model.set_samples(["s1", "s2", "s3"])
    met, unmet, error = (CriterionResult("x", status) for status in (Status.MET, Status.UNMET, Status.ERROR))
    model.update([cells_result("s1", a=unmet, tone=met), cells_result("s2", a=met, tone=unmet),
                  cells_result("s3", a=error, tone=met)])
    assert model.visible("unmet", criterion="tone") == ["s2"]
    assert model.visible("unmet", criterion="a") == ["s1"]
    assert model.visible("unmet") == ["s1", "s2"]  # no focused criterion: any cell unmet
    assert model.visible("cell-error", criterion="a") == ["s3"] and model.visible("cell-error", criterion="tone") == []
    assert filter_label("unmet", "tone") == "unmet: tone" and filter_label("unmet") == "any criterion unmet"
    assert filter_label("made-up", "tone") == "made-up quote"


def test_made_up_quotes_are_found_but_quotes_of_the_input_are_not_made_up():
    made_up = CriterionResult("a", Status.MET, evidence=[Evidence("we never refund", False, reason="not in the sample")])
    from_input = CriterionResult("a", Status.MET, evidence=[Evidence("my money back", False, quoted_from="input")])
    found = CriterionResult("a", Status.MET, evidence=[Evidence("5-7 days", True, 0, 8)])
    assert has_made_up_quote(made_up) and not has_made_up_quote(from_input) and not has_made_up_quote(found)
    assert not has_made_up_quote(None)
    model = ResultsModel()
    model.set_samples(["s1", "s2", "s3"])
    model.update([cells_result("s1", a=found, b=made_up), cells_result("s2", a=from_input), cells_result("s3", a=found)])
    assert model.visible("made-up") == ["s1"]


def test_no_label_yet_means_no_verdict_score_or_labelled_criterion():
    model = ResultsModel()
    model.set_samples(["none", "note", "verdict", "cell", "score"])
    model.set_labels({"note": Label(note="look again"), "verdict": Label(verdict="pass"),
                      "cell": Label(criteria={"a": "met"}), "score": Label(score=7)})
    assert model.visible("unlabelled") == ["none", "note"]  # a pending sample can be labelled too


# -- column widths: the terminal's width, not a fixed cap ------------------------------------------
def wide_rubric(*ids: str):
    text = "name: t\ncriteria:\n" + "".join(f"  - id: {i}\n    outcome: O\n" for i in ids)
    return parse_rubric(text).criteria


def test_spare_width_goes_to_whole_ids_and_whole_titles():
    long_id, long_title = "order-2024-05-03-blender-refund"[:30], "states-the-refund-window"
    assert (len(long_id), len(long_title)) == (30, 24)
    columns = [Column.of(c) for c in wide_rubric(long_title, "tone", "short")]
    id_width = plan_layout(columns, len(long_id), room=200)
    assert id_width == 30 and [c.width for c in columns] == [24, 5, 5]  # before: 16 and 12 at any width
    tight = [Column.of(c) for c in wide_rubric(long_title, "tone", "short")]
    id_width = plan_layout(tight, len(long_id), room=42)
    # Titles to 12 first, then the id, then both share what is left.
    assert id_width == ID_MAX + 1 and [c.width for c in tight] == [12, 5, 5]
    compact = [Column.of(c) for c in wide_rubric(*(f"criterion-{n}" for n in range(9)))]
    id_width = plan_layout(compact, len(long_id), room=52)
    # Not everything fits: compact columns, scrolling sideways, and the id gives up the 3 cells
    # that show a sixth column (never more than down to ID_COMPACT).
    assert id_width == 13 >= ID_COMPACT and {c.width for c in compact} == {CRIT_MIN}


def test_share_gives_cells_in_turn_up_to_each_cap():
    widths = [5, 5, 5]
    assert share(widths, [6, 9, 7], 6) == 0 and widths == [6, 8, 7]
    assert share(widths, [6, 9, 7], 5) == 4 and widths == [6, 9, 7]


# -- the Agreement table ------------------------------------------------------------------------
def agreement_rows() -> list[tuple[str, Agreement]]:
    figures = Agreement(both_pass=12, both_fail=30, rubric_pass_human_fail=4, rubric_fail_human_pass=5)
    names = ["overall", "resolves-issue", "policy-accurate", "asks-for-credentials", "no-internal-links"]
    return [(name, figures) for name in names]


def test_the_agreement_table_fits_beside_the_editor_at_120_and_140_columns():
    rows = agreement_rows()
    wide = plan_agreement(200, rows)
    assert wide.header_height == 1 and not wide.wrap_values and wide.id_width == len("asks-for-credentials")
    for room in (78, 66):  # the Agreement pane at 140 and 120 columns, the editor shown
        plan = plan_agreement(room, rows)
        assert plan.total <= room and plan.header_height == 2
    assert not plan_agreement(78, rows).wrap_values and plan_agreement(78, rows).id_width >= ID_READABLE
    narrow = plan_agreement(44, rows)  # 80 columns: the figures people act on first, the rest scrolls
    assert narrow.id_width == 8 and sum(narrow.widths[:6]) <= 44


def test_wrapped_cells_keep_every_figure():
    (_, figures), = agreement_rows()[:1]
    flat, wrapped = agreement_cells(figures), agreement_cells(figures, wrap=True)
    assert [cell.replace("\n", "") for cell in wrapped] == flat
    assert wrapped[5].split("\n")[0].endswith("…") and wrapped[8] == "12/30/\n4/5"
    assert wrap_id("asks-for-credentials", 12) == "asks-for-\ncredentials"
    assert wrap_id("abcdefghijkl", 5) == "abcde\nfghij\nkl"


# -- the inspector's evidence ---------------------------------------------------------------------
def test_the_inspector_tells_made_up_quotes_from_quotes_of_the_input():
    text = evidence_lines([
        Evidence("5-7 days", True, 0, 8),
        Evidence("my money back", False, reason="quoted from the input, not from the output", quoted_from="input"),
        Evidence("we never refund", False, reason="not in the sample"),
    ]).plain
    assert "✓ “5-7 days”" in text
    assert "↩ “my money back”  quoted from the input, not from the output" in text
    assert "? “we never refund”  not in the sample — made-up quote" in text
    assert "made-up" not in text.split("we never refund")[0]
    highlighted = input_highlighted("Can I get my money back?", [Evidence("my money back", False, quoted_from="input")])
    assert [span.style for span in highlighted.spans if highlighted.plain[span.start:span.end] == "my money back"]
