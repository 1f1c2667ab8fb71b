"""Calibration in the studio, driven with Pilot: label keys, disagreements, versions, fit, K runs.

The judge is the fake OpenAI-compatible server (tests/fakellm.py) with a small scripted
brain, so verdicts are known: every judged criterion is met (tone 8/10) except
``asks-for-credentials`` (met only where the reply mentions a password). Against the
bundled labels of ``support_reply`` that leaves known disagreements, among them
``downgrade-wall-of-text``: 203 words, human "fail", but the rubric passes it because the
``short`` check only weighs 1 — making ``short`` required fixes exactly that one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from rubric_studio.core.labels import fold_journal, load_labels
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.results import Verdict
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.calibration import (
    AgreementPanel,
    FitScreen,
    LabelNoteScreen,
    LabelScoreScreen,
    VersionsScreen,
)
from rubric_studio.tui.dialogs import AskScreen, ConfirmScreen
from rubric_studio.tui.results import ResultsMatrix
from tests.fakellm import Call, FakeLLM
from tests.tui.studio_helpers import (
    ROOT,
    RUBRIC,
    SIZE,
    copy_bundled,
    drawn,
    focused_on,
    graded,
    until,
    watching,
)

LABELS = RUBRIC.with_name("support_reply.labels.yaml")
JUDGED = ("resolves-issue", "policy-accurate", "tone", "asks-for-credentials")
CREDENTIALS = "password"  # a word of asks-for-credentials' outcome


def scripted_brain(flip_tone: bool = False) -> Callable[[Call], dict]:
    """Met everywhere (tone 8), credentials only where "password" occurs; ``flip_tone``:
    tone answers 8, 3, 8, ... for replies that mention a refund (a judge that wavers)."""
    seen: Counter[tuple[str, str]] = Counter()

    def brain(call: Call) -> dict:
        item = call.criteria[0]
        seen[(item.outcome, call.sample)] += 1  # requests about one criterion carry its outcome, not its id
        if item.kind == "analytic":
            wavers = flip_tone and "refund" in call.sample.lower() and seen[(item.outcome, call.sample)] % 2 == 0
            return {"score": 3 if wavers else 8, "rationale": "tone", "evidence": []}
        met = "password" in call.sample.lower() if CREDENTIALS in item.outcome else True
        return {"verdict": "met" if met else "unmet", "rationale": "scripted", "evidence": []}

    return brain


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_bundled(tmp_path, monkeypatch)


@pytest.fixture
def judge(studio: Path):
    with FakeLLM(brain=scripted_brain()) as server:
        yield server


def make_app(server: FakeLLM, studio: Path, **options) -> StudioApp:
    # The bundled labels name no annotator: label as that same (unnamed) annotator, so a key
    # changes the label in the file rather than adding a second person's beside it.
    options.setdefault("annotator", "(unnamed)")
    return StudioApp(RUBRIC, judge="openai-compatible:fake-judge", base_url=server.base_url_openai,
                     cache_path=studio / "cache.sqlite", watch=options.pop("watch", False), **options)


async def ready(app: StudioApp, pilot) -> ResultsMatrix:
    await until(lambda: graded(app), timeout=20)
    await pilot.pause()
    matrix = app.query_one(ResultsMatrix)
    matrix.focus()
    await pilot.pause()
    return matrix


def row_text(matrix: ResultsMatrix, sample_id: str) -> str:
    return matrix._row_strip(matrix.rows.index(sample_id)).text


def human_column(matrix: ResultsMatrix, sample_id: str) -> str:
    return row_text(matrix, sample_id).split("│")[0].split()[-1]


def panel_text(app: StudioApp) -> str:
    return "\n".join(str(widget.render()) for widget in app.query_one(AgreementPanel).query("Static"))


def notifications(app: StudioApp) -> str:
    return "\n".join(n.message for n in app._notifications)


async def regraded(app: StudioApp, pilot, run: int) -> None:
    await until(lambda: app.session.run_number > run and graded(app), timeout=20)
    await pilot.pause()


# -- labeling keys ------------------------------------------------------------------------------
def folded_text() -> str:
    """The sidecar's text once the labels journal is folded into it (as the studio does when idle)."""
    fold_journal(LABELS)
    return LABELS.read_text()


