"""A rubric card: the evidence for a rubric, written beside it as ``<stem>.card.yaml``.

A card says which rubric (its content hash, and a fingerprint per criterion), which judge, when,
on how many labels by whom, and what those labels showed: kappa against the human consensus,
whether the judge is within the humans' own agreement, kappa per criterion, the pass rate raw and
corrected by the labels, the probe findings beyond the judge's noise, the flip rate over repeats,
and the cost per 100 samples of grading them once. Every figure is ``{value, ci, n}`` (a 95%
interval, :mod:`rubric_studio.core.intervals`); where the data cannot support a figure it is
``{value: null, cant_tell: "<why>", n}`` instead — never a bare number.

``rests_on`` records what the figures rest on: the samples and the labels (a count and a hash of
each) and the judge settings that can move a verdict. :func:`staleness` compares a card with the
rubric — and, given them, the samples and labels — as they are now and names what changed (a
criterion by id, the judge, a rubric setting, the labels), for ``validate`` and the studio. A
setting that cannot move a verdict (:data:`CANNOT_MOVE_A_VERDICT`) never makes a card stale.

Pure functions over dicts: no Textual, no SDK.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rubric_studio.core.agreement import MIN_CELL_LABELS, MIN_LABELS
from rubric_studio.core.intervals import Z95, wilson_interval
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric

#: The card format's version (``card_version`` in the file): 2 records ``rests_on``.
CARD_VERSION = 2
#: Rubric keys besides ``criteria`` hashed in the card, each named on its own when it changes.
RUBRIC_PARTS = ("name", "description", "pass_threshold", "on_error", "judge")
#: Settings that cannot move a verdict, by where they are written: how long, how often and how many
#: calls at once, where they are sent, and what only names, describes or sorts the rubric. A change
#: to one of them never makes a card stale; every other setting (the model, panel members,
#: temperature, prompt, mode, max_tokens, pooling, ties ...) does.
CANNOT_MOVE_A_VERDICT: Mapping[str, tuple[str, ...]] = {
    "rubric": ("name", "description"),
    "judge": ("timeout", "concurrency", "max_retries", "max_retry_wait", "deadline", "base_url"),
    "criterion": ("tags",),
}
#: Fewer labelled samples than this: the overall kappa is "can't tell".
MIN_CARD_LABELS = MIN_LABELS
#: Fewer labelled cells of a criterion than this: its kappa is "can't tell".
MIN_CARD_CELLS = MIN_CELL_LABELS
#: Fewer graded samples than this: no interval for the cost per 100.
MIN_COST_SAMPLES = 2


def card_path_for(rubric_path: str | Path) -> Path:
    """Where a rubric's card lives: ``<stem>.card.yaml`` beside it."""
    path = Path(rubric_path)
    return path.with_name(f"{path.stem}.card.yaml")


def _short_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def rubric_identity(rubric: Rubric) -> dict[str, Any]:
    """The rubric's content hash (as ``grade``'s ``rubric.hash``), a hash per part and per criterion,
    and ``verdict_hash``: a hash of everything but the judge block that can move a verdict."""
    data = rubric.model_dump(mode="json", by_alias=True)
    return {
        "name": rubric.name,
        "hash": rubric.content_hash(),
        "verdict_hash": _verdict_hash(data),
        "parts": {key: _short_hash(data.get(key)) for key in RUBRIC_PARTS},
        "criteria": {c.key: c.fingerprint() for c in rubric.criteria},
    }


def _verdict_hash(data: Mapping[str, Any]) -> str:
    """A hash of the rubric's dump without the judge block (``rests_on.judge`` holds what of it
    counts) and without what :data:`CANNOT_MOVE_A_VERDICT` lists; criteria in id order."""
    neutral = {*CANNOT_MOVE_A_VERDICT["rubric"], "judge"}
    kept = {key: value for key, value in data.items() if key not in neutral}
    criteria = []
    for criterion in data.get("criteria") or []:
        entry = {k: v for k, v in criterion.items() if k not in CANNOT_MOVE_A_VERDICT["criterion"]}
        if not entry.get("examples"):
            entry.pop("examples", None)  # as in Criterion.fingerprint
        criteria.append(entry)
    kept["criteria"] = sorted(criteria, key=lambda c: str(c.get("id")))
    return _short_hash(kept)


# -- what the card rests on -----------------------------------------------------
def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def samples_basis(samples: Sequence[Any]) -> dict[str, Any]:
    """``{n, hash}`` of a sample set: its ids and what a judge sees of each (order does not count)."""
    return {"n": len(samples), "hash": _digest(sorted([str(s.id), s.fingerprint()] for s in samples))}


