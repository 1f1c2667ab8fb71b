"""Headless reports a CI user reads: progress on a terminal only, JUnit messages that say
why, and a self-contained HTML page that shows user text as text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rubric_studio.cli import main
from tests._timing import scaled
from tests.fakellm import FakeLLM, Refuse
from tests.test_cli import CHECKS_ONLY

ROOT = Path(__file__).resolve().parent.parent
CHECK_SAMPLES = (
    '{"id": "good", "output": "thanks, done"}\n'
    '{"id": "long", "output": "thanks but this answer goes on and on and on"}\n'
    '{"id": "rude", "output": "done"}\n'
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# -- 1. progress on stderr, only on a terminal -------------------------------------


def _checks_files(tmp_path: Path) -> list[str]:
    (tmp_path / "r.yaml").write_text(CHECKS_ONLY)
    (tmp_path / "s.jsonl").write_text(CHECK_SAMPLES)
    return [str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl")]


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="120", PYTHONPATH=str(ROOT))
    return env


def _grade_with_pty_stderr(args: list[str]) -> tuple[int, str, str]:
    """Run ``grade`` with a pseudo-terminal as stderr and a pipe as stdout: (code, stdout, terminal text)."""
    master, slave = os.openpty()
    received: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                return
            if not chunk:
                return
            received.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "rubric_studio", "grade", *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave, env=_child_env())  # fmt: skip
    finally:
        os.close(slave)
    out, _ = proc.communicate(timeout=scaled(60))
    reader.join(timeout=scaled(10))
    os.close(master)
    terminal = ANSI.sub("", b"".join(received).decode("utf-8", "replace"))
    return proc.returncode, out.decode(), terminal


@pytest.mark.parametrize("fmt", ["json", "jsonl", "markdown", "junit", "html", "table"])
def test_progress_goes_to_a_terminal_stderr_for_every_format_and_stdout_stays_clean(fmt: str, tmp_path: Path):
    code, out, terminal = _grade_with_pty_stderr([*_checks_files(tmp_path), "--format", fmt])
    assert code == 1  # two samples fail, as with no terminal
    if fmt in ("jsonl", "json"):  # streamed: counts the samples written
        assert "grading · 3 samples done" in terminal
    else:
        assert "graded · 3 samples" in terminal and "3/3 samples" in terminal
    assert "\x1b" not in out and "samples ·" not in out and "graded ·" not in out
    if fmt == "json":
        assert [s["id"] for s in json.loads(out)["samples"]] == ["good", "long", "rude"]
    elif fmt == "jsonl":
        assert [json.loads(line).get("id") for line in out.splitlines()] == ["good", "long", "rude", None]
    elif fmt == "junit":
        assert ET.fromstring(out).find("testsuite").get("failures") == "2"
    elif fmt == "html":
        assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")


def test_no_progress_when_stderr_is_a_pipe(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "rubric_studio", "grade", *_checks_files(tmp_path), "--format", "json"],
                          capture_output=True, text=True, timeout=scaled(60), env=_child_env())  # fmt: skip
    assert done.returncode == 1
    assert json.loads(done.stdout)["summary"]["samples"] == 3
    assert "\x1b" not in done.stderr and "graded" not in done.stderr and "checks ·" not in done.stderr
    assert done.stderr == ""


# -- a judged run: JUnit and HTML --------------------------------------------------

JUDGED = """\
name: support <b>bold</b>
pass_threshold: 0.8
criteria:
  - id: refund-policy
    outcome: States the refund window
    weight: 2
    required: true
  - id: tone
    outcome: Warm tone
    score_ranges: {0: Rude, 4: Neutral, 7: Friendly, 10: Warm}
    min_score: 0.7
  - id: short
    check: {type: length, max_words: 40}