async def test_label_keys_write_the_sidecar_keep_comments_and_update_the_views(studio: Path, judge):
    header = folded_text().split("\n\n")[0]
    assert header.startswith("# Human labels")
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        panel = app.query_one(AgreementPanel)
        n_before = panel.agreement.overall.n
        sample = "cancel-subscription"  # passes, not labelled yet
        assert app.session.model.results[sample].verdict is Verdict.PASS and sample not in app.session.labels
        assert matrix.select_sample(sample)
        await pilot.press("p")
        await until(lambda: sample in app.session.labels)
        text = folded_text()
        assert f"\n{sample}:\n  verdict: pass\n" in text
        assert text.startswith(header)  # the comments at the top are kept
        assert human_column(matrix, sample) == "pass"
        assert panel.agreement.overall.n == n_before + 1

        await pilot.press("x")  # now the human fails what the rubric passes: a disagreement
        await until(lambda: app.session.labels[sample].verdict == "fail")
        assert f"\n{sample}:\n  verdict: fail\n" in folded_text()
        assert human_column(matrix, sample) == "fail≠"
        assert sample in panel.disagreement_ids
        assert "≠" in str(app.query_one("#run-header").render())

        # S asks for a 0-10 score.
        await pilot.press("S")
        await until(lambda: isinstance(app.screen, LabelScoreScreen) and app.screen.query(Input))
        await pilot.press("4", "enter")
        await until(lambda: app.session.labels[sample].score == 4)
        assert f"\n{sample}:\n  verdict: fail\n  score: 4\n" in folded_text()

        # m / u on the selected cell write criteria labels (c clears the cell's).
        matrix.select_criterion("tone")
        await pilot.press("u")
        await until(lambda: app.session.labels[sample].criteria.get("tone") == "unmet")
        assert load_labels(LABELS).labels[sample].criteria == {"tone": "unmet"}
        assert "≠" in row_text(matrix, sample).split("│", 1)[1]  # the tone cell is marked
        await pilot.press("m")
        await until(lambda: app.session.labels[sample].criteria.get("tone") == "met")
        await pilot.press("c")
        await until(lambda: not app.session.labels[sample].criteria)
        assert "criteria" not in folded_text().split(f"\n{sample}:\n", 1)[1].split("\n\n")[0]

        # a: a note through the modal; letters typed there are not taken for label keys.
        await pilot.press("a")
        await until(lambda: isinstance(app.screen, LabelNoteScreen))
        await pilot.press(*"exact policy, but curt", "enter")
        await until(lambda: app.session.labels[sample].note == "exact policy, but curt")
        assert load_labels(LABELS).labels[sample] == app.session.labels[sample]
        assert app.session.labels[sample].verdict == "fail" and app.session.labels[sample].score == 4
        assert not app.session.labels[sample].criteria

        # C removes the whole entry; everything else in the file stays as it was.
        await pilot.press("C")
        await until(lambda: sample not in app.session.labels)
        assert f"{sample}:" not in folded_text()
        # The original again (labels_store leaves one blank line where the entry was appended).
        assert folded_text().rstrip("\n") == (ROOT / LABELS).read_text().rstrip("\n")


async def test_calibration_keys_act_only_on_the_results_table_and_brackets_jump(studio: Path, judge):
    from rubric_studio.tui.editor import CriteriaList

    before = folded_text()
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        # Elsewhere the letters are not label keys (the editor's list has its own a / c / d).
        matrix.select_sample("cancel-subscription")
        app.query_one(CriteriaList).focus()
        await focused_on(app, app.query_one(CriteriaList))
        await pilot.press("p", "x", "u", "right_square_bracket")
        await pilot.pause(0.1)
        assert "cancel-subscription" not in app.session.labels and folded_text() == before
        assert matrix.current[0] == "cancel-subscription"
        # The footer offers p / x while the table has focus.
        matrix.focus()
        matrix.action_edge(-1)
        await pilot.pause()
        assert app.active_bindings["p"].enabled and app.active_bindings["x"].binding.description == "Fail"
        wrong = app.query_one(AgreementPanel).disagreement_ids
        assert "downgrade-wall-of-text" in wrong and len(wrong) >= 3
        assert matrix.current[0] == "refund-within-window" and "refund-within-window" not in wrong
        await pilot.press("right_square_bracket")
        assert matrix.current[0] == wrong[0]
        await pilot.press("right_square_bracket")
        assert matrix.current[0] == wrong[1]
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert matrix.current[0] == wrong[-1]  # wraps
        # Disagreements hidden by the filter are not skipped: "failing" shows only
        # password-request (which agrees); the next disagreement after it is a pass.
        matrix.filter_kind = "failing"
        await pilot.pause()
        assert matrix.rows == ["password-request"]
        await pilot.press("right_square_bracket")
        assert matrix.current[0] == "downgrade-wall-of-text" and matrix.filter_kind == "all"


