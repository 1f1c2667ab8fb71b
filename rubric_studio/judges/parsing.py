"""Read a judge's reply text: find the JSON in it, then check it has the expected shape.

Replies are meant to be bare JSON, but models (and OpenAI-compatible servers without
schema enforcement) also answer with ```json fences, prose around an object, an XML-ish
tag (``<json>``, ``<answer>`` ...) or a ``<think>`` block first. :func:`extract_json`
accepts all of these. :func:`read_single` / :func:`read_batch` validate the object and
are tolerant where the meaning is unambiguous (``"Met"``, ``"7"``, a lone evidence
string, a missing rationale) and strict where it is not (no verdict, ``"maybe"``).
Every failure is a ``ValueError`` whose message is shown to the judge in the repair call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\n?(.*?)```", re.S)
_TAG = re.compile(r"<(json|answer|output|result|response|judgement|judgment)>(.*?)</\1>", re.S | re.I)
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_VERDICTS = {
    "met": "met", "yes": "met", "pass": "met", "true": "met", "satisfied": "met",
    "unmet": "unmet", "not met": "unmet", "not_met": "unmet", "no": "unmet", "fail": "unmet",
    "false": "unmet", "unsatisfied": "unmet", "not satisfied": "unmet",
}  # fmt: skip


@dataclass
class Judgement:
    """One criterion's answer: ``verdict`` ("met"/"unmet") or ``score`` (0..10), and why."""

    verdict: str | None = None
    score: int | None = None
    rationale: str = ""
    quotes: list[str] = field(default_factory=list)


def _loads(text: str) -> Any:
    return json.loads(text.strip().lstrip("\ufeff"))


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_json(text: str) -> Any:
    """The JSON value in a reply: bare, fenced, in a tag, or the first object in prose."""
    if not text or not text.strip():
        raise ValueError("the reply is empty")
    text = _THINK.sub("", text)
    candidates = [text]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    candidates += [m.group(2) for m in _TAG.finditer(text)]
    for candidate in candidates:
        try:
            return _loads(candidate)
        except ValueError:
            continue
    found = _first_object(text)
    if found is not None:
        return found
    snippet = " ".join(text.split())[:80]
    raise ValueError(f"no JSON object found in the reply (it starts {snippet!r})")


def _verdict(value: Any) -> str:
    if isinstance(value, bool):
        return "met" if value else "unmet"
    if isinstance(value, str) and value.strip().lower() in _VERDICTS:
        return _VERDICTS[value.strip().lower()]
    raise ValueError(f'"verdict" must be "met" or "unmet", got {value!r}')


def _score(value: Any) -> int:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f'"score" must be an integer from 0 to 10, got {value!r}') from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f'"score" must be an integer from 0 to 10, got {value!r}')
    return int(min(10, max(0, round(value))))


def _quotes(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in value]
    raise ValueError(f'"evidence" must be a list of quotes, got {type(value).__name__}')


def read_single(data: Any, analytic: bool) -> Judgement:
    """Validate one criterion's object; ``analytic`` selects ``score`` over ``verdict``."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    key = "score" if analytic else "verdict"
    if key not in data:
        raise ValueError(f'the reply has no "{key}" field')
    rationale = data.get("rationale", data.get("reasoning", ""))
    judgement = Judgement(rationale=rationale if isinstance(rationale, str) else json.dumps(rationale))
    judgement.quotes = _quotes(data.get("evidence"))
    if analytic:
        judgement.score = _score(data["score"])
    else:
        judgement.verdict = _verdict(data["verdict"])
    return judgement


def batch_entries(data: Any, ids: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The entries of a batch reply for the criteria ``ids``, as a mapping id -> entry.

    The reply is keyed by id (``{"<id>": {...}}``, what the schema asks for); the older list
    shape ``{"criteria": [{"id": ...}, ...]}`` is read too. Ids the reply lacks are absent.
    """
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object keyed by criterion id, got {type(data).__name__}")
    keyed = {cid: data[cid] for cid in ids if cid in data}
    if keyed:
        return keyed
    items = data.get("criteria")
    if isinstance(items, dict):
        return {cid: items[cid] for cid in ids if cid in items}
    if isinstance(items, list):
        entries: dict[str, Any] = {}
        for item in items:
            if isinstance(item, dict) and item.get("id") in ids:
                entries.setdefault(item["id"], item)
        return entries
    return {}