"""
XSS = "<script>alert(1)</script>"
JUDGED_SAMPLES = [
    {"id": "good", "output": "Your refund is on its way, thanks for your patience!"},
    {"id": "bad", "output": "Read the docs."},
    {"id": "boom", "output": "BOOM refund maybe"},
    {"id": XSS, "output": f"refund {XSS} <img src=https://evil.example/x.png>"},
]
LABELS = """\
good: {verdict: pass, criteria: {refund-policy: met, tone: met}}
bad: {verdict: pass, criteria: {refund-policy: met}, note: "human <i>disagrees</i>"}
"""


def judge(call):
    """Refund met when the sample mentions one; tone 9 on a thanks, else 4; a BOOM sample's tone is refused."""
    asked = call.criteria[0]
    mentions = "refund" in call.sample
    if asked.kind == "analytic":
        if "BOOM" in call.sample:
            return Refuse("cannot grade this tone")
        warm = "thanks" in call.sample
        return {"rationale": "warm" if warm else "curt", "evidence": ["thanks"] if warm else [], "score": 9 if warm else 4}
    quotes = ["refund", "a quote that is nowhere"] if mentions else []
    return {"rationale": f"mentions: {mentions} {XSS}", "evidence": quotes, "verdict": "met" if mentions else "unmet"}


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(grade arguments for a judged run against a fake server, the labels file)."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (tmp_path / "j.yaml").write_text(JUDGED)
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(s) + "\n" for s in JUDGED_SAMPLES))
    (tmp_path / "j.labels.yaml").write_text(LABELS)
    with FakeLLM() as server:
        server.always(judge)
        yield ([str(tmp_path / "j.yaml"), str(tmp_path / "j.jsonl"), "--judge", "openai:gpt-4o-mini",
                "--base-url", server.base_url_openai], tmp_path / "j.labels.yaml")  # fmt: skip


def test_junit_failure_messages_name_the_failed_criteria_and_score_vs_threshold(judged, tmp_path: Path):
    args, _ = judged
    report = tmp_path / "report.xml"
    assert main(["grade", *args, "--format", "junit", "-o", str(report)]) == 3  # the refused cell errored
    cases = {case.get("name"): case for case in ET.parse(report).getroot().iter("testcase")}
    assert cases["good"].find("failure") is None and cases["good"].find("error") is None
    message = cases["bad"].find("failure").get("message")
    assert message == "score 0.35 < threshold 0.80; unmet: refund-policy (required), tone (score 0.4 < 0.7)"
    error = cases["boom"].find("error").get("message")
    assert error.startswith("partial score ") and "threshold 0.80" in error
    assert re.search(r"errored: tone \(.*refus", error, re.I), error
    assert "refund-policy" not in error  # met: not named


def test_failure_message_says_a_passing_score_failed_on_a_required_criterion(tmp_path: Path):
    from rubric_studio.cli.report import failure_message
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict

    (tmp_path / "p.yaml").write_text(
        "name: p\npass_threshold: 0.5\ncriteria:\n"
        "  - {id: must, outcome: Must, required: true}\n  - {id: a, outcome: A, weight: 3}\n"
        "  - {id: bad, outcome: Bad thing, weight: -1}\n"
    )
    rubric = load_rubric(str(tmp_path / "p.yaml"))
    cells = [CriterionResult("must", Status.UNMET, 0.0), CriterionResult("a", Status.MET, 1.0),
             CriterionResult("bad", Status.MET, 1.0)]  # fmt: skip
    sample = SampleResult("x", 0.5, Verdict.FAIL, cells)
    assert failure_message(sample, rubric) == (
        "score 0.50 >= threshold 0.50; unmet: must (required), bad (penalty present, weight -1)"
    )
    near = SampleResult("y", 0.4999, Verdict.FAIL, cells)  # two decimals would show 0.50 < 0.50
    assert failure_message(near, rubric).startswith("score 0.4999 < threshold 0.5000;")


# -- 3. HTML ------------------------------------------------------------------------


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if child.tag == tag and (cls is None or cls in (child.attrs.get("class") or "").split()):
                    found.append(child)
                found += child.find_all(tag, cls)
        return found

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()