def labels_basis(labels: Mapping[str, Any], sample_ids: Iterable[str]) -> dict[str, Any]:
    """``{n, hash}`` of the labels agreement reads: for each of ``sample_ids`` whose (consensus)
    label has one, its pass/fail verdict and its met/unmet per criterion. Notes, scores, who gave
    the label and when do not count; ``n`` is how many samples are labelled so."""
    entries = []
    for sample_id in sorted(set(map(str, sample_ids))):
        label = labels.get(sample_id)
        if label is None:
            continue
        verdict = label.verdict if label.verdict in ("pass", "fail") else None
        criteria = {cid: state for cid, state in sorted(label.criteria.items()) if state in ("met", "unmet")}
        if verdict is not None or criteria:
            entries.append([sample_id, verdict, criteria])
    return {"n": len(entries), "hash": _digest(entries)}


def _judge_text(text: str) -> str:
    """``provider:model`` as the judge resolver reads it (provider lower-case, ``_`` as ``-``)."""
    provider, sep, model = text.strip().partition(":")
    return f"{provider.strip().lower().replace('_', '-')}{sep}{model.strip()}" if sep else text.strip()


def _moving(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A judge block's dump without the settings that cannot move a verdict (nor empty mappings)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key in CANNOT_MOVE_A_VERDICT["judge"] or value == {}:
            continue
        if key == "model" and isinstance(value, str):
            value = _judge_text(value)
        if key == "panel" and isinstance(value, list):
            value = [_moving(member) for member in value]
        out[key] = value
    return out


def judge_basis(settings: Any, *, judge: str | None = None, ran: str | None = None, batch: bool = False,
                reuse_batch: bool | None = None) -> dict[str, Any]:
    """The judge settings that can move a verdict, each where it is not its default: ``model`` (one
    judge) or ``panel`` (its members, each ``{model, ...}``), temperature, prompt, mode, pooling, ties ...

    ``settings``: the rubric's ``judge`` block (a JudgeSettings or None); ``judge``: a ``--judge``
    that replaced its model or panel (``A`` or ``A,B,C``); ``ran``: the judge that graded, named
    when neither the rubric nor ``judge`` named one (the model the environment chose);
    ``batch`` / ``reuse_batch``: the command line's ``--batch`` / ``--no-reuse-batch``.
    Without the other arguments: the judge the rubric names."""
    data = _moving(settings.model_dump(mode="json", exclude_defaults=True, by_alias=True)) if settings else {}
    if judge:
        from rubric_studio.core.panel import split_judges

        members = split_judges(judge)
        data.pop("model", None)
        data.pop("panel", None)
        if len(members) > 1:
            data["panel"] = [{"model": _judge_text(m)} for m in members]
        elif members:
            data["model"] = _judge_text(members[0])
    elif ran and "model" not in data and "panel" not in data:
        data["model"] = _judge_text(ran)
    if batch:
        data["mode"] = "batch"
    if reuse_batch is False:
        data["reuse_batch"] = False
    return data


def judge_basis_name(basis: Mapping[str, Any]) -> str | None:
    """``openai:gpt-4o-mini``, ``panel A+B+C``, or None when no judge is named."""
    panel = basis.get("panel")
    if isinstance(panel, list) and panel:
        return "panel " + "+".join(str(m.get("model")) if isinstance(m, dict) else str(m) for m in panel)
    model = basis.get("model")
    return str(model) if model else None


def relative_path(path: str | Path, rubric_path: str | Path) -> str:
    """``path`` as the card records it: relative to the rubric's folder (``/``-separated) when it is
    inside it, else absolute."""
    target = Path(os.path.abspath(path))
    folder = Path(os.path.abspath(rubric_path)).parent
    try:
        return target.relative_to(folder).as_posix()
    except ValueError:
        return str(target)


def recorded_path(text: str, rubric_path: str | Path) -> Path:
    """The file a card's recorded ``path`` names (relative to the rubric's folder)."""
    return Path(rubric_path).absolute().parent / text


# -- figures ------------------------------------------------------------------
def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _ci(ci: Sequence[float] | None, digits: int = 4) -> list[float] | None:
    return None if ci is None else [round(ci[0], digits), round(ci[1], digits)]


def figure(value: float | None, ci: Sequence[float] | None, n: int, cant_tell: str | None = None) -> dict[str, Any]:
    """``{value, ci, n}``; "can't tell" (with the reason) when the value or its interval is missing."""
    if cant_tell is None and (value is None or ci is None):
        cant_tell = "not defined on these data"
    if cant_tell is not None:
        return {"value": None, "ci": None, "n": n, "cant_tell": cant_tell}
    return {"value": _r(value), "ci": _ci(ci), "n": n}


def kappa_figure(entry: Mapping[str, Any] | None, minimum: int, what: str) -> dict[str, Any]:
    """A kappa from an agreement entry (``calibrate``'s ``overall`` or one criterion), or why it can't be told."""
    if not entry:
        return figure(None, None, 0, f"no {what} labelled")
    n = int(entry["n"])
    if n < minimum:
        return figure(None, None, n, f"fewer than {minimum} {what} labelled and judged (n = {n})")
    human_pass = entry["both_pass"] + entry["rubric_fail_human_pass"]
    human_fail = entry["both_fail"] + entry["rubric_pass_human_fail"]
    if not human_pass * human_fail:
        return figure(None, None, n, "the human labels are all one class; label both outcomes")
    if entry["kappa"] is None or entry.get("kappa_ci") is None:
        return figure(None, None, n, "the judge gave every one the same verdict: kappa is undefined")
    return figure(entry["kappa"], entry["kappa_ci"], n)


def rate_figure(hits: int, n: int, what: str) -> dict[str, Any]:
    """A proportion with its Wilson interval, or why it can't be told (n = 0)."""
    if n <= 0:
        return figure(None, None, 0, f"no {what}")
    return figure(hits / n, wilson_interval(hits, n), n)


def cost_figure(total_usd: float | None, weights: Sequence[float], cant_tell: str | None = None) -> dict[str, Any]:
    """USD per 100 samples: the run's bill over its ``n`` samples × 100, with a 95% normal interval of
    the mean per-sample cost (each sample's share of the bill by its judge tokens, ``weights``)."""
    n = len(weights)
    if cant_tell is not None or total_usd is None:
        return figure(None, None, n, cant_tell or "the judge model has no known price (prices.yaml)")
    if n < MIN_COST_SAMPLES:
        return figure(None, None, n, f"fewer than {MIN_COST_SAMPLES} samples graded")
    tokens = sum(weights)
    shares = [total_usd * w / tokens for w in weights] if tokens else [total_usd / n] * n
    if not tokens and total_usd:
        return figure(None, None, n, "the per-sample judge tokens were not recorded, so the spread is unknown")
    mean = total_usd / n
    half = Z95 * statistics.stdev(shares) / math.sqrt(n)
    return {"value": round(mean * 100, 6), "ci": [round(max(0.0, mean - half) * 100, 6), round((mean + half) * 100, 6)],
            "n": n, "unit": "USD per 100 samples"}


def grading_once(total_usd: float | None, repeat: int, judged_cells: int) -> tuple[float | None, dict[str, Any] | None]:
    """(the bill of grading the samples once, the repeat calls apart) of a run that judged each
    cell ``repeat`` times: ``judged_cells`` counts every judgement (repeats included, cached or
    sent). Each repeat sends the same request, so one pass costs the bill / ``repeat``; the other
    passes are the calls the flip rate needs: ``{calls, usd}`` (None when ``repeat`` is 1)."""
    repeat = max(1, int(repeat))
    once = None if total_usd is None else total_usd / repeat
    if repeat == 1:
        return once, None
    extra = None if total_usd is None or once is None else round(total_usd - once, 6)
    return once, {"calls": round(judged_cells * (repeat - 1) / repeat), "usd": extra}


# -- the card -----------------------------------------------------------------
def build_card(
    rubric: Rubric,
    *,
    judge: Mapping[str, Any] | None,
    date: str,
    samples: int,
    agreement: Mapping[str, Any],
    humans: Mapping[str, Any] | None,
    cost: Mapping[str, Any],
    probes: Mapping[str, Any] | None = None,
    consistency: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
    pass_rate: Mapping[str, Any] | None = None,
    rests_on: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The card as a plain dict (the shape of ``docs/reference/schemas/card.schema.json``).

    ``agreement``: ``calibrate``'s agreement object (``overall``, ``criteria``); ``humans`` its
    ``humans`` section; ``probes``: :func:`probe_section`'s; ``consistency``: :func:`consistency_section`'s;
    ``pass_rate``: :func:`rubric_studio.core.pass_rate.pass_rates`'s; ``rests_on``: ``{samples,
    labels, judge}`` (:func:`samples_basis`, :func:`labels_basis`, :func:`judge_basis`, each
    samples and labels entry with the ``path`` it was read from).
    """
    humans = humans or {}
    annotators = list(humans.get("annotators", []))
    verdict = humans.get("judge_within_humans")
    within = {
        "verdict": verdict,
        "reason": (humans.get("within_humans") or {}).get("reason", "no annotators"),
    }
    if verdict is None:
        within["cant_tell"] = within["reason"]
    overall = agreement.get("overall") or {}
    criteria = {
        cid: {"kappa": kappa_figure(entry, MIN_CARD_CELLS, "cells")}
        for cid, entry in (agreement.get("criteria") or {}).items()
    }
    return {
        "card_version": CARD_VERSION,
        "rubric": {**rubric_identity(rubric), "path": Path(rubric.path).name if rubric.path else None},
        "judge": judge_name(judge),
        "judge_detail": dict(judge) if judge else None,
        "date": date,
        "samples": samples,
        "labels": {"n": int(overall.get("n", 0)), "annotators": annotators,
                   "against": "the consensus of the annotators (an adjudicated label wins)"},
        "kappa": kappa_figure(overall, MIN_CARD_LABELS, "samples"),
        "pass_rate": dict(pass_rate) if pass_rate else {"cant_tell": "no sample got a pass/fail verdict"},
        "within_humans": within,
        "criteria": criteria,
        "probes": dict(probes) if probes else {"cant_tell": "no probe run for this card (card --probe-kinds K1,K2)"},
        "consistency": dict(consistency) if consistency else {"cant_tell": "each cell was judged once (card --repeat K)"},
        "cost_per_100": dict(cost),
        "rests_on": dict(rests_on) if rests_on else {},
        "warnings": list(warnings),
    }


def judge_name(judge: Mapping[str, Any] | None) -> str | None:
    """``openai:gpt-4o-mini``, ``panel A+B+C``, or None without a judge."""
    if not judge:
        return None
    if judge.get("provider") == "panel":
        return f"panel {judge.get('model')}"
    return f"{judge.get('provider')}:{judge.get('model')}"


def probe_section(report: Mapping[str, Any]) -> dict[str, Any]:
    """The probes as the card records them, from a probe report (``probe --format json``'s object).

    Each kind is decided once against the judge's own noise, pooled over its criteria (the report's
    ``kinds.<kind>.beyond_noise``): a kind decided true is a finding — what it moved, what the noise
    moved on the same cells, the exact test, the sentence the report reads it with, and the criteria
    where it also shows on its own (per-criterion detail, not a second decision). A kind that can't
    tell is listed with why (too few cells and the shift that would go unseen, a suggestive shift, no
    cell that could move its way), a skipped kind with why it was skipped, and a judge that gave one
    verdict to every cell is named (``constant``): none of these is "no finding".
    """
    findings: list[dict[str, Any]] = []
    cant_tell: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    for kind, entry in report.get("kinds", {}).items():
        verdict = entry.get("beyond_noise")
        if entry.get("skipped"):
            skipped.append({"kind": kind, "why": str(entry["skipped"])})
        elif verdict is True:
            findings.append(_probe_finding(kind, entry))
        elif isinstance(verdict, Mapping):
            cant_tell.append({"kind": kind, "why": str(verdict.get("cant_tell") or entry.get("reads") or "")})
        elif verdict is not False:
            cant_tell.append({"kind": kind, "why": "not compared with the judge's own noise"})
    noise = {cid: figure(c.get("rate"), c.get("ci"), int(c.get("n") or 0)) for cid, c in report.get("noise", {}).items()}
    section: dict[str, Any] = {"kinds": list(report.get("kinds", {})), "seed": report.get("seed", 0), "noise": noise,
                               "findings": findings, "cant_tell_kinds": cant_tell,
                               "samples": (report.get("samples") or {}).get("n", 0)}  # fmt: skip
    if skipped:
        section["skipped"] = skipped
    if report.get("constant"):
        section["constant"] = str(report["constant"])
    return section


def _probe_finding(kind: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """One kind beyond the judge's noise: its pooled counts as figures, the exact test, its reading."""
    pooled = entry.get("pooled") or {}
    cells = int(pooled.get("cells") or 0)
    return {
        "kind": kind, "counted": pooled.get("counted"),
        "moved": rate_figure(int(pooled.get("moved") or 0), cells, "cells compared"),
        "noise_moved": rate_figure(int(pooled.get("noise_moved") or 0), cells, "cells compared"),
        "test": {"shift": pooled.get("shift"), "p_value": pooled.get("p_value"), "level": pooled.get("level")},
        "reads": entry.get("reads"),
        "criteria": [cid for cid, c in entry.get("criteria", {}).items() if c.get("beyond_noise")],
    }  # fmt: skip


def consistency_section(flip_rates: Mapping[str, Mapping[str, Any]], repeat: int,
                        repeat_cost: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The flip rate over ``repeat`` judgements of each cell, overall and per criterion, and what
    the repeat calls cost (``{calls, usd}``, :func:`grading_once`): apart from the cost per 100."""
    cells = sum(int(v["cells"]) for v in flip_rates.values())
    flipped = sum(int(v["flipped"]) for v in flip_rates.values())
    section: dict[str, Any] = {
        "repeat": repeat,
        "flip_rate": rate_figure(flipped, cells, "judged cells"),
        "criteria": {cid: rate_figure(int(v["flipped"]), int(v["cells"]), "judged cells") for cid, v in flip_rates.items()},
    }
    if repeat_cost is not None:
        section["repeat_calls"] = dict(repeat_cost)
    return section


# -- reading and staleness ----------------------------------------------------
class CardUnreadable(ValueError):
    """A ``<stem>.card.yaml`` that cannot be read as a card; ``problem`` says where (line and column)
    and why. ``validate`` reports it as an error; the studio shows the card as unreadable."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(f"{problem.location()}: {problem.message}")


#: What a card's readers rely on: where, of what type, and what is expected there in words
#: (checked before anything reads it).
_CARD_SHAPE: tuple[tuple[tuple[str, ...], type, str], ...] = (
    (("rubric",), dict, "a mapping (the rubric's identity)"),
    (("rubric", "hash"), str, "the rubric's hash (text)"),
    (("rubric", "criteria"), dict, "a mapping of criterion id -> fingerprint"),
    (("rubric", "parts"), dict, "a mapping of rubric setting -> hash"),
)
_REFRESH = "write it again with rubric-studio card"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _figure_problem(value: Any) -> str | None:
    """What is wrong with a ``{value, ci, n}`` figure read from a card (None: nothing)."""
    if not isinstance(value, dict):
        return "expected {value, ci, n}"
    ci = value.get("ci")
    if value.get("value") is not None and not _is_number(value.get("value")):
        return "value: expected a number or null"
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(map(_is_number, ci))):
        return "ci: expected [low, high] or null"
    if not isinstance(value.get("n", 0), int) or isinstance(value.get("n"), bool):
        return "n: expected a whole number"
    return None


def _shape_problem(data: Any) -> tuple[tuple[str, ...], str] | None:
    """(where, what is wrong) when ``data`` is not shaped as a card's readers need; None when it is."""
    if not isinstance(data, dict):
        return (), f"not a card (expected a mapping with rubric, kappa, date ...); {_REFRESH}"
    for path, kind, expected in _CARD_SHAPE:
        value: Any = data
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, kind):
            return path, f"not a card: {'.'.join(path)}: expected {expected}; {_REFRESH}"
    wrong = _figure_problem(data["kappa"]) if "kappa" in data else None
    return (("kappa",), f"not a card: kappa: {wrong}; {_REFRESH}") if wrong else None


