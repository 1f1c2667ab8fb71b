"""Probes are visible in the inspector: after "Probe criterion for bias…" ran, a flipped sample's cell
shows the probe's verdict and the padded text the judge saw, with the added text marked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rubric_studio.engine.probes import perturb_text
from rubric_studio.tui.app import StudioApp
from rubric_studio.tui.probe_screen import ProbeScreen
from rubric_studio.tui.results import ADDED_STYLE, ResultsMatrix, probe_text
from tests.engine.test_probes import brain, write_project
from tests.fakellm import FakeLLM
from tests.tui.studio_helpers import drawn, graded, on_screen, open_in_inspector, until

pytestmark = pytest.mark.timeout(60)
OUTPUT = "ticket 00: we looked into your bill for you"


async def _inspect(app: StudioApp, pilot, sample_id: str, criterion_id: str, *expected: str) -> str:
    """What the inspector draws for the cell, once it draws every one of ``expected`` (the head names
    the cell at once; the body shows what came since, such as a probe's findings, when drawn)."""
    inspector = await open_in_inspector(app, pilot, sample_id, criterion_id)
    await pilot.pause()
    return await drawn(inspector.query_one("#insp-body"), *expected, what=f"the inspector on {sample_id} × {criterion_id}")


async def test_a_flipped_cell_shows_the_probe_and_the_padded_text(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path)
    with FakeLLM(brain=brain) as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        app = StudioApp(project / "r.yaml", project / "s.jsonl", judge="openai:judge-length", watch=False, env=env,
                        cache_path=project / "cache.sqlite")  # fmt: skip
        async with app.run_test(size=(160, 60)) as pilot:
            await until(lambda: graded(app), timeout=15)
            assert "Probe:" not in await _inspect(app, pilot, "s00", "bill")  # nothing probed yet
            app.query_one(ResultsMatrix).select_criterion("bill")
            next(c for c in app.get_system_commands(app.screen) if c.title == "Probe criterion for bias…").callback()
            await on_screen(app, ProbeScreen)
            screen = app.screen
            await until(lambda: screen.report is not None, timeout=30)
            await pilot.press("escape")
            await until(lambda: not isinstance(app.screen, ProbeScreen))

            body = await _inspect(app, pilot, "s00", "bill", "Probe: verbosity — unmet → met")
            assert "Probe: verbosity — unmet → met" in body
            assert "beyond this judge's noise (noise 0%): +100 points" in " ".join(body.split())
            if os.environ.get("PROBE_SCREENSHOT_DIR"):  # to look at it: rsvg-convert the copy
                app.save_screenshot(str(Path(os.environ["PROBE_SCREENSHOT_DIR"]) / "probe-inspector.svg"))
            assert "irrelevant polite text added before and after the output" in body
            padded = perturb_text("verbosity", OUTPUT, 0, "s00")
            added = padded.replace(OUTPUT, "\x00").split("\x00")
            assert OUTPUT in body and added[0].split()[0] in body  # the padding the judge saw, around the output
            assert "Probe: hedging" not in body  # hedging flipped nothing
            assert "Probe:" not in await _inspect(app, pilot, "s00", "refund")  # another criterion: not probed

            findings = app.probe_findings.of(app.session.samples_by_id["s00"], "bill")
            text = probe_text(findings)
            marked = "".join(text.plain[s.start:s.end] for s in text.spans if str(s.style) == ADDED_STYLE)
            assert marked == added[0] + added[1] and OUTPUT not in marked


async def test_an_unstable_cell_is_one_section_and_noise_level_kinds_say_so(tmp_path: Path, monkeypatch):
    """s03 flips under every kind (judge-one of tests/engine/test_probe_noise.py): one *unstable* section,
    not four; a kind flip that is not beyond the noise says so in the inspector's words."""
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.engine.probes import run_probes
    from rubric_studio.tui.results import ProbeFindings
    from rubric_studio.tui.results._probe_view import ProbeFinding
    from tests.engine.test_probe_noise import OUTCOMES, SECRET, _output
    from tests.engine.test_probe_noise import brain as noise_brain

    (tmp_path / "r.yaml").write_text("name: n\njudge:\n  max_retries: 0\ncriteria:\n"
                                     + "".join(f"  - id: {c}\n    outcome: {o}\n" for c, o in OUTCOMES.items()))  # fmt: skip
    samples = [Sample(f"s{i:02d}", _output(i)) for i in range(10)]
    with FakeLLM(brain=noise_brain) as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai, "RUBRIC_STUDIO_SECRET": SECRET}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        report = await run_probes(load_rubric(tmp_path / "r.yaml"), samples, ["verbosity", "hedging", "paraphrase"],
                                  {"judge": "openai:judge-one", "env": env}, criterion="refund")  # fmt: skip
    findings = ProbeFindings()
    assert findings.take("refund", report, {s.id: s for s in samples}) == 1
    kept = findings.of(samples[3], "refund")
    assert [f.kind for f in kept] == ["unstable"] and kept[0].verdict == "verbosity, hedging, paraphrase"
    text = probe_text(kept).plain
    assert text.count("Probe:") == 1 and "Probe: unstable — the verdict flipped under every kind probed" in text
    assert "listed once, not as a finding of any kind" in text
    noisy = probe_text([ProbeFinding("hedging", "unmet", "met", "x", "x",
                                     "not distinguishable from this judge's own noise (noise 31%)")]).plain  # fmt: skip
    assert "not distinguishable from this judge's own noise (noise 31%): not a finding" in noisy