# -- keys act where the user looks -------------------------------------------------------------
SENTENCE = "Blames a Kafka queue; pax, mu, C, S, I, F, V, e and ]["


@pytest.mark.long
async def test_a_sentence_typed_where_no_text_field_has_focus_labels_nothing_and_opens_nothing(studio: Path, judge):
    from textual.widgets import Tabs

    before = folded_text()
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        matrix.select_sample("cancel-subscription")
        main = app.screen
        # Nothing focused (a click that landed nowhere), the editor's tabs, the results' tabs: no text field.
        for focus in (None, app.query_one("#ed-tabs").query_one(Tabs), app.query_one("#tabs").query_one(Tabs)):
            app.set_focus(focus)
            await pilot.pause()
            assert app.focused is focus
            await pilot.press(*SENTENCE)
            await pilot.pause()
            assert app.screen is main, f"a dialog opened with focus on {focus}"
            assert folded_text() == before and "cancel-subscription" not in app.session.labels
            assert matrix.current[0] == "cancel-subscription" and app.session.consistency_k is None
        # In the table the same letters are label keys.
        matrix.focus()
        await pilot.press("p")
        await until(lambda: "cancel-subscription" in app.session.labels)


async def test_the_focused_pane_is_marked_and_the_results_take_the_width_while_focused(studio: Path, judge):
    from rubric_studio.tui.editor import EditorPane

    app = make_app(judge, studio)
    async with app.run_test(size=(140, 40)) as pilot:
        matrix = await ready(app, pilot)
        left, right = app.query_one("#left"), app.query_one("#right")

        def edge(pane) -> tuple:
            return tuple(pane.styles.border_left)

        marked = edge(right)
        assert marked != edge(left)
        await until(lambda: left.size.width <= 28)
        assert not app.query_one("#ed-form").display and matrix.size.width >= 100
        over, titles = matrix._header_strip(0, 2).text, matrix._header_strip(1, 2).text
        assert "policy-" in over and "accurate*" in titles and "resolves-" in over and "issue*" in titles
        assert "…" not in over + titles  # whole, on two lines: not "poli…" / "reso…"
        app.query_one(EditorPane).focus_form()
        await until(lambda: app.focused is not None and left in app.focused.ancestors)
        await until(lambda: left.size.width >= 50)
        assert edge(left) == marked and edge(right) != marked and app.query_one("#ed-form").display
        matrix.focus()
        await until(lambda: left.size.width <= 28)
        assert edge(right) == marked and edge(left) != marked


async def test_a_click_on_a_cell_from_the_editor_selects_that_cell_though_the_table_widens(studio: Path, judge):
    from rubric_studio.tui.editor import EditorPane

    app = make_app(judge, studio)
    async with app.run_test(size=(140, 40)) as pilot:
        matrix = await ready(app, pilot)
        left = app.query_one("#left")
        app.query_one(EditorPane).focus_form()
        await until(lambda: left.size.width >= 50)
        await pilot.pause()
        tone = 1 + [c.criterion.key for c in matrix.columns].index("tone")
        x = next(x for x in range(matrix.size.width) if matrix._column_at(x) == tone)
        y = matrix.header_lines + matrix.rows.index("password-request")
        await pilot.click(matrix, offset=(x, y))  # the editor narrows as the table takes focus
        await until(lambda: left.size.width <= 28)
        assert matrix.current == ("password-request", "tone")


async def test_the_key_that_opens_a_dialog_is_not_typed_into_it(studio: Path, judge):
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        matrix.select_sample("cancel-subscription")  # no label, no note, no score
        for key, screen, value in (("K", AskScreen, "3"), ("a", LabelNoteScreen, ""), ("S", LabelScoreScreen, "")):
            await pilot.press(key)
            await until(lambda screen=screen: isinstance(app.screen, screen) and app.screen.query(Input))
            await pilot.pause()
            assert app.screen.query_one(Input).value == value, key
            await pilot.press("escape")
            await until(lambda: app.screen.query(ResultsMatrix))
        assert app.session.consistency_k is None and "cancel-subscription" not in app.session.labels


