"""Check types come from one registry: the built-ins and third-party types installed under the
``rubric_studio.checks`` entry-point group. A plugin type installed as a real distribution (a
dist-info folder on ``sys.path``) validates, grades, shows in the editor's fields and exports
with a warning; a broken plugin or one reusing a built-in name is skipped with one warning."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path

import pytest

from rubric_studio.core.checks import (
    CHECK_TYPES,
    check_types,
    refresh_plugins,
)
from rubric_studio.core.document import CHECK_FIELDS, CHECK_ORDER
from rubric_studio.core.grading import score_text
from rubric_studio.core.loading import parse_rubric
from rubric_studio.core.problems import RubricError
from rubric_studio.interop import export_rubric

PLUGIN = '''
from typing import Literal
from rubric_studio.core.checks import CannotExport, CheckModel, CheckType, EditorField

class WordCount(CheckModel):
    type: Literal["word_count"]
    at_most: int

def build(spec, base_dir):
    def evaluate(view):
        n = len(view.text.split())
        return (1.0 if n <= spec.at_most else 0.0), f"{n} words (at most {spec.at_most})", []
    return evaluate

WORD_COUNT = CheckType("word_count", WordCount, build, hint="counts words",
                       fields=(EditorField("at_most", "int", "at most", "words", minimum=0),),
                       exports={"agentv": CannotExport("{type} has no {target} assertion yet")})

class Impostor(CheckModel):
    type: Literal["regex"]

CLASH = CheckType("regex", Impostor, build)
'''


@pytest.fixture
def plugin(tmp_path: Path, caplog):
    """A distribution ``rs-word-count`` with three entry points: a good type, a broken one, and one
    that tries to replace the built-in ``regex``."""
    (tmp_path / "rs_word_count_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "rs_word_count-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rs-word-count\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[rubric_studio.checks]\nword_count = rs_word_count_plugin:WORD_COUNT\n"
        "broken = rs_no_such_module_anywhere:TYPE\nclash = rs_word_count_plugin:CLASH\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with caplog.at_level(logging.WARNING, logger="rubric_studio.plugins"):
            refresh_plugins()
        yield [record.getMessage() for record in caplog.records if record.name == "rubric_studio.plugins"]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("rs_word_count_plugin", None)
        refresh_plugins()


RUBRIC = """\
name: counted
criteria:
  - id: short
    check: {type: word_count, at_most: 3}
"""


def test_builtin_types_come_first_in_their_order():
    assert list(CHECK_TYPES)[:6] == ["length", "keywords", "regex", "json", "python", "command"]
    assert [t.name for t in check_types()] == list(CHECK_TYPES)


def test_a_plugin_type_validates_grades_shows_in_the_editor_and_exports_with_a_warning(plugin):
    assert "word_count" in CHECK_TYPES and CHECK_FIELDS["word_count"] == ("at_most",)
    assert "at_most" in CHECK_ORDER
    rubric = parse_rubric(RUBRIC, "r.yaml")
    assert score_text(rubric, "one two three").details["short"].status == "met"
    assert score_text(rubric, "one two three four").details["short"].status == "unmet"
    assert "4 words (at most 3)" in score_text(rubric, "one two three four").details["short"].rationale

    from rubric_studio.tui.editor import CHECK_SPECS, check_field_rows

    rows = [(name, control) for name, control, _field, _spec in check_field_rows()]
    assert ("word_count", "ed-c-at_most") in rows
    assert CHECK_SPECS["at_most"].kind == "int" and CHECK_SPECS["at_most"].minimum == 0

    # beside a criterion the target can run (a file of nothing exportable is refused)
    rubric = parse_rubric(RUBRIC + "  - Is polite\n", "r.yaml")
    promptfoo = export_rubric(rubric, "promptfoo")
    assert "criterion 'short': word_count check has no promptfoo form; not exported" in promptfoo.warnings
    agentv = export_rubric(rubric, "agentv")
    assert "criterion 'short': word_count has no AgentV assertion yet" in agentv.warnings


def test_a_plugin_type_reports_bad_parameters_at_their_position(plugin):
    with pytest.raises(RubricError) as error:
        parse_rubric(RUBRIC.replace("at_most: 3", "at_mots: 3"), "r.yaml")
    message = str(error.value)
    assert "r.yaml:4:31: unknown key 'at_mots' in criteria[0].check — did you mean 'at_most'?" in message


def test_a_broken_plugin_and_one_replacing_a_builtin_each_warn_once_and_are_skipped(plugin):
    assert len(plugin) == 2, plugin
    assert all(w.startswith("warning: check-type plugin rs-word-count (entry point ") for w in plugin)
    broken = next(w for w in plugin if "entry point broken = " in w)
    assert "rs_no_such_module_anywhere" in broken and "ModuleNotFoundError" in broken
    clash = next(w for w in plugin if "entry point clash = " in w)
    assert "'regex' is already registered; a plugin cannot replace it" in clash
    rubric = parse_rubric("name: r\ncriteria:\n  - check: {type: regex, pattern: a}\n", "r.yaml")
    assert score_text(rubric, "a").details[rubric.criteria[0].key].status == "met"  # still the built-in


def test_after_the_plugin_is_gone_its_type_is_unknown_with_a_hint():
    with pytest.raises(RubricError) as error:
        parse_rubric(RUBRIC.replace("word_count, at_most: 3", "regexp, pattern: a"), "r.yaml")
    assert "unknown check type 'regexp' — did you mean 'regex'?" in str(error.value)