class Tree(HTMLParser):
    """A small DOM from html.parser (void elements closed at once)."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "source", "wbr"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#root", {}, None)
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in self.VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def test_html_is_one_self_contained_page_with_matrix_evidence_and_agreement(judged, tmp_path: Path, capsys):
    args, labels = judged
    page = tmp_path / "run.html"
    code = main(["grade", *args, "--labels", str(labels), "--format", "html", "-o", str(page)])
    assert code == 3  # as junit: a cell errored
    assert capsys.readouterr().out == ""  # -o: the page went to the file
    text = page.read_text(encoding="utf-8")
    root = Tree(text).root

    (matrix,) = root.find_all("table", "matrix")
    head = matrix.find_all("thead")[0].find_all("th")
    assert [th.text() for th in head[:3]] == ["sample", "verdict", "score"] and head[-1].text() == "human"
    assert [th.children[0] for th in head[3:-1]] == ["refund-policy", "tone", "short"]  # one column per criterion
    rows = matrix.find_all("tbody")[0].find_all("tr")
    assert [row.find_all("th")[0].text() for row in rows] == [s["id"] for s in JUDGED_SAMPLES]
    assert all(len(row.find_all("td", "cell")) == 3 for row in rows)
    verdicts = {row.find_all("th")[0].text(): row.find_all("td")[0].text() for row in rows}
    assert verdicts == {"good": "pass", "bad": "fail", "boom": "error", XSS: "pass"}

    found = [li.text() for li in root.find_all("li", "found")]
    missing = [li.text() for li in root.find_all("li", "missing")]
    assert any("“refund”" in q for q in found) and any("“thanks”" in q for q in found)
    assert any("a quote that is nowhere" in q and "not found" in q for q in missing)
    assert any(m.text() == "refund" for m in root.find_all("mark"))  # found quotes marked in the graded text

    # user text is text: no element came from a sample, the rubric, a label or a rationale
    tags = {node.tag for node in root.walk()}
    assert "script" not in tags and "img" not in tags and "b" not in tags and "i" not in tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert root.find_all("h1")[0].text() == "support <b>bold</b>"
    assert any("human <i>disagrees</i>" in p.text() for p in root.find_all("p"))

    # nothing loaded from anywhere: only in-page links, one inline style, no external resource
    for node in root.walk():
        for name in ("src", "href", "srcset", "action", "data"):
            value = node.attrs.get(name)
            assert value is None or value.startswith("#"), (node.tag, name, value)
    assert not root.find_all("link") and len(root.find_all("style")) == 1
    style = root.find_all("style")[0].text()
    assert "url(" not in style and "@import" not in style and "http" not in style

    # agreement: the figures calibrate computes, overall and per criterion
    (table,) = root.find_all("table", "agreement")
    by_row = {tr.find_all("th")[0].text(): [td.text() for td in tr.find_all("td")] for tr in table.find_all("tr")[1:]}
    assert main(["calibrate", *args, "--labels", str(labels), "--format", "json"]) == 3
    calibrated = json.loads(capsys.readouterr().out)
    overall = calibrated["overall"]
    assert by_row["overall (sample verdicts)"][:2] == [str(overall["n"]), f"{overall['accuracy']:.0%}"]
    assert set(by_row) - {"overall (sample verdicts)"} == set(calibrated["criteria"]) == {"refund-policy", "tone"}
    tone = calibrated["criteria"]["tone"]
    assert by_row["tone"][:2] == [str(tone["n"]), f"{tone['accuracy']:.0%}"]
    human = {row.find_all("th")[0].text(): row.find_all("td")[-1].text() for row in rows}
    assert human["bad"] == "pass ≠" and human["good"] == "pass"  # judge vs human per sample


def test_html_to_stdout_exit_code_like_the_other_formats(tmp_path: Path, capsys):
    files = _checks_files(tmp_path)
    assert main(["grade", *files, "--format", "html"]) == main(["grade", *files, "--format", "json"]) == 1
    out = capsys.readouterr().out
    page = out[: out.index("</html>") + len("</html>")]
    rows = Tree(page).root.find_all("table", "matrix")[0].find_all("tbody")[0].find_all("tr")
    assert len(rows) == 3


# -- made-up quotes, penalties and disagreements in the reports ---------------------


def test_table_and_markdown_mark_a_made_up_quote_like_the_studio(judged, capsys):
    args, _ = judged
    main(["grade", *args])
    table = capsys.readouterr().out
    good_row = next(line for line in table.splitlines() if line.startswith("│ good "))
    assert "✓?" in good_row  # refund-policy quoted "a quote that is nowhere"
    assert "✓? made-up quote" in table
    main(["grade", *args, "--format", "markdown"])
    markdown = capsys.readouterr().out
    good_row = next(line for line in markdown.splitlines() if line.startswith("| good |"))
    assert good_row.split(" | ")[3] == "✓?"
    bad_row = next(line for line in markdown.splitlines() if line.startswith("| bad |"))
    assert "?" not in bad_row  # no quotes, nothing made up
    assert "✓?: made-up quote" in markdown


PENALTY_RUBRIC = """\
name: penalties
criteria:
  - id: action-items
    outcome: Lists the action items
  - id: shares-password
    outcome: Asks for the password
    weight: -2