async def test_ctrl_z_in_the_table_undoes_label_changes_on_disk_and_in_the_table(studio: Path, judge):
    from rubric_studio.tui.editor import EditorPane

    original = folded_text()
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        sample = "refund-within-window"  # labelled pass, score 9, every cell, a note
        matrix.select_sample(sample)
        await pilot.press("x")  # a stray x
        await until(lambda: app.session.labels[sample].verdict == "fail")
        assert human_column(matrix, sample).startswith("fail")
        await pilot.press("ctrl+z")
        await until(lambda: app.session.labels[sample].verdict == "pass")
        assert folded_text() == original  # the previous value is back, comments and all
        assert human_column(matrix, sample).startswith("pass")
        await until(lambda: "Undid label fail on refund-within-window (back to pass)" in notifications(app))
        await pilot.press("ctrl+y")  # redo
        await until(lambda: app.session.labels[sample].verdict == "fail")
        assert load_labels(LABELS).labels[sample].verdict == "fail"
        await pilot.press("ctrl+z")
        await until(lambda: folded_text() == original)

        # A cell label, a cleared verdict and a whole label cleared: each undone in turn, latest first.
        matrix.select_sample("cancel-subscription")  # no label yet
        matrix.select_criterion("tone")
        await pilot.press("m")
        await until(lambda: "cancel-subscription" in app.session.labels)
        matrix.select_sample(sample)
        await pilot.press("C")
        await until(lambda: sample not in app.session.labels)
        await pilot.press("ctrl+z")
        await until(lambda: sample in app.session.labels)
        assert app.session.labels[sample] == load_labels(ROOT / LABELS).labels[sample]
        await pilot.press("ctrl+z")  # the tone label of cancel-subscription: absent again
        await until(lambda: "cancel-subscription" not in app.session.labels)
        assert "cancel-subscription:" not in folded_text()
        assert load_labels(LABELS).labels == load_labels(ROOT / LABELS).labels
        await pilot.press("ctrl+z")  # nothing left to undo of this session's labels
        await until(lambda: "No label change to undo." in notifications(app))

        # In the editor ctrl+z undoes the editor's edit, not a label.
        matrix.select_sample(sample)
        await pilot.press("p")  # already pass: nothing to undo
        matrix.select_sample("cancel-subscription")
        await pilot.press("x")
        await until(lambda: "cancel-subscription" in app.session.labels)
        editor = app.query_one(EditorPane)
        document = app.session.document
        text = document.text
        document.set_rubric_field("description", "changed in the editor")
        editor.refresh_from_document()
        editor.focus_form()
        await until(lambda: app.focused is not None and editor in app.focused.ancestors)
        await pilot.press("ctrl+z")
        await until(lambda: document.text == text)
        assert app.session.labels["cancel-subscription"].verdict == "fail"
        matrix.focus()
        await pilot.press("ctrl+z")
        await until(lambda: "cancel-subscription" not in app.session.labels)


# -- versions ---------------------------------------------------------------------------------
async def test_a_save_is_a_version_and_says_what_it_fixed(studio: Path, judge):
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        matrix = await ready(app, pilot)
        assert len(app.session.versions.history) == 1
        assert "downgrade-wall-of-text" in app.query_one(AgreementPanel).disagreement_ids
        app.session.document.set_criterion_field(app.session.document.criterion_index("short"), "required", True)
        app.editor.refresh_from_document()
        run = app.session.run_number
        await pilot.press("ctrl+s")
        await regraded(app, pilot, run)
        assert len(app.session.versions.history) == 2
        diff = app.session.versions.latest_diff
        assert diff is not None and diff.overall.fixed == ["downgrade-wall-of-text"] and diff.overall.broken == []
        line = "v1 → v2 (rubric edit): fixed 1 disagreement, broke 0"
        assert diff.summary_line().startswith(line)
        assert line in notifications(app)
        assert line in panel_text(app)
        assert "downgrade-wall-of-text" not in app.query_one(AgreementPanel).disagreement_ids
        assert "≠" not in row_text(matrix, "downgrade-wall-of-text")
        # V compares any two versions.
        await pilot.press("V")
        await until(lambda: isinstance(app.screen, VersionsScreen))
        screen = app.screen
        await pilot.pause()
        text = await drawn(screen.query_one("#versions-diff"), line, "changed short (required)",
                           what="the diff of v1 → v2 in the versions screen")
        assert line in text and "changed short (required)" in text
        reverse = screen.compare(2, 1)
        assert reverse.overall.broken == ["downgrade-wall-of-text"]
        await pilot.press("escape")
        await until(lambda: not isinstance(app.screen, VersionsScreen))