async def test_a_content_free_answer_judged_met_shows_the_answer_given(tmp_path: Path, monkeypatch):
    """Leniency: the inspector shows the content-free answer the judge met in place of the output —
    "(an empty answer)" for the empty one — not "the criteria in the order judged"."""
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.samples import Sample
    from rubric_studio.engine.probes import content_free, run_probes
    from rubric_studio.tui.results import ProbeFindings
    from tests.engine.test_probe_decisions import SECRET, output, question
    from tests.engine.test_probe_decisions import brain as decision_brain
    from tests.engine.test_probe_decisions import write_project as decision_project

    project = decision_project(tmp_path, samples=12, subjects=("refund", "bill"), inputs=question)
    samples = [Sample(f"s{i:02d}", output(i), input=question(i)) for i in range(12)]
    answers = {s.id: content_free(s, 0) for s in samples}
    with FakeLLM(brain=decision_brain) as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url_openai, "RUBRIC_STUDIO_SECRET": SECRET}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        report = await run_probes(load_rubric(project / "r.yaml"), samples, ["leniency"],
                                  {"judge": "openai:judge-agreeable", "env": env}, criterion="refund")  # fmt: skip
    findings = ProbeFindings()
    assert findings.take("refund", report, {s.id: s for s in samples}) == 12  # every content-free answer met
    empty = next(s for s in samples if answers[s.id] == "")
    worded = next(s for s in samples if answers[s.id] == "Yes.")
    for sample, shown_as in ((empty, "(an empty answer)"), (worded, "Yes.")):
        text = probe_text(findings.of(sample, "refund")).plain
        assert "Probe: leniency — a content-free answer judged met" in text
        assert f"the answer the judge saw, in place of the output: {shown_as}\n" in text
        assert "the criteria in the order judged" not in text and sample.output not in text
        assert text.count("Probe:") == 1


def test_cant_tell_and_suggestive_readings_are_not_called_no_finding():
    from rubric_studio.tui.results._probe_view import ProbeFinding

    readings = {
        "can't tell with 9 cells (noise 0%): a shift below 55 points would not show": False,
        "suggestive: probe more samples (noise 0%): +16 points, 95% CI -2 to +35": False,
        "not distinguishable from this judge's own noise (noise 31%): +2 points, 95% CI -8 to +12": True,
    }
    for verdict, no_finding in readings.items():
        text = probe_text([ProbeFinding("verbosity", "unmet", "met", "x", "x", verdict)]).plain
        assert verdict in text and ("not a finding" in text) is no_finding, verdict
