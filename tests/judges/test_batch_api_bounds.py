"""grade --batch-api against a Batch API that never answers one phase: every phase is bounded
by --timeout per request and the whole run by --deadline, and the message names the phase.

The fake (real HTTP, real SDKs) hangs the scripted phase until it closes; what is asserted is
an upper bound (a few times the bound given), not a speed.
"""

from __future__ import annotations

import time

import pytest

from tests._timing import scaled
from tests.fakebatch import FakeBatches
from tests.judges.test_batch_api import cells, grade, project  # noqa: F401  (fixture)

pytestmark = [pytest.mark.timeout(120), pytest.mark.long]

PHASES = {"upload": "uploading the batch file", "create": "creating the batch", "poll": "reading the batch status",
          "download": "downloading the results"}  # fmt: skip


def phases_of(provider: str) -> list[str]:
    return [p for p in PHASES if provider == "openai" or p != "upload"]  # Anthropic has no file upload


def timed_grade(project_dir, fake, provider, *flags):
    started = time.monotonic()
    code, report = grade(project_dir, fake.base_url(provider), "--batch-api", *flags)
    return code, report, time.monotonic() - started


@pytest.mark.parametrize("phase", list(PHASES))
def test_a_phase_that_never_answers_ends_within_the_timeout(project, provider, phase, capsys):  # noqa: F811
    if phase not in phases_of(provider):
        pytest.skip("Anthropic sends the requests in the create call")
    with FakeBatches(polls=0) as fake:
        fake.hang = {phase}
        code, report, took = timed_grade(project, fake, provider, "--timeout", "1")
    # one request's bound (each step 1 s, the whole at most 3 s) on this machine's time scale, far from 600 s
    assert took < min(scaled(3 * (2 * 1 + 1)), 300)
    assert code == 3
    errors = [c["error"] for c in cells(report)]
    assert errors and all(PHASES[phase] in error for error in errors + [capsys.readouterr().err] if error)
    assert any("1 s" in error for error in errors)


@pytest.mark.parametrize("phase", list(PHASES))
def test_the_deadline_bounds_every_phase(project, provider, phase):  # noqa: F811
    if phase not in phases_of(provider):
        pytest.skip("Anthropic sends the requests in the create call")
    with FakeBatches(polls=0) as fake:
        fake.hang = {phase}
        code, report, took = timed_grade(project, fake, provider, "--deadline", "2")  # --timeout stays 60 s
    assert took < min(scaled(3 * 2), 45)  # the deadline on this machine's time scale, not --timeout's 60 s
    assert code == 3
    errors = [c["error"] for c in cells(report)]
    assert all("deadline" in error for error in errors)
    assert any(PHASES[phase] in error for error in errors) or phase == "poll"