# -- fit --------------------------------------------------------------------------------------
async def test_fit_is_applied_as_an_undoable_edit_and_saved(studio: Path, judge):
    app = make_app(judge, studio)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        # With unsaved edits it asks first; "n" leaves everything alone.
        app.session.document.set_rubric_field("description", "edited")
        app.editor.refresh_from_document()
        await pilot.pause()
        await pilot.press("F")
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.session.document.dirty
        # "y" saves, and the fit opens once the save is graded.
        run = app.session.run_number
        app.query_one(ResultsMatrix).focus()
        await focused_on(app, app.query_one(ResultsMatrix))
        await pilot.press("F")
        await until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(lambda: isinstance(app.screen, FitScreen), timeout=20)
        assert app.session.run_number > run and not app.session.document.dirty
        fit = app.screen.fit
        assert fit.changed and fit.threshold != 0.8 and fit.holdout_ids
        await pilot.pause()
        table = await drawn(app.screen.query_one("#fit-table"), f"0.8 → {fit.threshold:g}", "holdout",
                            what="the fit's table with the new threshold and the holdout agreement")
        assert f"0.8 → {fit.threshold:g}" in table and "holdout" in table  # holdout agreement shown
        run = app.session.run_number
        await pilot.press("enter")  # Accept
        await regraded(app, pilot, run)
        threshold = f"pass_threshold: {fit.threshold:g}"
        assert threshold in app.session.document.text and not app.session.document.dirty
        on_disk = RUBRIC.read_text()
        assert threshold in on_disk and "# Billing-support reply rubric (Ledgerly)." in on_disk
        assert load_rubric(RUBRIC).pass_threshold == fit.threshold
        for cid, (_, new) in fit.changed_weights.items():
            assert load_rubric(RUBRIC).criterion(cid).weight == new
        assert "Fit applied" in "\n".join(n.title for n in app._notifications)
        assert len(app.session.versions.history) == 3  # the description save, then the fit
        # One ctrl+z in the editor undoes the whole fit (threshold and weights).
        await app.editor.action_undo()
        assert "pass_threshold: 0.8" in app.session.document.text and app.session.document.dirty
        assert load_rubric(RUBRIC).pass_threshold == fit.threshold  # until saved


# -- consistency --------------------------------------------------------------------------------
async def test_judge_k_times_shows_flip_rates_then_a_save_grades_normally(studio: Path):
    with FakeLLM(brain=scripted_brain(flip_tone=True)) as server:
        app = make_app(server, studio)
        async with app.run_test(size=SIZE) as pilot:
            await ready(app, pilot)
            calls = server.calls()
            assert calls == 15 * len(JUDGED)
            await pilot.press("K")
            await until(lambda: isinstance(app.screen, AskScreen) and app.screen.query(Input))
            assert app.screen.query_one(Input).value == "3"
            app.screen.query_one(Input).value = "1"
            await pilot.press("enter")
            assert isinstance(app.screen, AskScreen)  # K must be 2..10
            app.screen.query_one(Input).value = "2"
            run = app.session.run_number
            await pilot.press("enter")
            await regraded(app, pilot, run)
            assert app.session.report.repeat == 2
            assert server.calls() == calls + 15 * len(JUDGED)  # one more judgement per cell
            assert "×2 consistency run" in str(app.query_one("#run-header").render())
            rates = app.session.report.flip_rates()
            refunds = sorted(s.id for s in app.session.samples if "refund" in s.output.lower())
            assert sorted(rates["tone"]["samples"]) == refunds and rates["resolves-issue"]["flipped"] == 0
            text = panel_text(app)
            assert "judged 2 times" in text and "ambiguous wording" in text
            assert f"tone: flip rate {rates['tone']['flip_rate']:.0%}" in text and refunds[0] in text
            assert "flip rates tone" in notifications(app)
            assert len(app.session.versions.history) == 1  # a K run is not a rubric version
            # The next save grades normally again (from memory: no calls).
            run = app.session.run_number
            await pilot.press("ctrl+s")
            await regraded(app, pilot, run)
            assert app.session.report.repeat == 1 and server.calls() == calls + 15 * len(JUDGED)
            assert "consistency" not in str(app.query_one("#run-header").render())
            assert "judged 2 times" not in panel_text(app)