def read_card(path: str | Path) -> dict[str, Any] | None:
    """The card at ``path``; None when there is none. :class:`CardUnreadable` (a ValueError with the
    problem at its line and column) for a file that cannot be read as a card: not a regular file, not
    UTF-8, not YAML, beyond the bounded reader's limits (nesting, aliases, 5,000-digit numbers) or not
    shaped as a card."""
    from rubric_studio.core.files import read_user_file
    from rubric_studio.core.yamlpos import load_with_positions

    path = Path(path)
    if not os.path.lexists(path):
        return None
    try:
        data, positions, problems = load_with_positions(read_user_file(path, "card"), str(path))
    except RubricError as exc:
        first = exc.problems[0] if exc.problems else Problem(str(path), None, None, "cannot be read")
        raise CardUnreadable(Problem(first.file, first.line or 1, first.column or 1,
                                     f"not a card: {first.message}")) from None
    if problems:
        raise CardUnreadable(Problem(problems[0].file, problems[0].line, problems[0].column,
                                     f"not a card: {problems[0].message}"))
    wrong = _shape_problem(data)
    if wrong is not None:
        where, message = wrong
        problem = positions.problem(where, message)
        raise CardUnreadable(Problem(problem.file, problem.line or 1, problem.column or 1, message))
    return data


