"""A new json_path check starts as ``exists: true``; filling another assertion replaces it."""

from rubric_studio.core.document import RubricDocument
from rubric_studio.core.loading import parse_rubric

TEXT = "name: r\ncriteria:\n  - id: a\n    outcome: x\n"


def test_filling_matches_replaces_the_default_exists_and_the_rubric_stays_valid():
    doc = RubricDocument(TEXT, "r.yaml")
    doc.set_check_type(0, "json_path")
    assert "exists: true" in doc.text
    doc.set_check_field(0, "matches", "^[A-Z]+$")
    check = parse_rubric(doc.text, "r.yaml").criteria[0].check
    assert check.matches == "^[A-Z]+$" and check.exists is None


def test_an_exists_the_user_chose_is_kept():
    doc = RubricDocument(TEXT, "r.yaml")
    doc.set_check_type(0, "json_path")
    doc.set_check_field(0, "exists", False)
    doc.set_check_field(0, "matches", "x")
    assert "exists: false" in doc.text  # two assertions: the user is told, nothing is dropped silently