# -- no sidecar yet, failures, the watcher ----------------------------------------------------------
async def test_a_missing_sidecar_is_created_a_broken_one_is_a_notification_own_writes_are_not_reloaded(
        studio: Path):
    from tests.tui.test_app import Recorder

    LABELS.unlink()  # no sidecar yet
    recorder = Recorder()
    app = StudioApp(RUBRIC, annotator="lead")  # no judge, real file watching
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await until(lambda: app.session.report is not None and app.editor is not None and not app.session.running)
        await watching(RUBRIC.parent)
        assert not app.session.labels
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        matrix.select_sample("cancel-subscription")
        loaded = recorder.names.count("LabelsLoaded")
        await pilot.press("p")
        await until(lambda: "cancel-subscription" in app.session.labels)
        await until(lambda: "FilesChanged" in recorder.after("LabelsLoaded"))  # the watcher saw our write
        await pilot.pause(0.1)
        assert recorder.names.count("LabelsLoaded") == loaded  # ... and it was not read back
        assert not LABELS.exists()  # the label is in the journal until it is folded (idle, quit, compact)
        text = folded_text()
        assert text.startswith("# Human labels") and "cancel-subscription:\n  annotator: lead\n  verdict: pass\n" in text
        # Keys that need what this studio lacks say so (no judge: nothing can flip).
        await pilot.press("K")
        await until(lambda: any("needs a judge" in n.message for n in app._notifications))
        # A sidecar that is not YAML: the write is refused with a notification, the file untouched.
        LABELS.write_text("cancel-subscription: [unclosed\n")
        await until(lambda: "labels" in app.session.file_problems)
        await pilot.press("x")
        await until(lambda: any(n.title == "Label not saved" for n in app._notifications))
        assert LABELS.read_text() == "cancel-subscription: [unclosed\n"
        assert app.is_running


async def test_a_label_through_a_planted_sidecar_link_is_refused_naming_the_file(tmp_path, monkeypatch):
    """A repository that ships its labels sidecar as a link to a file elsewhere gets the label
    refused, one notification naming the sidecar and where it leads, and the file elsewhere untouched."""
    copy_bundled(tmp_path, monkeypatch)
    decoy = tmp_path / "elsewhere.yaml"
    sidecar = RUBRIC.with_name("support_reply.labels.yaml")
    decoy.write_text(sidecar.read_text())
    sidecar.unlink()
    sidecar.symlink_to(decoy)
    before = decoy.read_bytes()
    app = StudioApp(RUBRIC, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: graded(app))
        matrix = app.query_one(ResultsMatrix)
        matrix.focus()
        matrix.select_sample("cancel-subscription")
        await pilot.press("p")
        await until(lambda: any(n.title == "Label not saved" for n in app._notifications))
        (note,) = [n for n in app._notifications if n.title == "Label not saved"]
        assert f"support_reply.labels.yaml: is a symbolic link to {decoy}" in note.message
        assert "nothing written" in note.message
    assert decoy.read_bytes() == before


async def test_labels_written_by_someone_else_appear_as_they_land_read_from_the_journal_only(studio: Path):
    """A web labeller (or another studio) writing bob's label: the open studio shows it, counts it,
    records a version "labels change by bob" — and reads only the journal's new line, not the
    sidecar again."""
    from rubric_studio.core.labels import LabelChange, LabelStore

    app = StudioApp(RUBRIC, annotator="lead")  # no judge, real file watching
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.session.report is not None and app.editor is not None and not app.session.running)
        await watching(RUBRIC.parent)
        await until(lambda: app.session._label_store is not None)
        store_in_studio = app.session._label_store
        sidecar_read_at = store_in_studio._sidecar_sig
        sample = "cancel-subscription"
        assert "bob" not in app.session.by_annotator.get(sample, {})
        LabelStore(LABELS).write(sample, LabelChange("verdict", "fail"), "bob")  # another process would do the same
        await until(lambda: "bob" in app.session.by_annotator.get(sample, {}))
        assert app.session.by_annotator[sample]["bob"].verdict == "fail"
        assert app.session._label_store is store_in_studio and store_in_studio._sidecar_sig == sidecar_read_at
        latest = app.session.versions.history.latest
        assert latest is not None and latest.labelled_by == "bob" and latest.label.endswith("change by bob")
        await pilot.pause(0)