def staleness(card: Mapping[str, Any], rubric: Rubric, now: Mapping[str, Any] | None = None) -> list[str]:
    """What changed since ``card`` was written, each named: ``tone changed``, ``x added``,
    ``pass_threshold changed``, ``judge changed: openai:gpt-4o-mini → anthropic:claude-y``,
    ``judge temperature changed: 0 → 0.7``, ``labels changed since the card: 12 → 15 labelled``;
    empty when the card is fresh. A setting in :data:`CANNOT_MOVE_A_VERDICT` never counts.

    ``now``: the samples and labels as they are now (``{samples, labels}``, each a
    :func:`samples_basis` / :func:`labels_basis`, or ``{cant_read: why}``); without it they are
    not compared. A card from before ``rests_on`` is compared on its rubric parts only."""
    identity = rubric_identity(rubric)
    rests = card.get("rests_on") if isinstance(card.get("rests_on"), dict) else {}
    judge_then = rests.get("judge")
    changes: list[str] = []
    if card["rubric"].get("hash") != identity["hash"]:
        changes += _rubric_changes(card["rubric"], identity, judge_apart=isinstance(judge_then, dict))
    if isinstance(judge_then, dict):
        changes += _judge_changes(judge_then, judge_basis(rubric.judge))
    if now is not None:
        changes += _basis_changes(rests, now)
    return changes


