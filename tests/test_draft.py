"""Drafting criteria (``rubric-studio draft`` and the engine behind it), against the real local fake
LLM server: proposals are validated one by one, the kept ones become a rubric that loads, a bad
reply is repaired once, a repeated request is served from the cache, errors are one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import Label
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.draft import append_drafted, pick_samples, read_proposals
from tests.fakellm import Call, FakeLLM, Text, unauthorized

pytestmark = pytest.mark.timeout(60)


def proposal(id_, outcome=None, *, check=None, weight=1, required=False, ranges=None, why="from the task"):
    """One proposal exactly as the strict reply schema has it (every key present)."""
    return {"id": id_, "outcome": outcome, "weight": weight, "required": required, "score_ranges": ranges,
            "check": check, "why": why}


PROPOSALS = [
    proposal("refund-policy", "States the 30-day refund window correctly", weight=2, required=True,
             why="the task is about refunds"),
    proposal("tone", "Uses a warm, professional tone", ranges=[{"min": 0, "text": "Rude"}, {"min": 5, "text": "Neutral"},
                                                              {"min": 8, "text": "Warm"}], why="samples 2 and 5 differ in tone"),
    proposal("no-dates", check={"type": "regex", "pattern": "([0-9]{4}", "expect_match": False, "flags": ""},
             why="a broken pattern"),
    proposal("short", check={"type": "length", "min_words": None, "max_words": 150, "min_chars": None,
                             "max_chars": None}, why="labelled fails ramble"),
    proposal("tone", "Addresses the customer by name", why="a duplicate id"),
    proposal("no-boilerplate", check={"type": "keywords", "required": None, "forbidden": ["As an AI"],
                                      "case_sensitive": False}, weight=-1, why="sample 3 says As an AI"),
    proposal("custom", check={"type": "sentiment"}, why="an unknown check type"),
]
KEPT = ["refund-policy", "tone", "short", "tone-2", "no-boilerplate"]


class Brain:
    """Answers drafting requests with ``payload`` and keeps every call it saw."""

    def __init__(self, payload: dict) -> None:
        self.payload = payload
        self.calls: list[Call] = []

    def __call__(self, call: Call) -> dict:
        self.calls.append(call)
        return self.payload


@pytest.fixture
def brain():
    return Brain({"criteria": PROPOSALS})


@pytest.fixture
def server(brain):
    with FakeLLM(brain=brain) as fake:
        yield fake


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    records = [{"id": f"s{i}", "output": f"Reply {i}: your refund arrives in {i} days. " + "word " * 40}
               for i in range(20)]
    records[4]["label"] = {"verdict": "fail", "note": "promises a date"}
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path


def draft(server: FakeLLM, folder: Path, *extra: str, provider: str = "openai") -> int:
    model, url = ("openai:gpt-4o-mini", server.base_url_openai) if provider == "openai" else \
        ("anthropic:claude-haiku-4-5", server.base_url_anthropic)
    return main(["draft", str(folder / "samples.jsonl"), "--task", "Replies to billing support tickets",
                 "--model", model, "--base-url", url, "--cache-path", str(folder / "cache.sqlite"), *extra])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_valid_proposals_are_written_deduplicated_with_their_origin_and_load(server, folder, brain, capsys, provider):
    out = folder / "support.yaml"
    assert draft(server, folder, "-o", str(out), provider=provider) == 0
    err = capsys.readouterr().err
    rubric = load_rubric(out)
    assert [c.id for c in rubric.criteria] == KEPT
    assert rubric.name == "support" and rubric.description == "Replies to billing support tickets"
    assert rubric.pass_threshold == 0.8
    assert rubric.criterion("tone").score_ranges == {0: "Rude", 5: "Neutral", 8: "Warm"}
    assert rubric.criterion("short").check.max_words == 150
    assert rubric.criterion("refund-policy").required and rubric.criterion("refund-policy").weight == 2
    text = out.read_text()
    assert "  # drafted from the task description and 8 samples: the task is about refunds\n  - id: refund-policy" in text
    assert text.count("# drafted from the task description and 8 samples") == len(KEPT)
    # Dropped proposals are reported with their reason, the non-TTY default is said.
    assert "dropped proposal #3 (no-dates): check: pattern does not compile" in err
    assert "dropped proposal #7 (custom): check: unknown check type 'sentiment'" in err
    assert "keeping all 5 proposals" in err and "Traceback" not in err
    # The request: 8 samples fenced as data, the labelled one with its verdict and note.
    (call,) = brain.calls
    assert call.user.count("<sample-") == 8 and "verdict fail; note: promises a date" in call.user
    assert call.tool_name == "draft_criteria" or call.body["response_format"]["json_schema"]["name"] == "draft_criteria"


def test_pick_keeps_exactly_those(server, folder):
    out = folder / "picked.yaml"
    assert draft(server, folder, "-o", str(out), "--pick", "4,1") == 0
    assert [c.id for c in load_rubric(out).criteria] == ["refund-policy", "tone-2"]


def test_pick_out_of_range_and_penalties_only_are_usage_errors(server, folder, capsys):
    assert draft(server, folder, "--pick", "9") == 2
    assert "there is no proposal 9" in capsys.readouterr().err
    assert draft(server, folder, "--pick", "5") == 2  # only the -1 keyword penalty
    assert "positive weight" in capsys.readouterr().err
    assert draft(server, folder, "--pick", "x") == 2
    assert server.calls() == 1  # a malformed --pick is refused before asking; the rest came from the cache


def test_stdout_yaml_and_json_format(server, folder, capsys):
    assert draft(server, folder, "--yes") == 0
    printed = capsys.readouterr().out
    assert printed.startswith("name: drafted-rubric\n") and "# drafted from" in printed
    assert draft(server, folder, "--yes", "--format", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in report["proposals"]] == KEPT and all(p["kept"] for p in report["proposals"])
    assert [d["number"] for d in report["dropped"]] == [3, 7]
    assert report["usage"]["cache_hits"] == 1 and report["samples_used"] == 8


def test_a_malformed_first_reply_is_repaired_once(server, folder, brain):
    server.queue(Text("Sure! Here are some criteria: tone, length."))
    out = folder / "repaired.yaml"
    assert draft(server, folder, "-o", str(out)) == 0
    assert server.calls() == 2
    assert "<previous-reply>" in brain.calls[0].user  # the brain answered only the repair request
    assert [c.id for c in load_rubric(out).criteria] == KEPT


def test_no_valid_criterion_after_the_repair_is_an_error_exit(server, folder, capsys):
    server.always({"criteria": [PROPOSALS[2]]})
    assert draft(server, folder) == 3
    err = capsys.readouterr().err
    assert server.calls() == 2 and "no valid criterion in the reply" in err and "Traceback" not in err


def test_a_second_identical_run_makes_no_http_call(server, folder):
    assert draft(server, folder, "-o", str(folder / "a.yaml")) == 0
    assert server.calls() == 1
    assert draft(server, folder, "-o", str(folder / "b.yaml")) == 0
    assert server.calls() == 1
    assert (folder / "a.yaml").read_text().replace("name: a", "name: b") == (folder / "b.yaml").read_text()


def test_a_rejected_key_is_one_clear_line(server, folder, capsys):
    server.always(unauthorized())
    out = folder / "never.yaml"
    code = draft(server, folder, "-o", str(out))
    err = capsys.readouterr().err
    assert code not in (0, None) and not out.exists()
    assert "drafting with openai:gpt-4o-mini failed: 401" in err and "check OPENAI_API_KEY" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_existing_file_is_refused_unless_forced(server, folder, capsys):
    out = folder / "exists.yaml"
    out.write_text("name: mine\ncriteria: [Says hello]\n")
    assert draft(server, folder, "-o", str(out)) == 2
    assert "--force" in capsys.readouterr().err and server.calls() == 0
    assert out.read_text() == "name: mine\ncriteria: [Says hello]\n"
    assert draft(server, folder, "-o", str(out), "--force", "--name", "forced") == 0
    assert load_rubric(out).name == "forced"


def test_no_model_configured_gives_the_judge_message(folder, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY")
    code = main(["draft", "--task", "Summaries of papers", "--cache-path", str(folder / "c.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and "no judge configured" in err and "OPENAI_API_KEY" in err


def test_empty_task_is_a_usage_error(capsys):
    assert main(["draft", "--task", "  "]) == 2
    assert "--task is empty" in capsys.readouterr().err


# -- the engine on its own ----------------------------------------------------------------


def test_read_proposals_slugs_ids_and_refuses_a_reply_without_criteria():
    kept, dropped = read_proposals({"criteria": [proposal("Mentions The Refund!", "Mentions the refund"),
                                                 proposal(None, "Gives a date", weight=0)]})
    assert [p.id for p in kept] == ["mentions-the-refund"]
    assert dropped[0].reason.startswith("weight 0") or "weight 0" in dropped[0].reason
    with pytest.raises(ValueError, match="criteria"):
        read_proposals({"ideas": []})
    with pytest.raises(ValueError, match="no valid criterion"):
        read_proposals({"criteria": [proposal("x")]})  # neither outcome nor check


def test_pick_samples_is_deterministic_spread_and_includes_labelled_ones():
    samples = [Sample(id=f"s{i}", output=str(i)) for i in range(30)]
    labels = {"s7": Label(verdict="fail"), "s12": Label(verdict="pass"), "s20": Label(verdict="fail", note="n")}
    picked = [s.id for s in pick_samples(samples, labels)]
    assert picked == [s.id for s in pick_samples(samples, labels)] and len(picked) == 8
    assert {"s7", "s12", "s20"} <= set(picked) and picked[0] == "s0" and picked[-1] == "s29"
    assert picked == sorted(picked, key=lambda i: int(i[1:]))


def test_append_keeps_the_documents_comments_and_renames_taken_ids():
    from rubric_studio.core.document import RubricDocument

    text = "name: r\n# my criteria\ncriteria:\n  # keep me\n  - id: tone\n    outcome: Friendly\n"
    document = RubricDocument.from_text(text, "r.yaml")
    kept, _ = read_proposals({"criteria": [proposal("tone", "Uses no jargon", why="task")]})
    assert append_drafted(document, kept, 0) == ["tone-2"]
    assert document.text.startswith(text)
    assert "  # drafted from the task description: task\n  - id: tone-2\n" in document.text
    document.undo()
    assert document.text == text


class Terminal:
    """A stdin that is a terminal and answers the keep prompt with ``answers``, one per line."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self.answers.pop(0) + "\n"


