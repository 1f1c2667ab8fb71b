"""Long criterion ids in the results matrix header: whole on up to three lines where the width
allows (the studio at 140×40, the editor beside it), and where it does not, cut so that ids
sharing a long prefix still read as two different columns."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.geometry import Region

from rubric_studio.core.loading import parse_rubric
from rubric_studio.tui.results import ResultsMatrix
from rubric_studio.tui.results._layout import Column
from rubric_studio.tui.results._text import GAP, header_title, shared_prefix
from tests.tui.studio_helpers import ROOT, focused_on, until

SUPPORT = ROOT / "sample_rubrics" / "support_reply"
LONGEST = "resolves-the-billing-question-with-one-next-step"  # 48 characters
THIRTY = "policy-accurate-refund-window-thirty-days"
SIXTY = "policy-accurate-refund-window-sixty-days"  # shares 30 characters with THIRTY


def header_texts(matrix: ResultsMatrix) -> dict[str, str]:
    """Criterion id -> its title as the screen shows it: the column's header lines joined."""
    region = Region(0, 0, matrix.size.width, matrix.header_lines)
    rows = [strip.text for strip in matrix.render_lines(region)][1:]  # under the focused line
    out, x = {}, matrix._fixed_width()
    for index in matrix._shown_columns():
        column = matrix.columns[index]
        out[column.criterion.key] = "".join(row[x:x + column.width].strip() for row in rows)
        x += column.width + GAP
    return out


def long_rubric(folder: Path, *, more: bool) -> Path:
    """The support-reply rubric with long ids: ``more`` keeps its other criteria too (eight in all)."""
    shutil.copytree(SUPPORT, folder)
    rubric = folder / "support_reply.yaml"
    text = rubric.read_text().replace("resolves-issue", LONGEST).replace("policy-accurate", THIRTY)
    sixty = f"  - id: {SIXTY}\n    outcome: Does not promise a sixty-day refund window\n\n"
    text = text.replace("  - id: tone\n", sixty + "  - id: tone\n", 1)
    if not more:
        text = text[: text.index("  - id: asks-for-credentials")]
        text += "  - id: short\n    check: {type: length, max_words: 150}\n"
    rubric.write_text(text)
    labels = folder / "support_reply.labels.yaml"
    labels.write_text(labels.read_text().replace("resolves-issue", LONGEST).replace("policy-accurate", THIRTY))
    return rubric


async def open_studio(pilot) -> ResultsMatrix:
    """The studio graded, its editor ready, the results focused (the editor narrowed beside them)."""
    app = pilot.app
    await until(lambda: app.session.report is not None and not app.session.running
                and getattr(app.editor, "ready", False), what="graded, the editor ready")
    matrix = app.query_one(ResultsMatrix)
    matrix.focus()
    await focused_on(app, matrix)
    await until(lambda: app.query_one("#main").has_class("-results-focused")
                and app.query_one("#left").size.width <= 30, what="the editor narrowed beside the results")
    return matrix


async def test_a_48_character_id_and_two_ids_sharing_30_characters_read_whole_at_140x40(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    assert (len(LONGEST), shared_prefix(THIRTY, [SIXTY])) == (48, 30)
    app = StudioApp(long_rubric(tmp_path / "support_reply", more=False), watch=False)
    async with app.run_test(size=(140, 40)) as pilot:
        matrix = await open_studio(pilot)
        whole = {LONGEST: LONGEST + "*", THIRTY: THIRTY + "*", SIXTY: SIXTY, "tone": "tone", "short": "short"}
        # the columns are counted from the layout at once, their titles drawn at the next repaint
        await until(lambda: header_texts(matrix) == whole,
                    what=lambda: f"every criterion's title drawn whole (the header draws {header_texts(matrix)})")
        shown = header_texts(matrix)
        # Whole, on up to three header lines (before: "resolv…*", and "policy-a…*" twice).
        assert shown == {LONGEST: LONGEST + "*", THIRTY: THIRTY + "*", SIXTY: SIXTY, "tone": "tone", "short": "short"}
        assert matrix.header_lines == 4
        assert all(len(strip.text.rstrip()) <= matrix.size.width
                   for strip in matrix.render_lines(Region(0, 0, matrix.size.width, matrix.size.height)))


async def test_ids_sharing_a_long_prefix_stay_apart_where_they_cannot_be_whole(tmp_path: Path):
    from rubric_studio.tui.app import StudioApp

    app = StudioApp(long_rubric(tmp_path / "support_reply", more=True), watch=False)
    async with app.run_test(size=(140, 40)) as pilot:
        matrix = await open_studio(pilot)

        def parted() -> bool:  # all eight drawn, the two sharing a prefix with the words where they part
            titles = header_texts(matrix)
            return len(titles) == 8 and "thirty-days" in titles[THIRTY] and "sixty-days" in titles[SIXTY]

        # the columns are counted from the layout at once, their titles drawn at the next repaint
        await until(parted, what=lambda: f"all eight criteria's titles drawn (the header draws {header_texts(matrix)})")
        shown = header_texts(matrix)
        # Eight criteria do not all fit whole: the short ones are, and the long ones keep their
        # start and the word where they part ("policy-…thirty-days*" / "policy-…sixty-days").
        assert {shown[key] for key in ("tone", "asks-for-credentials", "short", "no-boilerplate",
                                       "no-internal-links")} == {"tone", "asks-for-credentials", "short",
                                                                 "no-boilerplate", "no-internal-links"}
        assert shown[THIRTY] != shown[SIXTY]
        assert shown[THIRTY].startswith("policy-") and "thirty-days" in shown[THIRTY]
        assert shown[SIXTY].startswith("policy-") and "sixty-days" in shown[SIXTY]
        assert shown[LONGEST].startswith("resolves-") and shown[LONGEST].endswith("step*")
        # ... and the focused line names the column in full.
        matrix.select_criterion(SIXTY)
        await until(lambda: f" · {SIXTY}" in matrix.render_lines(Region(0, 0, matrix.size.width, 1))[0].text,
                    what="the focused line naming the selected column")
        focused = matrix.render_lines(Region(0, 0, matrix.size.width, 1))[0].text
        assert f" · {SIXTY}" in focused


def test_a_cut_title_keeps_the_word_where_ids_part_at_every_width():
    rubric = parse_rubric(
        "name: t\ncriteria:\n"
        + "".join(f"  - id: {key}\n    outcome: O\n    required: true\n" for key in (LONGEST, THIRTY, SIXTY))
    )
    keys = [c.key for c in rubric.criteria]
    columns = [Column.of(c, shared_prefix(c.key, keys)) for c in rubric.criteria]
    assert [c.whole for c in columns] == [19, 16, 16]  # the width that shows each whole on three lines
    for width in range(5, 30):
        titles = [header_title(c.criterion, width, c.shared) for c in columns]
        assert all(len(lines) <= 3 and all(len(line) <= width for line in lines) for lines in titles)
        thirty, sixty = ("".join(lines) for lines in titles[1:])
        assert thirty != sixty and "thi" in thirty and "six" in sixty, (width, thirty, sixty)