"""


def _penalty_judge(call):
    asked = call.criteria[0]
    if "password" in asked.outcome:
        return {"rationale": "asks", "evidence": [], "verdict": "met" if "password" in call.sample else "unmet"}
    return {"rationale": "lists", "evidence": [], "verdict": "met" if "todo" in call.sample else "unmet"}


def test_html_colours_a_met_penalty_as_bad_and_words_a_cell_disagreement_as_one(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (tmp_path / "r.yaml").write_text(PENALTY_RUBRIC)
    (tmp_path / "s.jsonl").write_text('{"id": "leak", "output": "todo: send your password"}\n'
                                      '{"id": "clean", "output": "todo: restart"}\n')
    (tmp_path / "l.yaml").write_text("clean: {verdict: pass, criteria: {action-items: unmet}}\n")
    page = tmp_path / "run.html"
    with FakeLLM() as server:
        server.always(_penalty_judge)
        main(["grade", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", "openai:gpt-4o-mini",
              "--base-url", server.base_url_openai, "--labels", str(tmp_path / "l.yaml"), "--format", "html",
              "-o", str(page), "--no-cache"])
    text = page.read_text()
    cells = re.findall(r'<td class="cell ([^"]*)"[^>]*><a href="#s(\d)-c(\d)">', text)
    classes = {(int(s), int(c)): cls.split() for cls, s, c in cells}
    assert "bad" in classes[(0, 1)] and "good" not in classes[(0, 1)]  # leak: the penalty is present
    assert "good" in classes[(1, 1)]  # clean: the penalty is absent
    assert "good" in classes[(0, 0)]  # a positive criterion met
    assert ".good{color:var(--pass)}" in text and ".bad{color:var(--fail)}" in text
    assert "clean: human: action-items unmet · judge: met" in text
    assert "human pass, judge pass" not in text


def test_calibrate_table_words_a_cell_disagreement_as_the_html_report_does(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (tmp_path / "r.yaml").write_text(PENALTY_RUBRIC)
    (tmp_path / "s.jsonl").write_text('{"id": "leak", "output": "todo: send your password"}\n'
                                      '{"id": "clean", "output": "todo: restart"}\n')
    (tmp_path / "l.yaml").write_text("clean: {verdict: pass, criteria: {action-items: unmet}}\n"
                                     "leak: {verdict: pass}\n")
    with FakeLLM() as server:
        server.always(_penalty_judge)
        main(["calibrate", str(tmp_path / "r.yaml"), str(tmp_path / "s.jsonl"), "--judge", "openai:gpt-4o-mini",
              "--base-url", server.base_url_openai, "--labels", str(tmp_path / "l.yaml"), "--no-cache"])
    text = capsys.readouterr().out
    assert "clean: human: action-items unmet · judge: met" in text
    assert "leak: human: pass · judge: fail" in text
    assert "human pass, rubric pass" not in text