def test_at_a_terminal_the_user_picks_and_a_bad_answer_is_asked_again(server, folder, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", Terminal("7", "2-3"))
    out = folder / "asked.yaml"
    assert draft(server, folder, "-o", str(out)) == 0
    assert [c.id for c in load_rubric(out).criteria] == ["tone", "short"]
    err = capsys.readouterr().err
    assert err.count("Keep which?") == 2 and "there is no proposal 7" in err
    monkeypatch.setattr("sys.stdin", Terminal("none"))
    assert draft(server, folder, "-o", str(folder / "none.yaml")) == 1
    assert not (folder / "none.yaml").exists()


def test_judge_names_the_drafting_model_like_every_other_command(server, folder, brain):
    out = folder / "j.yaml"
    assert main(["draft", str(folder / "samples.jsonl"), "--task", "Replies to billing support tickets", "--judge",
                 "openai:gpt-4o-mini", "--base-url", server.base_url_openai, "--cache-path",
                 str(folder / "cache.sqlite"), "-o", str(out), "--yes"]) == 0
    assert [c.id for c in load_rubric(out).criteria] == KEPT
    assert brain.calls[0].body["model"] == "gpt-4o-mini"


def test_timeout_bounds_the_wait_for_the_drafting_model(server, folder, capsys):

    from tests.fakellm import Slow

    server.always(Slow(4))  # answers, but only after 4 s: the default 60 s would wait for it
    code = draft(server, folder, "--timeout", "0.3", "-o", str(folder / "slow.yaml"))
    err = capsys.readouterr().err
    assert code == 3 and not (folder / "slow.yaml").exists()
    assert "within 0.3 s" in err and "--timeout" in err and "Traceback" not in err
    assert draft(server, folder, "--timeout", "0") == 2
    assert "--timeout must be a number of seconds above 0" in capsys.readouterr().err


def grammar_brain(call: Call) -> dict:
    """A model whose decoding follows the reply schema exactly and, where the schema leaves a number
    free, writes the simplest number a grammar allows (0); where it lists values, the first one."""
    schema = call.body["response_format"]["json_schema"]["schema"]
    weight = schema["properties"]["criteria"]["items"]["properties"]["weight"]
    value = weight["enum"][0] if "enum" in weight else 0
    return {"criteria": [{**p, "weight": value} for p in PROPOSALS if p["check"] is None]}


def test_a_model_that_follows_the_schema_exactly_proposes_usable_weights(folder, capsys):
    from rubric_studio.core.rubric import Criterion
    from rubric_studio.engine.draft import DRAFT_SCHEMA

    weight = DRAFT_SCHEMA["properties"]["criteria"]["items"]["properties"]["weight"]
    assert 0 not in weight["enum"] and all(abs(w) <= 5 for w in weight["enum"])
    assert all(Criterion.model_validate({"id": "c", "outcome": "Says hello", "weight": w}) for w in weight["enum"])
    with FakeLLM(brain=grammar_brain) as server:
        out = folder / "grammar.yaml"
        assert draft(server, folder, "-o", str(out), "--yes") == 0
    rubric = load_rubric(out)
    assert [c.id for c in rubric.criteria] == ["refund-policy", "tone", "tone-2"]
    assert all(c.weight > 0 for c in rubric.criteria)
