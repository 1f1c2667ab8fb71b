"""``improve``: candidates made from the fitting labels, proven on the holdout, ranked and labelled
honestly, and applied as one edit. The local fake server is both the judge (keyword overlap
between outcome and text) and the assistant (scripted rewordings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.core.labels import load_labels
from rubric_studio.core.loading import load_rubric
from rubric_studio.core.samples import load_samples
from rubric_studio.engine.api import make_grader
from rubric_studio.engine.assistant import make_assistant
from rubric_studio.engine.improve import improve, stratified_split
from tests.fakellm import FakeLLM, keyword_brain

GOOD = "Gives business days"
RUBRIC = """\
# Billing replies.
name: billing
pass_threshold: 0.5
criteria:
  # the wording under test: it catches "refund", the labels want a timeline
  - id: timeline
    outcome: Mentions the refund   # keep this comment
    weight: 2
  - id: polite
    outcome: Thanks the customer
"""
MARKERS = [f"tag{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]  # same length: none inside another


def build(tmp_path: Path, per_class: int = 6, held_false_passes: int = 1,
          held_false_fails: int = 0) -> tuple[Path, Path, list[str], list[str]]:
    """A rubric, ``2 * per_class`` samples and labels where ``timeline`` is met iff the text gives business days.

    The texts are made after the split is known, so that the over-fitting rewording (the fitting
    part's met markers) provably breaks the held-out met cells the current wording gets right.
    ``held_false_passes`` / ``held_false_fails``: held-out cells the current wording gets wrong."""
    human = {f"s{i:02d}": i < per_class for i in range(2 * per_class)}
    fit_ids, held = stratified_split(human, seed=0)
    wrong_unmet = sorted(sid for sid in held if not human[sid])[:held_false_passes]
    wrong_met = sorted(sid for sid in held if human[sid])[:held_false_fails]
    texts = {}
    for i, sid in enumerate(sorted(human)):
        marker = MARKERS[i]
        if human[sid]:  # met: a timeline; the current wording is right when "refund" is there too
            refund = "credit" if sid in wrong_met or (sid not in held and i % 2) else "refund"
            texts[sid] = f"Thanks! Your {refund} arrives in 5 business days. {marker}"
        else:  # unmet: no timeline; "refund" makes the current wording pass it (a false pass)
            refund = "refund" if sid in fit_ids or sid in wrong_unmet else "case"
            texts[sid] = f"Thanks. We will look at your {refund} soon. {marker}"
    rubric = tmp_path / "billing.yaml"
    rubric.write_text(RUBRIC)
    samples = tmp_path / "billing.samples.jsonl"
    samples.write_text("".join(json.dumps({"id": sid, "output": text}) + "\n" for sid, text in texts.items()))
    (tmp_path / "billing.labels.yaml").write_text("".join(
        f"{sid}:\n  criteria:\n    timeline: {'met' if met else 'unmet'}\n" for sid, met in human.items()))
    overfit = "Uses " + " or ".join(MARKERS[int(sid[1:])] for sid in fit_ids if human[sid])
    return rubric, samples, fit_ids, [overfit]


def assistant_brain(rewordings: list[str], seen: list[str]):
    def brain(call):
        if call.system.startswith("You improve the criteria"):
            seen.append(call.user)
            return {"rewordings": [{"outcome": o, "why": f"the timeline the person wants: {o}"} for o in rewordings]}
        if call.system.startswith("You compare two statements"):
            return {"same_property": "refund is confirmed" not in call.user.lower(), "reason": "scripted"}
        return keyword_brain(call)

    return brain


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("RUBRIC_STUDIO_HOME", str(tmp_path / "home"))
    return tmp_path


async def run_improve(server, rubric_path, samples_path, cache, **options):
    rubric = load_rubric(rubric_path)
    samples = load_samples(samples_path).samples
    labels = load_labels(rubric_path.with_name("billing.labels.yaml")).labels
    grader = make_grader(rubric, judge="openai:gpt-4o-mini", base_url=server.base_url_openai, cache_path=cache)
    assistant = make_assistant(rubric, model="openai:gpt-4o-mini", base_url=server.base_url_openai, cache_path=cache)
    try:
        return await improve(rubric, samples, labels, grader=grader, assistant=assistant, **options)
    finally:
        await grader.aclose()
        await assistant.aclose()


async def test_the_real_fix_ranks_first_and_the_overfit_is_labelled_as_such(env):
    rubric_path, samples_path, fit_ids, (overfit,) = build(env, per_class=30, held_false_passes=3,
                                                           held_false_fails=3)
    seen: list[str] = []
    with FakeLLM(brain=assistant_brain([overfit, GOOD], seen)) as server:
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"])
    assert report.criterion == "timeline"  # the criterion with disagreements, found without being named
    assert len(report.holdout_ids) == 18
    by_outcome = {c.change["outcome"]: c for c in report.candidates}
    good, bad = by_outcome[GOOD], by_outcome[overfit]
    wrong_in_fit = 21 + sum(1 for sid in fit_ids if int(sid[1:]) < 30 and int(sid[1:]) % 2)  # false passes + fails
    assert report.candidates[0] is good and good.status == "improves holdout" and good.confirmed
    assert (good.holdout.fixed, good.holdout.broke, good.holdout.kappa_after) == (6, 0, 1.0)
    assert good.evidence.p_value == pytest.approx(0.03125)  # 2 * (1/2)**6
    assert (good.fit.fixed, good.fit.broke) == (wrong_in_fit, 0)
    assert bad.status == "over-fits" and not bad.confirmed
    assert (bad.fit.fixed, bad.fit.broke) == (wrong_in_fit, 0)  # perfect on the part it was made from ...
    assert (bad.holdout.fixed, bad.holdout.broke) == (3, 6)  # ... and worse on the labels it never saw
    assert bad.holdout.kappa_after < bad.holdout.kappa_before
    # the assistant saw fitting samples only: no held-out text reaches it
    held_markers = [MARKERS[int(s[1:])] for s in report.holdout_ids]
    assert seen and not any(marker in seen[0] for marker in held_markers)


async def test_a_gain_on_a_few_held_out_cells_is_inconclusive_not_an_improvement(env):
    rubric_path, samples_path, _, (overfit,) = build(env)
    with FakeLLM(brain=assistant_brain([GOOD], [])) as server:
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"])
    (good,) = report.candidates
    assert (good.holdout.n, good.holdout.fixed, good.holdout.broke) == (4, 1, 0)  # better, on 4 cells
    assert good.status == "inconclusive" and not good.confirmed
    assert good.to_dict()["evidence"]["cells"] == 4 and good.to_dict()["evidence"]["shows_gain"] is False
    assert "at least 10 needed" in good.evidence.text()


async def test_a_candidate_costs_exactly_its_criterions_cells_and_a_rerun_costs_nothing(env):
    rubric_path, samples_path, _, (overfit,) = build(env)
    with FakeLLM(brain=assistant_brain([GOOD, overfit], [])) as server:
        first = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword", "examples"])
        n = 12
        assert [c.calls for c in first.candidates] == [n, n, n]  # timeline's 12 cells each, never polite's
        # baseline, one assistant call, one meaning check per rewording (2), three candidates
        assert server.calls() == 2 * n + 1 + 2 + 3 * n
        again = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite",
                                  kinds=["reword", "examples"])
        assert server.calls() == 2 * n + 1 + 2 + 3 * n and again.calls == 0
    assert [c.calls for c in again.candidates] == [0, 0, 0]

    def same(c):
        return {k: v for k, v in c.to_dict().items() if k != "calls"}

    assert [same(c) for c in again.candidates] == [same(c) for c in first.candidates]


async def test_examples_and_a_separating_rule_are_offered_and_evaluated(env):
    rubric_path, samples_path, _, _ = build(env, per_class=30, held_false_passes=3, held_false_fails=3)
    with FakeLLM(brain=assistant_brain([GOOD], [])) as server:
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite",
                                   kinds=["examples", "check"])
    kinds = {c.kind: c for c in report.candidates}
    assert kinds["check"].change["check"] in ({"type": "keywords", "required": ["business"]},
                                              {"type": "keywords", "required": ["business days"]},
                                              {"type": "keywords", "required": ["days"]})
    assert kinds["check"].status == "improves holdout" and kinds["check"].calls == 0
    examples = kinds["examples"].change["examples"]
    assert 1 <= len(examples) <= 3 and all(e["id"] in report.fit_ids for e in examples)
    assert kinds["examples"].fit is not None and kinds["examples"].holdout is not None


def test_cli_json_shape_and_apply_edits_one_criterion_keeping_comments(env, capsys):
    rubric_path, samples_path, _, (overfit,) = build(env)
    with FakeLLM(brain=assistant_brain([overfit, GOOD], [])) as server:
        args = ["improve", str(rubric_path), str(samples_path), "--judge", "openai:gpt-4o-mini", "--base-url",
                server.base_url_openai, "--cache-path", str(env / "cache.sqlite"), "--kinds", "reword"]
        assert main([*args, "--format", "json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["criterion"] == "timeline"
        first = data["candidates"][0]
        assert set(first) >= {"kind", "change", "fit", "holdout", "calls"}
        assert set(first["holdout"]) >= {"fixed", "broke", "kappa_before", "kappa_after"}
        assert first["change"]["outcome"] == GOOD
        before = load_rubric(rubric_path)
        # its gain rests on 4 held-out cells: not written without --force (stdin is no terminal here)
        assert main([*args, "--apply", "1"]) == 2
        err = capsys.readouterr().err
        assert "not applied" in err and "inconclusive" in err and "--force" in err
        assert rubric_path.read_text() == RUBRIC
        assert main([*args, "--apply", "1", "--force"]) == 0
        text = rubric_path.read_text()
        assert f"outcome: {GOOD}" in text and "# keep this comment" in text and "# Billing replies." in text
        after = load_rubric(rubric_path)
        assert after.criterion("polite").fingerprint() == before.criterion("polite").fingerprint()
        assert after.pass_threshold == before.pass_threshold

        # accepting it re-judges exactly that criterion's cells (no cache: counted at the server)
        async def regrade():
            samples = load_samples(samples_path).samples
            grader = make_grader(before, judge="openai:gpt-4o-mini", base_url=server.base_url_openai,
                                 use_cache=False)
            await grader.run(before, samples)
            start = server.calls()
            await grader.run(after, samples)
            await grader.aclose()
            return server.calls() - start

        import asyncio

        assert asyncio.run(regrade()) == 12


def test_apply_refuses_when_the_file_changed_since(env, capsys):
    rubric_path, samples_path, _, _ = build(env)
    with FakeLLM(brain=assistant_brain([GOOD], [])) as server:
        args = ["improve", str(rubric_path), str(samples_path), "--judge", "openai:gpt-4o-mini", "--base-url",
                server.base_url_openai, "--cache-path", str(env / "cache.sqlite"), "--kinds", "reword"]
        assert main(args) == 0
        rubric_path.write_text(RUBRIC.replace("weight: 2", "weight: 3"))
        # a fresh run sees the new file; an apply computed on the old one must not land: simulate by
        # applying a stale report through the engine
        from rubric_studio.engine.improve import apply_candidate

        report = asyncio_run_improve(server, rubric_path, samples_path, env)
        rubric_path.write_text(RUBRIC.replace("weight: 2", "weight: 4"))
        with pytest.raises(ValueError, match="changed since"):
            apply_candidate(rubric_path, report.rubric_hash, report.criterion, report.candidates[0])
        assert "weight: 4" in rubric_path.read_text()


def asyncio_run_improve(server, rubric_path, samples_path, env):
    import asyncio

    return asyncio.run(run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"]))


async def test_a_judge_whose_cells_all_error_is_named_not_mistaken_for_agreement(env):
    from tests.fakellm import CutOff

    rubric_path, samples_path, _, _ = build(env)
    with FakeLLM() as server:
        server.always(CutOff())
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"])
    assert report.criterion is None and report.candidates == []
    assert any("24 of 24 judged cells" in w and "fix the judge first" in w for w in report.warnings)


async def test_a_named_criterion_whose_cells_all_error_is_not_said_to_agree_with_the_labels(env):
    # --criterion with a judge that only cuts off: "the judge already agrees with every fitting
    # label" stood beside "24 of 24 judged cells ended in error"
    from tests.fakellm import CutOff

    rubric_path, samples_path, _, _ = build(env)
    with FakeLLM() as server:
        server.always(CutOff())
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"],
                                   criterion_id="timeline")
    assert report.candidates == []
    assert not any("already agrees" in w for w in report.warnings)
    assert any("no fitting label of timeline has a verdict to compare" in w for w in report.warnings)


def test_improve_without_a_judge_says_so_and_exits_2(env, monkeypatch, capsys):
    rubric_path, samples_path, _, _ = build(env)
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main(["improve", str(rubric_path), str(samples_path)]) == 2
    err = capsys.readouterr().err
    assert "without a judge" in err and "OPENAI_API_KEY" in err and "disagrees" not in err


async def test_a_garbled_rewording_is_dropped_with_its_reason_never_offered(env):
    rubric_path, samples_path, _, _ = build(env)
    garbled = "}], // JSON object with only the outcome…"
    with FakeLLM(brain=assistant_brain([garbled, GOOD], [])) as server:
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"])
    assert [c.change["outcome"] for c in report.candidates] == [GOOD]
    assert report.dropped == [{"kind": "reword", "outcome": garbled, "reason": report.dropped[0]["reason"]}]
    assert "braces" in report.dropped[0]["reason"]
    assert any("dropped a proposed rewording" in w and "braces" in w for w in report.warnings)


async def test_rewordings_that_are_all_garbled_are_still_listed_as_dropped(env):
    # every proposal unusable, also after the repair: the reasons were only in a warning and
    # `dropped` (what scripts read) was empty
    rubric_path, samples_path, _, _ = build(env)
    with FakeLLM(brain=assistant_brain(["outcome.json", "{\"outcome\": 1}"], [])) as server:
        report = await run_improve(server, rubric_path, samples_path, env / "cache.sqlite", kinds=["reword"])
    assert report.candidates == []
    assert [d["outcome"] for d in report.dropped] == ["outcome.json", '{"outcome": 1}']
    assert all(d["kind"] == "reword" and d["reason"] for d in report.dropped)
    assert any("rewordings could not be had" in w for w in report.warnings)


SHORT_RUBRIC = """\
name: replies
pass_threshold: 0.6
criteria:
  - id: greets
    outcome: Greets the customer
    weight: 2
  - id: short
    check: {type: length, max_words: 20}
"""


def build_verdicts(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """12 sample verdicts and one cell label: two long replies pass the rubric but the person fails them."""
    texts = {f"g{i}": f"Hello customer, your order ships today. {MARKERS[i]}" for i in range(8)}
    texts |= {f"b{i}": f"Order ships today. {MARKERS[10 + i]}" for i in range(2)}
    long_ids = ["long0", "long1"]
    texts |= {sid: "Hello customer, " + " ".join(["your order ships today and more words follow"] * 5) for sid in long_ids}
    verdicts = {sid: "fail" if sid.startswith(("b", "long")) else "pass" for sid in texts}
    rubric = tmp_path / "replies.yaml"
    rubric.write_text(SHORT_RUBRIC)
    samples = tmp_path / "replies.samples.jsonl"
    samples.write_text("".join(json.dumps({"id": sid, "output": text}) + "\n" for sid, text in texts.items()))
    labels = "".join(f"{sid}:\n  verdict: {v}\n" for sid, v in verdicts.items()).replace(
        "g0:\n  verdict: pass\n", "g0:\n  verdict: pass\n  criteria:\n    greets: met\n")
    (tmp_path / "replies.labels.yaml").write_text(labels)
    return rubric, samples, long_ids


def test_sample_verdicts_blame_the_separating_criterion_and_propose_making_it_required(env, capsys):
    rubric_path, samples_path, long_ids = build_verdicts(env)
    with FakeLLM() as server:
        args = ["improve", str(rubric_path), str(samples_path), "--judge", "openai:gpt-4o-mini", "--base-url",
                server.base_url_openai, "--cache-path", str(env / "cache.sqlite")]
        assert main([*args, "--format", "json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["blame"][0]["criterion"] == "short" and sorted(data["blame"][0]["explains"]) == long_ids
        required = [c for c in data["candidates"] if c["kind"] == "required"]
        assert required and required[0]["change"] == {"criterion": "short", "required": True}
        fixed = required[0]["fit"]["fixed"] + required[0]["holdout"]["fixed"]
        broke = required[0]["fit"]["broke"] + required[0]["holdout"]["broke"]
        assert (fixed, broke) == (len(long_ids), 0)  # both disagreements explained, nothing broken
        number = data["candidates"].index(required[0]) + 1
        assert main([*args, "--apply", str(number), "--force"]) == 0
    assert load_rubric(rubric_path).criterion("short").required


def test_blame_names_a_criterion_to_require_and_a_required_one_to_relax():
    from rubric_studio.core.results import CriterionResult, SampleResult, Status, Verdict
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.improve import blame

    rubric = Rubric.model_validate({"name": "r", "criteria": [
        {"id": "gate", "outcome": "Gate", "required": True}, {"id": "short", "outcome": "Short"},
        {"id": "rude", "outcome": "Rude", "weight": -1}]})

    def graded(sid, verdict, gate, short, rude=Status.UNMET):
        return SampleResult(sid, None, verdict, [CriterionResult("gate", gate), CriterionResult("short", short),
                                                 CriterionResult("rude", rude)])

    met, unmet = Status.MET, Status.UNMET
    results = [graded("long", Verdict.PASS, met, unmet, met),  # person fails it: requiring short would too
               graded("gated", Verdict.FAIL, unmet, met),  # person passes it: the gate fails it
               graded("agree", Verdict.PASS, met, met),
               graded("error", Verdict.PASS, met, Status.ERROR)]
    human = {"long": False, "gated": True, "agree": True, "error": False, "unlabelled-by-rubric": True}
    found = {b.criterion: b for b in blame(rubric, results, human, sorted(human))}
    assert set(found) == {"short", "gate"}  # a penalty is never blamed
    assert (found["short"].required, found["short"].explains, found["short"].sides, found["short"].n) == (
        False, ("long",), 3, 3)
    assert (found["gate"].required, found["gate"].explains, found["gate"].sides, found["gate"].n) == (
        True, ("gated",), 1, 4)
    assert blame(rubric, results, human, ["agree"]) == []


async def test_a_rewording_that_changes_the_property_or_gives_an_unrelated_reason_is_dropped(env, tmp_path):
    from rubric_studio.core.loading import parse_rubric
    from rubric_studio.engine.improve._run import _same_meaning

    rubric = parse_rubric("name: r\ncriteria:\n  - {id: helps, outcome: Helps the customer}\n"
                          "  - {id: rude, outcome: Insults the customer, weight: -1}\n", "r.yaml")
    proposals = [
        ("The refund is confirmed.", "the rude criterion should look at the refund"),  # the judge: another property
        ("Does not insult the customer", "insults must be named plainly"),  # the polarity flips
        ("Insults or belittles the customer", "scripted"),  # the reason speaks of nothing here
        ("Insults, mocks or belittles the customer", "belittling is an insult the judge missed"),  # kept
    ]
    dropped: list[tuple[str, str]] = []
    with FakeLLM(brain=assistant_brain([], [])) as server:
        assistant = make_assistant(rubric, model="openai:reworder", base_url=server.base_url_openai,
                                   cache_path=tmp_path / "c.sqlite")
        try:
            kept = await _same_meaning(rubric.criterion("rude"), proposals, dropped, assistant)
            again = await _same_meaning(rubric.criterion("rude"), proposals, [], assistant)
        finally:
            await assistant.aclose()
        asked = [r for r in server.requests if "same property" in json.dumps(r.body)]
    assert kept == again == [proposals[3]]
    reasons = dict(dropped)
    assert "does not test the same property as 'Insults the customer'" in reasons["The refund is confirmed."]
    assert "negates the current outcome" in reasons["Does not insult the customer"]
    assert "does not speak about the criterion" in reasons["Insults or belittles the customer"]
    assert len(asked) == 2  # one judge call per rewording that passed the lexical checks; the second pass is cached