def _rubric_changes(then: Mapping[str, Any], now: Mapping[str, Any], *, judge_apart: bool) -> list[str]:
    """The criteria and rubric settings that changed (``judge_apart``: the judge is compared on its own)."""
    changes: list[str] = []
    old, new = then.get("criteria") or {}, now["criteria"]
    changes += [f"{cid} changed" for cid in new if cid in old and old[cid] != new[cid]]
    changes += [f"{cid} added" for cid in new if cid not in old]
    changes += [f"{cid} removed" for cid in old if cid not in new]
    parts = then.get("parts") or {}
    skip = {*CANNOT_MOVE_A_VERDICT["rubric"], *(("judge",) if judge_apart else ())}
    changes += [f"{key} changed" for key in RUBRIC_PARTS
                if key not in skip and key in parts and parts[key] != now["parts"][key]]
    if not changes and "verdict_hash" in then and then["verdict_hash"] != now["verdict_hash"]:
        changes.append("the rubric changed")  # a setting the parts above do not name
    return changes


def _shown(value: Any) -> str | None:
    """A setting's value for a one-line message, or None when it is too long to show (a prompt)."""
    if value is None or isinstance(value, str):
        text = "none" if value is None else value
    else:
        try:
            text = json.dumps(value, sort_keys=True, default=str)
        except (TypeError, ValueError):  # a hand-edited card's keys of mixed types
            return None
    return None if len(text) > 40 or _LINE_BREAKS.search(text) else text


