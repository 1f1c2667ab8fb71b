"""grade --batch-api and jobs status|wait|cancel against a fake of both Batch APIs (real SDKs, real HTTP)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rubric_studio.cli import main
from rubric_studio.engine.batch import JobStore
from rubric_studio.judges import batch_api
from rubric_studio.judges.batch_api import split, too_large
from tests._timing import scaled
from tests.fakebatch import FakeBatches

pytestmark = pytest.mark.timeout(120)  # scaled for the machine by tests/conftest.py
ROOT = Path(__file__).resolve().parents[2]
RUBRIC = """\
name: b
judge: {{model: '{model}', max_retries: {retries}, max_retry_wait: 0.01}}
criteria:
  - {{id: hello, outcome: Says hello}}
  - {{id: thanks, outcome: Says thanks}}
"""


def write_samples(path: Path, count: int) -> Path:
    lines = [json.dumps({"id": f"s{i}", "output": f"hello {i}" + (" thanks" if i % 2 else "")}) for i in range(count)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch, provider):
    model = "openai:gpt-4o-mini" if provider == "openai" else "anthropic:claude-haiku-4-5"
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("RUBRIC_STUDIO_BATCH_POLL", "0.01")
    (tmp_path / "r.yaml").write_text(RUBRIC.format(model=model, retries=3))
    write_samples(tmp_path / "r.samples.jsonl", 6)
    return tmp_path


def grade(project: Path, base_url: str, *extra: str, cache: str = "c.sqlite", samples: str | None = None
          ) -> tuple[int, dict | None]:
    out = project / "report.json"
    out.unlink(missing_ok=True)
    given = [str(project / samples)] if samples else []
    code = main(["grade", str(project / "r.yaml"), *given, "--base-url", base_url, "--cache-path",
                 str(project / cache), "--format", "json", "-o", str(out), *extra])  # fmt: skip
    return code, json.loads(out.read_text()) if out.exists() else None


def cells(report: dict) -> list[dict]:
    return [cell for sample in report["samples"] for cell in sample["criteria"]]


def job_id_from(text: str) -> str:
    return text.split("jobs wait ")[1].split()[0]


def jobs(project: Path, *args: str) -> int:
    return main(["jobs", *args, "--cache-path", str(project / "c.sqlite")])


def only_job(project: Path):
    found, problems = JobStore(project / "c.sqlite").scan()
    assert not problems and len(found) == 1
    return found[0]


# -- the happy path ------------------------------------------------------------------------


def test_only_uncached_cells_are_submitted_and_nothing_is_paid_twice(project, provider):
    write_samples(project / "first.jsonl", 2)
    with FakeBatches(polls=2) as fake:
        url = fake.base_url(provider)
        assert grade(project, url, samples="first.jsonl")[0] == 1 and fake.live_calls == 4  # s0, s1 live
        code, report = grade(project, url, "--batch-api")
        assert code == 1 and fake.created() == 1 and fake.lines_submitted == 8  # s2..s5 only
        verdicts = {s["id"]: [c["status"] for c in s["criteria"]] for s in report["samples"]}
        assert verdicts["s3"] == ["met", "met"] and verdicts["s2"] == ["met", "unmet"]
        assert report["usage"]["judge_calls"] == 8 and report["usage"]["requests"] == 8
        assert report["usage"]["cache_hits"] == 4 and report["usage"]["input_tokens"] > 0
        assert report["batch_jobs"] == [only_job(project).id] and only_job(project).state == "collected"
        before = fake.batch_requests()
        code, again = grade(project, url, "--batch-api")
        assert fake.batch_requests() == before and again["usage"]["cache_hits"] == 12 and "batch_jobs" not in again
        code, live = grade(project, url)
        assert fake.live_calls == 4 and live["usage"]["cache_hits"] == 12


def test_a_fully_cached_batch_run_imports_no_sdk(project, provider):
    with FakeBatches() as fake:
        url = fake.base_url(provider)
        grade(project, url, "--batch-api")
        argv = ["grade", str(project / "r.yaml"), "--base-url", url, "--cache-path", str(project / "c.sqlite"),
                "--batch-api", "--format", "json"]  # fmt: skip
        code = f"import sys; from rubric_studio.cli import main; main({argv!r}); print(sorted(set(sys.modules) & {{'openai', 'anthropic'}}))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(90),
                              env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def test_batch_cost_is_half_the_live_price(project, provider):
    with FakeBatches() as fake:
        _, batch = grade(project, fake.base_url(provider), "--batch-api", cache="batch.sqlite")
        _, direct = grade(project, fake.base_url(provider), cache="live.sqlite")
        assert fake.live_calls == 12
    assert batch["usage"]["input_tokens"] == direct["usage"]["input_tokens"] > 0
    assert batch["usage"]["cost_usd"] == pytest.approx(direct["usage"]["cost_usd"] / 2, abs=2e-6)  # JSON rounds to 1e-6


def test_batch_mode_sends_one_line_per_sample_and_caches_each_criterion(project, provider):
    with FakeBatches() as fake:
        code, report = grade(project, fake.base_url(provider), "--batch-api", "--batch")
        assert code == 1 and fake.lines_submitted == 6  # one request per sample, both criteria in it
        assert all(c["status"] in ("met", "unmet") for c in cells(report))
        code, live = grade(project, fake.base_url(provider))  # per-criterion run: every verdict cached
        assert fake.live_calls == 0 and live["usage"]["cache_hits"] == 12


def test_repeats_are_submitted_and_collected_by_jobs_wait(project, provider, capsys):
    with FakeBatches() as fake:
        assert grade(project, fake.base_url(provider), "--batch-api", "--no-wait", "--repeat", "3")[0] == 0
        assert fake.lines_submitted == 36
        job_id = job_id_from(capsys.readouterr().out)
        assert jobs(project, "wait", job_id, "--format", "json") == 1
        report = json.loads(capsys.readouterr().out)
    assert report["repeat"] == 3 and report["usage"]["judge_calls"] == 36 and fake.created() == 1


def test_jsonl_prints_the_streaming_shape(project, provider, capsys):
    with FakeBatches() as fake:
        code = main(["grade", str(project / "r.yaml"), "--base-url", fake.base_url(provider), "--cache-path",
                     str(project / "c.sqlite"), "--format", "jsonl", "--batch-api"])  # fmt: skip
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and [line["id"] for line in lines[:-1]] == [f"s{i}" for i in range(6)]
    assert lines[-1]["usage"]["judge_calls"] == 12 and lines[-1]["batch_jobs"] == [only_job(project).id]


# -- splitting -----------------------------------------------------------------------------


def test_split_respects_request_and_byte_limits():
    sizes = [(f"r{i}", 300) for i in range(10)]
    assert [len(c) for c in split(sizes, (4, 10**9))] == [4, 4, 2]
    assert [len(c) for c in split(sizes, (100, 700))] == [2, 2, 2, 2, 2]
    assert [len(c) for c in split(sizes, batch_api.LIMITS["openai"])] == [10]
    assert too_large(batch_api.OPENAI_MAX_BYTES, batch_api.LIMITS["openai"])  # the envelope needs room too
    assert not too_large(300, (100, 700)) and too_large(701, (100, 700))


def test_a_large_run_is_split_into_several_batches(project, provider, monkeypatch):
    monkeypatch.setitem(batch_api.LIMITS, provider, (5, 10**9))
    with FakeBatches() as fake:
        code, report = grade(project, fake.base_url(provider), "--batch-api")
        sizes = [len(batch["lines"]) for batch in fake.batches.values()]
    assert code == 1 and sizes == [5, 5, 2] and report["usage"]["judge_calls"] == 12
    assert [len(b.custom_ids) for b in only_job(project).batches] == [5, 5, 2]


# -- lines that fail -----------------------------------------------------------------------


def test_failed_and_malformed_lines_are_error_cells_and_the_rest_is_cached(project, provider):
    with FakeBatches(failing={0}, malformed={1}) as fake:
        url = fake.base_url(provider)
        code, report = grade(project, url, "--batch-api")
        errors = [c["error"] for c in cells(report) if c["status"] == "error"]
        assert code == 3 and len(errors) == 2 and fake.live_calls == 0  # nothing re-asked live
        assert any(e.startswith("400") and "max_tokens too large" in e for e in errors)
        assert any(e.startswith("malformed:") for e in errors)
        assert {s["verdict"] for s in report["samples"][:1]} == {"error"}  # never a fail
        fake.failing, fake.malformed = set(), set()
        code, again = grade(project, url, "--batch-api")  # only the two errored cells go again
    assert code == 1 and fake.lines_submitted == 14 and again["usage"]["cache_hits"] == 10


def test_an_expired_batch_ends_the_unanswered_cells_in_error(project, provider):
    with FakeBatches(expire=True) as fake:
        code, report = grade(project, fake.base_url(provider), "--batch-api")
    errors = [c["error"] for c in cells(report) if c["status"] == "error"]
    assert code == 3 and len(errors) == 6 and all("batch request expired" in e for e in errors)
    assert report["summary"]["failed"] + report["summary"]["passed"] + report["summary"]["errors"] == 6
    assert only_job(project).state == "collected"


def test_cancel_then_collect_what_finished(project, provider, capsys):
    with FakeBatches(polls=50) as fake:
        url = fake.base_url(provider)
        grade(project, url, "--batch-api", "--no-wait")
        job_id = job_id_from(capsys.readouterr().out)
        fake.answered_before_cancel = 4
        assert jobs(project, "cancel", job_id) == 0 and "cancelled batch job" in capsys.readouterr().out
        assert only_job(project).state == "cancelled"
        assert jobs(project, "wait", job_id, "--format", "json") == 3
        report = json.loads(capsys.readouterr().out)
        statuses = [c["status"] for c in cells(report)]
        assert statuses.count("error") == 8 and all("canceled" in c["error"] for c in cells(report) if c["error"])
        assert only_job(project).state == "collected"
        assert jobs(project, "cancel", job_id) == 2  # nothing left to cancel
        code, again = grade(project, url, "--batch-api")  # the cancelled cells go in a new job
    assert code == 1 and fake.lines_submitted == 12 + 8 and again["usage"]["cache_hits"] == 4


# -- resuming ------------------------------------------------------------------------------


def test_jobs_wait_in_a_new_process_collects_a_job_submitted_with_no_wait(project, provider, capsys):
    with FakeBatches(polls=3) as fake:
        url = fake.base_url(provider)
        code, report = grade(project, url, "--batch-api", "--no-wait")
        out = capsys.readouterr().out
        assert code == 0 and report is None and f"--cache-path {project / 'c.sqlite'}" in out
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "rubric_studio", *out.split("collect it with: ")[1].split()[1:],
                               "--format", "json"], capture_output=True, text=True, timeout=scaled(90), env=env, cwd="/")
        assert done.returncode == 1, done.stderr
        report = json.loads(done.stdout)
        assert report["summary"]["samples"] == 6 and report["usage"]["judge_calls"] == 12
        before = fake.batch_requests()
        code, again = grade(project, url, "--batch-api")
        assert jobs(project, "wait", report["batch_jobs"][0]) == 1  # collected: reported from the cache
    assert fake.created() == 1 and fake.batch_requests() == before and again["usage"]["cache_hits"] == 12


def polled(fake: FakeBatches, limit: float) -> bool:
    """Whether the job's status was asked for within ``limit`` seconds (the CLI is waiting)."""
    deadline = time.monotonic() + limit
    while not any(method == "GET" and "batches/" in path for method, path in list(fake.log)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _interruptible() -> None:
    """In the child, before it runs: SIGINT raises KeyboardInterrupt, whatever this process inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_waiting_keeps_the_job_and_says_how_to_collect_it(project, provider):
    with FakeBatches(polls=10**6) as fake:
        command = [sys.executable, "-m", "rubric_studio", "grade", str(project / "r.yaml"), "--base-url",
                   fake.base_url(provider), "--cache-path", str(project / "c.sqlite"), "--batch-api"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RUBRIC_STUDIO_BATCH_POLL": "0.2"}
        # Its own session: the Ctrl-C below reaches the CLI and nothing else (not this pytest worker).
        # And Ctrl-C's default meaning, as in a terminal: a test run started in the background (a
        # script's `cmd &`) has SIGINT ignored, and a child would inherit that and never stop.
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                   start_new_session=True, preexec_fn=_interruptible)  # fmt: skip
        err_lines: list[str] = []
        submitted = threading.Event()

        def read_stderr() -> None:
            for line in process.stderr:
                err_lines.append(line)
                if line.startswith("submitted batch job"):
                    submitted.set()

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            assert submitted.wait(scaled(60)), f"no 'submitted batch job' line: {''.join(err_lines)!r}"
            assert polled(fake, scaled(60)), "the CLI never asked for the job's status"
            os.killpg(process.pid, signal.SIGINT)  # the user's Ctrl-C, while the CLI waits for the job
            process.wait(timeout=scaled(30))
            reader.join(timeout=scaled(10))
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            process.stdout.close()
    err = "".join(err_lines)
    job = only_job(project)
    assert process.returncode == 130, err
    assert f"batch job {job.id} keeps running: rubric-studio jobs wait {job.id}" in err
    assert "Traceback" not in err and job.state == "submitted" and len(job.batches) == 1


def test_jobs_wait_after_a_rubric_edit_says_which_cells_the_job_cannot_answer(project, provider, capsys):
    with FakeBatches() as fake:
        grade(project, fake.base_url(provider), "--batch-api", "--no-wait")
        job_id = job_id_from(capsys.readouterr().out)
        rubric = project / "r.yaml"
        rubric.write_text(rubric.read_text().replace("Says thanks", "Says thank you"))
        assert jobs(project, "wait", job_id, "--format", "json") == 3
        captured = capsys.readouterr()
    report = json.loads(captured.out)
    edited = [c for c in cells(report) if c["id"] == "thanks"]
    assert all(c["status"] == "error" and "no batch job carries this request" in c["error"] for c in edited)
    assert all(c["status"] in ("met", "unmet") for c in cells(report) if c["id"] == "hello")
    assert "changed since batch job" in captured.err and "6 replies answer requests" in captured.err
    assert fake.created() == 1 and only_job(project).state == "collected"


def test_grade_again_resumes_the_pending_job_and_submits_only_new_cells(project, provider, capsys):
    write_samples(project / "r.samples.jsonl", 4)
    with FakeBatches(polls=2) as fake:
        url = fake.base_url(provider)
        assert grade(project, url, "--batch-api", "--no-wait")[0] == 0 and fake.lines_submitted == 8
        write_samples(project / "r.samples.jsonl", 6)  # two samples added while the job runs
        code, report = grade(project, url, "--batch-api")
        assert "resuming batch job" in capsys.readouterr().err
    assert code == 1 and fake.created() == 2 and fake.lines_submitted == 12
    assert report["usage"]["judge_calls"] == 12 and len(report["batch_jobs"]) == 2


def test_a_batch_the_provider_refused_is_reported_and_submitted_on_the_next_run(project, provider, monkeypatch):
    monkeypatch.setitem(batch_api.LIMITS, provider, (5, 10**9))
    with FakeBatches() as fake:
        url = fake.base_url(provider)
        fake.fail_create_after = 1
        code, report = grade(project, url, "--batch-api")
        errors = [c["error"] for c in cells(report) if c["status"] == "error"]
        assert code == 3 and len(errors) == 7 and all(e.startswith("not submitted: creating the batch: 500") for e in errors)
        creates = sum(1 for method, path in fake.log if method == "POST" and path.endswith("batches"))
        assert creates == 2  # one accepted, one refused and not retried (a retry could bill a batch twice)
        assert [len(b.custom_ids) for b in only_job(project).batches] == [5]
        fake.fail_create_after = None
        code, report = grade(project, url, "--batch-api")
    assert code == 1 and fake.lines_submitted == 12 and report["usage"]["judge_calls"] == 7


def test_nothing_is_submitted_where_the_job_could_not_be_recorded(project, provider):
    (project / "batch-jobs").write_text("not a folder")
    with FakeBatches() as fake:
        code, report = grade(project, fake.base_url(provider), "--batch-api")
    errors = [c["error"] for c in cells(report)]
    assert code == 3 and fake.batch_requests() == 0 and all(e.startswith("not submitted: cannot create") for e in errors)


def test_status_polls_that_fail_for_a_while_do_not_end_the_wait(project, provider):
    (project / "r.yaml").write_text(RUBRIC.format(model=f"{provider}:m", retries=0))
    with FakeBatches(polls=1) as fake:
        fake.status_errors = 3
        code, report = grade(project, fake.base_url(provider), "--batch-api")
    assert code == 1 and report["usage"]["judge_calls"] == 12


def test_a_deadline_stops_waiting_and_keeps_the_job(project, provider, capsys):
    __import__(provider)  # the deadline covers submitting too: the SDK's import is not what it should cut
    with FakeBatches(polls=10**6) as fake:
        code, report = grade(project, fake.base_url(provider), "--batch-api", "--deadline", str(scaled(0.3)))
    errors = [c["error"] for c in cells(report)]
    assert code == 3 and all("deadline" in e and "jobs wait" in e for e in errors)
    assert only_job(project).state == "submitted"


def test_jobs_wait_works_from_any_folder(project, provider, monkeypatch, capsys):
    monkeypatch.chdir(project)
    with FakeBatches() as fake:
        main(["grade", "r.yaml", "--base-url", fake.base_url(provider), "--cache-path", "c.sqlite", "--batch-api",
              "--no-wait"])  # fmt: skip
        job_id = job_id_from(capsys.readouterr().out)
        monkeypatch.chdir("/")
        assert jobs(project, "wait", job_id, "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["usage"]["judge_calls"] == 12


def test_jobs_wait_reports_the_pass_rate_corrected_by_the_labels_as_grade_does(project, provider, capsys):
    """Twelve samples, ten labelled beside the rubric (one inline): the report ``jobs wait`` prints
    carries ``summary.pass_rate`` and it is the one ``grade`` gives over the same replies."""
    rows = [json.loads(line) for line in write_samples(project / "r.samples.jsonl", 12).read_text().splitlines()]
    rows[9]["label"] = {"verdict": "pass", "criteria": {"hello": "met"}}
    (project / "r.samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (project / "r.labels.yaml").write_text("".join(
        f"s{i}: {{verdict: {'pass' if i % 2 else 'fail'}, criteria: {{hello: met}}}}\n" for i in range(9)))
    with FakeBatches() as fake:
        url = fake.base_url(provider)
        assert grade(project, url, "--batch-api", "--no-wait")[0] == 0
        job_id = job_id_from(capsys.readouterr().out)
        jobs(project, "wait", job_id, "--format", "json")
        waited = json.loads(capsys.readouterr().out)["summary"]
        _, graded = grade(project, url)  # every reply from the cache
    rate = waited["pass_rate"]
    assert rate["corrected"]["n_labelled"] == 10 and rate["corrected"]["n_unlabelled"] == 2
    assert rate["criteria"]["hello"]["corrected"]["n_labelled"] == 10
    assert graded is not None and rate == graded["summary"]["pass_rate"]


# -- jobs status and bad input -------------------------------------------------------------


def test_jobs_status_lists_jobs_with_the_provider_state(project, provider, capsys):
    with FakeBatches(polls=50) as fake:
        grade(project, fake.base_url(provider), "--batch-api", "--no-wait")
        job_id = job_id_from(capsys.readouterr().out)
        assert jobs(project, "status") == 0
        out = capsys.readouterr().out
        assert job_id in out and "submitted" in out and "12 processing" in out
    assert jobs(project, "status", job_id) == 3  # the server is gone: said, not a traceback
    assert "status unavailable" in capsys.readouterr().out


def test_a_job_file_someone_else_made_never_sends_the_key_to_its_endpoint(project, provider, capsys):
    with FakeBatches() as fake:
        grade(project, fake.base_url(provider), "--batch-api", "--no-wait")
        job = only_job(project)
        path = project / "batch-jobs" / f"{job.id}.json"
        path.write_text(path.read_text().replace(job.endpoint_seal, "0" * 32))  # a file this user did not write
        before = fake.batch_requests()
        assert jobs(project, "wait", job.id) == 2 and "not made by you" in capsys.readouterr().err
        assert jobs(project, "status", job.id) == 3 and "not made by you" in capsys.readouterr().out
        assert fake.batch_requests() == before  # nothing went to its endpoint
        assert jobs(project, "wait", job.id, "--base-url", fake.base_url(provider), "--format", "json") == 1
    assert json.loads(capsys.readouterr().out)["usage"]["judge_calls"] == 12


@pytest.mark.parametrize("provider", ["openai"])
def test_unknown_jobs_and_bad_job_files_exit_2_with_the_reason(project, capsys):
    folder = project / "batch-jobs"
    folder.mkdir()
    assert jobs(project, "wait", "job-nope") == 2 and "no batch job 'job-nope'" in capsys.readouterr().err
    assert jobs(project, "wait", "../../etc/passwd") == 2
    (folder / "job-20261122-abcdef.json").write_text('{"id": "job-20261122-abcdef",\n "state": }')
    assert jobs(project, "wait", "job-20261122-abcdef") == 2
    assert "job-20261122-abcdef.json:2:" in capsys.readouterr().err
    good = {"id": "job-20261122-abcdef", "state": "submitted", "judge": {"provider": "openai", "model": "m"},
            "cache_path": "c", "rubric_path": "r", "rubric_hash": "h", "samples_path": "s", "extract": "x",
            "repeat": 1, "created": 0, "requests": [], "batches": []}  # fmt: skip
    (folder / "job-20261122-abcdef.json").write_text(json.dumps(good))
    assert jobs(project, "cancel", "job-20261122-abcdef") == 2
    assert "field 'requests'" in capsys.readouterr().err
    assert jobs(project, "status") == 2 and "job-20261122-abcdef.json" in capsys.readouterr().err
    good.update(requests={}, judge={"provider": "openai", "model": "m", "timeout": "soon"})
    (folder / "job-20261122-abcdef.json").write_text(json.dumps(good))
    assert jobs(project, "wait", "job-20261122-abcdef") == 2 and "'judge.timeout'" in capsys.readouterr().err
    assert jobs(project, "wait") == 2  # no usable pending job


@pytest.mark.parametrize("provider", ["openai"])
@pytest.mark.parametrize("kind", ["deep JSON", "/dev/zero", "named pipe"])
def test_a_hostile_job_file_is_named_with_the_reason_not_a_traceback_or_a_hang(project, capsys, kind):
    folder = project / "batch-jobs"
    folder.mkdir()
    job_file = folder / "job-20261122-abcdef.json"
    if kind == "deep JSON":
        job_file.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "/dev/zero":
        if not Path("/dev/zero").exists():
            pytest.skip("needs /dev/zero")
        job_file.symlink_to("/dev/zero")
    else:
        if not hasattr(os, "mkfifo"):
            pytest.skip("needs named pipes")
        os.mkfifo(job_file)
    expected = {"deep JSON": ":1:1: JSON nested deeper than 100 levels", "/dev/zero": "got a device",
                "named pipe": "got a named pipe (FIFO)"}[kind]  # fmt: skip
    assert jobs(project, "status") == 2
    err = capsys.readouterr().err
    assert f"{job_file}" in err and expected in err and "Traceback" not in err
    assert jobs(project, "wait", "job-20261122-abcdef") == 2 and expected in capsys.readouterr().err


@pytest.mark.parametrize("provider", ["openai"])
def test_a_provider_without_a_batch_api_is_refused(project, capsys):
    code = main(["grade", str(project / "r.yaml"), "--judge", "ollama:llama3.1", "--cache-path",
                 str(project / "c.sqlite"), "--batch-api"])  # fmt: skip
    assert code == 2 and "no Batch API" in capsys.readouterr().err


# -- where a Batch API verdict came from ---------------------------------------------------


def test_batch_api_verdicts_say_which_job_gave_them_live_and_from_the_cache(project, provider):
    from rubric_studio.core.results import CriterionResult
    from rubric_studio.tui.results import source_words

    with FakeBatches() as fake:
        url = fake.base_url(provider)
        code, report = grade(project, url, "--batch-api")
        job = only_job(project).id
        assert {json.dumps(c["provenance"]) for c in cells(report)} == {json.dumps({"mode": "batch-api", "job": job})}
        code, again = grade(project, url)  # a per-criterion live run: every verdict from the cache
        assert fake.live_calls == 0
    cached = cells(again)[0]
    assert cached["source"] == "cache" and cached["provenance"] == {"mode": "batch-api", "job": job}
    cell = CriterionResult(id="hello", status="met", source="cache", provenance=cached["provenance"])
    assert source_words(cell) == f"cache, from Batch API job {job}"


def test_a_batch_api_request_of_several_criteria_says_which(project, provider):
    from rubric_studio.core.results import CriterionResult
    from rubric_studio.tui.results import source_words

    with FakeBatches() as fake:
        url = fake.base_url(provider)
        code, report = grade(project, url, "--batch-api", "--batch")
        job = only_job(project).id
        want = {"mode": "batch-api", "job": job, "criteria": 2, "ids": ["hello", "thanks"]}
        assert all(c["provenance"] == want for c in cells(report))
        code, again = grade(project, url, "--batch")
        assert fake.live_calls == 0 and all(c["provenance"] == want for c in cells(again))
        code, alone = grade(project, url, "--no-reuse-batch")  # judged together: asked again, one call each
        assert fake.live_calls == 12 and {c["provenance"]["mode"] for c in cells(alone)} == {"single"}
    cell = CriterionResult(id="hello", status="met", source="cache", provenance=want)
    assert source_words(cell) == f"cache, from Batch API job {job} (a request of 2 criteria)"


@pytest.mark.parametrize("wait", [True, False], ids=["grade", "jobs-wait"])
def test_reuse_batch_false_reaches_the_collection_of_a_batch_api_run(project, provider, capsys, wait):
    """Cells a live batch call judged are asked again, one request each, through the Batch API; those
    replies (not the old batch verdicts) are what the run reports and caches, also when jobs wait
    collects them in another process."""
    with FakeBatches() as fake:
        url = fake.base_url(provider)
        assert grade(project, url, "--batch")[0] == 1 and fake.live_calls == 6  # one live batch call a sample
        rubric = project / "r.yaml"
        rubric.write_text(rubric.read_text().replace("max_retry_wait: 0.01", "max_retry_wait: 0.01, reuse_batch: false"))
        code, report = grade(project, url, "--batch-api", *([] if wait else ["--no-wait"]))
        assert fake.lines_submitted == 12  # every cell asked again, one request each
        if not wait:
            capsys.readouterr()
            assert main(["jobs", "wait", only_job(project).id, "--cache-path", str(project / "c.sqlite"),
                         "--format", "json"]) == 1  # fmt: skip
            report = json.loads(capsys.readouterr().out)
        assert {c["provenance"]["mode"] for c in cells(report)} == {"batch-api"}
        assert only_job(project).to_dict()["reuse_batch"] is False
        code, live = grade(project, url)  # the job's replies were cached: nothing is asked or submitted again
        assert fake.live_calls == 6 and live["usage"]["cache_hits"] == 12
