"""The studio's pure pieces: flips, filters, sorting, redaction, watch targets, cell texts and marks."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len

from rubric_studio.core.labels import Label
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
from rubric_studio.tui.matrix import cell_mark, cell_text, column_title, fit, squeeze, verdict_mark
from rubric_studio.session.results_model import ResultsModel, compute_flips, disagrees, matches, redact
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
    assert set(targets.folders()) == {tmp_path.resolve(), folder.resolve()}
    discovering = WatchTargets(rubric, None, None, discover=True)
    assert discovering.kind_of(tmp_path / "r.samples.jsonl") == "samples"