def _setting_change(what: str, old: Any, new: Any) -> str:
    shown_old, shown_new = _shown(old), _shown(new)
    if shown_old is None or shown_new is None:
        return f"{what} changed"
    return f"{what} changed: {shown_old} → {shown_new}"


def _judge_default(key: str) -> Any:
    from rubric_studio.core.rubric import JudgeSettings

    field = JudgeSettings.model_fields.get(key)
    if field is None or field.default is None:
        return None
    default = field.default
    return default.model_dump(mode="json") if hasattr(default, "model_dump") else default


def _judge_changes(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The judge the card was written with against the one the rubric names now: the judge by name
    first, then every other setting that can move a verdict."""
    if judge_basis_name(now) is None:  # the rubric names none: whichever the environment picks
        then = {key: value for key, value in then.items() if key not in ("model", "panel")}
    changes: list[str] = []
    name_then, name_now = judge_basis_name(then), judge_basis_name(now)
    if name_then != name_now:
        changes.append(f"judge changed: {name_then or 'none'} → {name_now}")
    elif isinstance(then.get("panel"), list) and isinstance(now.get("panel"), list):
        for old, new in zip(then["panel"], now["panel"], strict=False):
            if not (isinstance(old, dict) and isinstance(new, dict)):
                continue
            for key in sorted((set(old) | set(new)) - {"model"}, key=str):
                if old.get(key) != new.get(key):
                    changes.append(_setting_change(f"judge {new.get('model')} {key}", old.get(key, "unset"),
                                                   new.get(key, "unset")))
    for key in sorted((set(then) | set(now)) - {"model", "panel"}, key=str):
        old, new = then.get(key, _judge_default(key)), now.get(key, _judge_default(key))
        if old != new:
            changes.append(_setting_change(f"judge {key}", old, new))
    return changes


def _basis_changes(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The samples and labels the card rests on against those of now, by count when it moved."""
    changes: list[str] = []
    for what, unit in (("samples", "samples"), ("labels", "labelled")):
        old, new = then.get(what), now.get(what)
        if not isinstance(old, dict) or not isinstance(new, dict):
            continue
        if "cant_read" in new:
            changes.append(f"{what} changed since the card: {new['cant_read']}")
        elif old.get("hash") != new.get("hash"):
            counts = f"{old.get('n')} → {new.get('n')}" if old.get("n") != new.get("n") else f"{new.get('n')}"
            edited = "" if old.get("n") != new.get("n") else ", some of them edited"
            changes.append(f"{what} changed since the card: {counts} {unit}{edited}")
    return changes


def stale_message(card: Mapping[str, Any], changes: Sequence[str]) -> str:
    """``card is stale: tone changed; judge changed: openai:a → openai:b (card of 2026-11-28)``."""
    return f"card is stale: {'; '.join(changes)} (card of {card.get('date', 'an unknown date')})"


def card_state(rubric: Rubric, now: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(``fresh`` | ``stale`` | ``none`` | ``unreadable``, a short text for a status line) of the
    rubric's card; ``now``: the samples and labels of now, as for :func:`staleness`."""
    if rubric.path is None:
        return "none", "card: none"
    try:
        card = read_card(card_path_for(rubric.path))
    except ValueError:
        return "unreadable", "card: unreadable"
    if card is None:
        return "none", "card: none"
    changes = staleness(card, rubric, now)
    if changes:
        return "stale", f"card: stale ({'; '.join(changes)})"
    return "fresh", "card: fresh"


# -- writing ------------------------------------------------------------------
#: Every line break a YAML reader of either version knows: each one would end a comment line.
_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")


def _card_dumper() -> type:
    """A PyYAML dumper whose strings read back as the same strings in YAML 1.2 readers too (ruamel,
    js-yaml): what :func:`~rubric_studio.core.yamlpos.needs_double_quotes` names is double-quoted."""
    import yaml

    from rubric_studio.core.yamlpos import needs_double_quotes

    class CardDumper(yaml.SafeDumper):
        pass

    def represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = '"' if needs_double_quotes(value) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    CardDumper.add_representer(str, represent_text)
    return CardDumper


def _one_line(text: str) -> str:
    """``text`` for a comment line: every line break a YAML reader knows becomes a space."""
    return " ".join(_LINE_BREAKS.sub(" ", text).split()) or "?"


def card_yaml(card: Mapping[str, Any]) -> str:
    """The card as YAML, with a heading comment naming the rubric and the command that refreshes it.
    It reads back as the same data in YAML 1.1 (PyYAML) and YAML 1.2 (ruamel, js-yaml) readers."""
    import yaml

    path = _one_line(str(card["rubric"].get("path") or "RUBRIC"))
    head = (f"# Rubric card of {_one_line(str(card['rubric']['name']))} ({path}), written by rubric-studio card.\n"
            f"# Refresh it after editing the rubric: rubric-studio card {path}\n")
    return head + yaml.dump(dict(card), Dumper=_card_dumper(), sort_keys=False, allow_unicode=True, width=100)


def _value(fig: Mapping[str, Any], pct: bool = False, money: bool = False) -> tuple[str, str, str]:
    """(value, 95% CI, n) as text; "can't tell" with the reason in place of a value."""
    n = str(fig.get("n", "–"))
    if fig.get("value") is None:
        return f"can't tell — {fig.get('cant_tell', 'no data')}", "–", n

    def fmt(x: float) -> str:
        if pct:
            return f"{x:.0%}"
        if money:
            return f"${x:.4f}"
        return f"{x:.2f}"

    lo, hi = fig["ci"]
    return fmt(fig["value"]), f"{fmt(lo)} – {fmt(hi)}", n


def _rate_rows(name: str, rates: Mapping[str, Any]) -> list[str]:
    """The table row of one rate, raw → corrected: the raw share of every judged sample, the
    corrected one's interval, and the labelled + unlabelled samples it rests on."""
    corrected = rates.get("corrected") or {}
    labelled, unlabelled = corrected.get("n_labelled", 0), corrected.get("n_unlabelled", 0)
    raw = "–" if rates.get("raw") is None else f"{rates['raw']:.0%}"
    counts = f"{labelled} labelled + {unlabelled}"
    if corrected.get("value") is None or not corrected.get("ci"):
        why = corrected.get("cant_tell") or "no data"
        return [f"| {name}, raw → corrected | {raw} → can't tell — {why} | – | {counts} |"]
    lo, hi = corrected["ci"]
    return [f"| {name}, raw → corrected | {raw} → {corrected['value']:.0%} | {lo:.0%} – {hi:.0%} | {counts} |"]


def repeat_calls_text(consistency: Mapping[str, Any]) -> str | None:
    """``plus 120 repeat calls for the flip rate: $0.0156``, or None without repeats."""
    extra = consistency.get("repeat_calls")
    if not isinstance(extra, dict):
        return None
    usd = extra.get("usd")
    price = "no known price" if not _is_number(usd) else f"${usd:.4f}"
    return f"plus {extra.get('calls')} repeat calls for the flip rate: {price}"


def _probe_lines(probes: Mapping[str, Any]) -> list[str]:
    """The card's probes in Markdown: the findings, a constant judge, the kinds that can't tell and
    those skipped; "no finding" only when every kind probed was decided and none is beyond the noise."""
    if "findings" not in probes:
        return [f"- probes: can't tell — {probes['cant_tell']}"]
    kinds = ", ".join(probes["kinds"])
    lines = []
    if probes["findings"]:
        lines.append(f"- probe findings beyond this judge's noise ({kinds}):")
        for f in probes["findings"]:
            alone = f"; on its own on {', '.join(f['criteria'])}" if f.get("criteria") else ""
            lines.append(f"  - {f['kind']}: {f.get('reads') or f.get('direction')}{alone}")
    constant = probes.get("constant")
    if constant:
        lines.append(f"- probes: {constant}")
    unsure = [c for c in probes.get("cant_tell_kinds", []) if c["why"] != constant]
    lines += [f"- probes · {c['kind']}: can't tell — {c['why']}" for c in unsure]
    lines += [f"- probes · {c['kind']}: skipped — {c['why']}" for c in probes.get("skipped", [])]
    if not lines:
        lines.append(f"- probes ({kinds}): no finding beyond this judge's own noise")
    return lines


def card_markdown(card: Mapping[str, Any]) -> str:
    """The card as Markdown for a README or a pull request: a table of figures, each with its 95% CI and n."""
    rubric = card["rubric"]
    lines = [f"### Rubric card: {rubric['name']}", "",
             f"- rubric: `{rubric.get('path') or rubric['name']}` · hash `{rubric['hash']}`",
             f"- judge: `{card.get('judge') or 'none'}` · date {card['date']} · {card['samples']} samples graded",
             f"- labels: {card['labels']['n']} samples labelled and judged · annotators: "
             + (", ".join(card["labels"]["annotators"]) or "none"), "",
             "| figure | value | 95% CI | n |", "|---|---|---|---|"]  # fmt: skip

    def row(name: str, fig: Mapping[str, Any], **kw: bool) -> None:
        value, ci, n = _value(fig, **kw)
        lines.append(f"| {name} | {value} | {ci} | {n} |")

    row("κ vs the consensus", card["kappa"])
    for cid, entry in card["criteria"].items():
        row(f"κ · {cid}", entry["kappa"])
    rates = card.get("pass_rate") or {}
    if "raw" in rates:
        lines += _rate_rows("pass rate", rates)
        for cid, entry in (rates.get("criteria") or {}).items():
            lines += _rate_rows(f"met rate · {cid}", entry)
    consistency = card["consistency"]
    if "flip_rate" in consistency:
        row(f"flip rate over {consistency['repeat']} repeats", consistency["flip_rate"], pct=True)
    row("cost per 100 samples (grading once)", card["cost_per_100"], money=True)
    within = card["within_humans"]
    verdict = {True: "yes", False: "no", None: "can't tell"}[within["verdict"]]
    lines += ["", f"- judge within the humans' agreement: **{verdict}** — {within['reason']}"]
    if "flip_rate" not in consistency:
        lines.append(f"- consistency: can't tell — {consistency['cant_tell']}")
    elif (extra := repeat_calls_text(consistency)) is not None:
        lines.append(f"- cost: {extra}")
    lines += _probe_lines(card["probes"])
    lines.extend(f"- warning: {w}" for w in card.get("warnings", []))
    return "\n".join(lines) + "\n"
