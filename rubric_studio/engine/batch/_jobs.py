"""Batch API jobs on disk: what was submitted, so a stopped process or machine loses nothing.

A job is a JSON file in ``batch-jobs/`` beside the judge cache (written atomically): the
judge it was sent with (provider, model, base URL and parameters — never the key), the
provider batch ids, for each request line the cache key it answers, its sample and its
criteria, the rubric (path and hash), the samples, and its state:

* ``submitted`` — batches created at the provider, replies not collected yet;
* ``cancelled`` — cancel requested; what finished before is still collected;
* ``collected`` — its replies went through a grading run into the cache.

A job lists only batches the provider accepted, so a request in a job was sent exactly
once; a request that never made it into a batch is in no job, and a later ``grade
--batch-api`` submits it. :meth:`JobStore.pending_for` finds the uncollected jobs that
carry some of a run's requests (matched on cache keys, which name the judge too): that is
how ``jobs wait`` and a re-run of ``grade --batch-api`` resume instead of submitting again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from rubric_studio.judges.base import JudgeConfig

STATES = ("submitted", "cancelled", "collected")
JOB_ID = re.compile(r"job-\d{8}-[0-9a-f]{6}")
FOLDER = "batch-jobs"
#: Largest job file read: a request line's reference takes about 200 bytes, so this holds
#: far more requests than a provider accepts in the batches of one run.
MAX_JOB_BYTES = 64 * 1024 * 1024


class JobFileError(ValueError):
    """A job id that names no job, or a job file that cannot be used (the message says which and why)."""


@dataclass
class RequestRef:
    """What one request line answers: a cache key, for a sample's criteria."""

    key: str
    sample: str
    criteria: list[str]


@dataclass
class SubmittedBatch:
    """One provider batch and the custom ids of the lines it carries."""

    id: str
    custom_ids: list[str]


@dataclass
class Job:
    """One submission of judge requests (one or more provider batches)."""

    id: str
    judge: dict[str, Any]  # JudgeConfig fields, without the key
    cache_path: str
    rubric_path: str
    rubric_hash: str
    samples_path: str
    extract: str = "last_assistant"
    repeat: int = 1
    state: str = "submitted"
    created: float = field(default_factory=time.time)
    requests: dict[str, RequestRef] = field(default_factory=dict)  # custom id -> what it answers
    batches: list[SubmittedBatch] = field(default_factory=list)
    #: HMAC of the judge's endpoint under the user's own secret: this user chose that endpoint.
    endpoint_seal: str = ""
    #: False: a verdict a request about several criteria gave is not served from the cache for the
    #: job's per-criterion requests (``judge.reuse_batch`` / ``--no-reuse-batch`` when submitted).
    reuse_batch: bool = True

    @property
    def config(self) -> JudgeConfig:
        """The judge the job was sent with (no key: add it with ``dataclasses.replace``)."""
        return JudgeConfig(**self.judge)

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def pending(self) -> bool:
        return self.state != "collected"

    def keys(self) -> set[str]:
        return {ref.key for ref in self.requests.values()}

    def to_dict(self) -> dict[str, Any]:
        return {"format": 1, **asdict(self)}


#: What a job never keeps of a judge: the key, and the provider settings read from the
#: environment with it (``jobs wait`` reads both again).
_FROM_ENVIRONMENT = ("api_key", "extra")


def judge_fields(config: JudgeConfig) -> dict[str, Any]:
    """What a job keeps of a judge: everything but the key (and what comes with it)."""
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name not in _FROM_ENVIRONMENT}


def endpoint_seal(job_id: str, config: JudgeConfig) -> str:
    """A seal over the job's endpoint, under the per-user secret (never shared, unlike the fence
    secret): a job file from anyone else cannot claim an endpoint this user chose."""
    from rubric_studio.judges.userdir import user_secret

    payload = json.dumps([job_id, config.provider, config.base_url]).encode()
    return hmac.new(user_secret(), payload, hashlib.sha256).hexdigest()[:32]


def endpoint_refusal(job: Job, chosen_url: str | None = None) -> str | None:
    """Why ``job``'s endpoint must not get the user's API key, or None.

    Job files are data beside the cache, and a team may share that folder: a job's base URL is
    used only when it is the provider's own, the user chose it (``chosen_url`` from
    ``--base-url``, the user config, the environment), or the job carries this user's seal."""
    from rubric_studio.core.providers import registered
    from rubric_studio.core.trust import normalize_url, user_choices

    url = job.config.base_url
    official = {normalize_url(p.official_url) for p in registered() if p.official_url}
    if url is None or normalize_url(url) in official | {u + "/v1" for u in official}:
        return None
    if hmac.compare_digest(job.endpoint_seal, endpoint_seal(job.id, job.config)):
        return None
    if user_choices(None, chosen_url).chose_url(url):
        return None
    return (f"batch job {job.id} was not made by you and names the endpoint {url}; your API key would be sent "
            f"there: pass --base-url {url} if you trust it")  # fmt: skip


def new_job_id() -> str:
    return f"job-{time.strftime('%Y%m%d')}-{secrets.token_hex(3)}"


# -- reading a job file, strictly ------------------------------------------------------


def _need(data: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str, where: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise JobFileError(f"{where}: field {name!r}: expected {what}, found {type(value).__name__}")
    return value


_NUMBER = (int, float)
#: The judge fields a job keeps that are not text (text fields may also be null).
_JUDGE_TYPES: dict[str, tuple[type, ...]] = {
    "temperature": _NUMBER, "timeout": _NUMBER, "max_retry_wait": _NUMBER, "price_factor": _NUMBER,
    "deadline": (*_NUMBER, type(None)), "max_retries": (int,), "concurrency": (int,), "max_tokens": (int,),
}  # fmt: skip


def _judge(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise JobFileError(f"{where}: field 'judge': expected an object")
    from rubric_studio.core.providers import registered

    known = {f.name for f in fields(JudgeConfig)} - set(_FROM_ENVIRONMENT)
    judge = {name: value for name, value in data.items() if name in known}
    providers = [p.name for p in registered() if p.batch_api]
    if judge.get("provider") not in providers or not isinstance(judge.get("model"), str):
        raise JobFileError(f"{where}: field 'judge': expected a provider ({' or '.join(providers)}) and a model")
    for name, value in judge.items():
        kinds = _JUDGE_TYPES.get(name, (str, type(None)))
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise JobFileError(f"{where}: field 'judge.{name}': expected {'a number' if int in kinds else 'text'}, "
                               f"found {type(value).__name__}")  # fmt: skip
    return judge


def _requests(data: Any, where: str) -> dict[str, RequestRef]:
    if not isinstance(data, dict):
        raise JobFileError(f"{where}: field 'requests': expected an object of custom id -> request")
    out = {}
    for custom_id, ref in data.items():
        ok = isinstance(ref, dict) and isinstance(ref.get("key"), str) and isinstance(ref.get("sample"), str)
        criteria = ref.get("criteria") if isinstance(ref, dict) else None
        if not ok or not isinstance(criteria, list) or not all(isinstance(c, str) for c in criteria):
            raise JobFileError(f"{where}: request {custom_id!r}: expected {{key, sample, criteria: [ids]}}")
        out[custom_id] = RequestRef(ref["key"], ref["sample"], list(criteria))
    return out


def _batches(data: Any, requests: dict[str, RequestRef], where: str) -> list[SubmittedBatch]:
    if not isinstance(data, list):
        raise JobFileError(f"{where}: field 'batches': expected a list")
    out = []
    for index, item in enumerate(data):
        ids = item.get("custom_ids") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(ids, list):
            raise JobFileError(f"{where}: batch {index + 1}: expected {{id, custom_ids: [...]}}")
        unknown = [cid for cid in ids if cid not in requests]
        if unknown:
            raise JobFileError(f"{where}: batch {item['id']!r}: custom id {unknown[0]!r} is not in 'requests'")
        out.append(SubmittedBatch(item["id"], list(ids)))
    return out


def parse_job(data: Any, where: str) -> Job:
    """A :class:`Job` from a job file's JSON; raises JobFileError naming ``where`` and the field."""
    if not isinstance(data, dict):
        raise JobFileError(f"{where}: expected a JSON object")
    job_id = _need(data, "id", str, "a job id", where)
    if not JOB_ID.fullmatch(job_id):
        raise JobFileError(f"{where}: field 'id': expected a job id like job-20261122-ab12cd, found {job_id!r}")
    state = _need(data, "state", str, "a state", where)
    if state not in STATES:
        raise JobFileError(f"{where}: field 'state': expected one of {', '.join(STATES)}, found {state!r}")
    requests = _requests(data.get("requests"), where)
    return Job(
        id=job_id, judge=_judge(data.get("judge"), where),
        cache_path=_need(data, "cache_path", str, "a path", where),
        rubric_path=_need(data, "rubric_path", str, "a path", where),
        rubric_hash=_need(data, "rubric_hash", str, "a hash", where),
        samples_path=_need(data, "samples_path", str, "a path", where),
        extract=_need(data, "extract", str, "an extractor name", where),
        repeat=_need(data, "repeat", int, "a whole number", where), state=state,
        created=float(_need(data, "created", (int, float), "a time", where)),
        requests=requests, batches=_batches(data.get("batches"), requests, where),
        endpoint_seal=data["endpoint_seal"] if isinstance(data.get("endpoint_seal"), str) else "",
        reuse_batch=_need(data, "reuse_batch", bool, "true or false", where) if "reuse_batch" in data else True,
    )  # fmt: skip


class JobStore:
    """The job files of one cache: ``<cache folder>/batch-jobs/<job id>.json``."""

    def __init__(self, cache_path: str | Path):
        self.cache_path = str(Path(cache_path).expanduser().resolve())
        self.folder = Path(self.cache_path).parent / FOLDER

    def path(self, job_id: str) -> Path:
        return self.folder / f"{job_id}.json"

    def save(self, job: Job) -> None:
        """Write ``job`` atomically (a crash leaves the previous version, never half a file)."""
        from rubric_studio.core.atomic import write_text_safely

        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_safely(self.path(job.id), json.dumps(job.to_dict(), ensure_ascii=False, indent=1) + "\n",
                          lock=True, user_file=True)  # `jobs cancel` in another process writes it too

    def load(self, job_id: str) -> Job:
        """The job ``job_id``; raises JobFileError with a message a user can act on."""
        if not JOB_ID.fullmatch(job_id):
            raise JobFileError(f"no batch job {job_id!r}: job ids look like job-20261122-ab12cd "
                               "(rubric-studio jobs status lists them)")  # fmt: skip
        path = self.path(job_id)
        if not path.exists():  # something there that is not a job file is named by read()
            raise JobFileError(f"no batch job {job_id!r} in {self.folder} (rubric-studio jobs status lists them; "
                               "a job made with --cache-path FILE is found with the same --cache-path)")  # fmt: skip
        return self.read(path)

    def read(self, path: Path) -> Job:
        """The job in ``path``, read like every user file: a regular file only (a FIFO or
        ``/dev/zero`` is refused without blocking), at most :data:`MAX_JOB_BYTES`, UTF-8,
        JSON nested at most 100 deep; JobFileError with file:line:column otherwise."""
        from rubric_studio.core.files import parse_user_json, read_user_file
        from rubric_studio.core.problems import RubricError

        try:
            data = parse_user_json(read_user_file(path, "batch job", max_bytes=MAX_JOB_BYTES), str(path))
        except RubricError as exc:
            raise JobFileError(f"{exc.problems[0]} (not a usable batch job file)") from None
        job = parse_job(data, str(path))
        if job.id != path.stem:
            raise JobFileError(f"{path}: field 'id': the file of job {path.stem} holds job {job.id}")
        return job

    def scan(self) -> tuple[list[Job], list[str]]:
        """Every job (oldest first) and a message per job file that cannot be used."""
        jobs, problems = [], []
        paths = sorted(self.folder.glob("job-*.json")) if self.folder.is_dir() else []
        for path in paths:
            try:
                jobs.append(self.read(path))
            except JobFileError as exc:
                problems.append(str(exc))
        return sorted(jobs, key=lambda job: job.created), problems

    def pending_for(self, keys: set[str]) -> tuple[list[Job], list[str]]:
        """Uncollected jobs of this cache that carry some of ``keys``, and unusable job files."""
        jobs, problems = self.scan()
        same_cache = [job for job in jobs if job.pending and _same_path(job.cache_path, self.cache_path)]
        return [job for job in same_cache if keys & job.keys()], problems


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a == b
