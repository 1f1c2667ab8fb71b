"""A rubric card: the evidence for a rubric, written beside it as ``<stem>.card.yaml``.

A card says which rubric (its content hash, and a fingerprint per criterion), which judge, when,
on how many labels by whom, and what those labels showed: kappa against the human consensus,
whether the judge is within the humans' own agreement, kappa per criterion, the probe findings
beyond the judge's noise, the flip rate over repeats, and the cost per 100 samples. Every figure
is ``{value, ci, n}`` (a 95% interval, :mod:`rubric_studio.core.intervals`); where the data cannot
support a figure it is ``{value: null, cant_tell: "<why>", n}`` instead — never a bare number.

:func:`staleness` compares a card with the rubric as it is now and names what changed (a
criterion by id, the judge settings, a rubric setting), for ``validate`` and the studio.

Pure functions over dicts: no Textual, no SDK.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rubric_studio.core.agreement import MIN_CELL_LABELS, MIN_LABELS
from rubric_studio.core.intervals import Z95, wilson_interval
from rubric_studio.core.problems import Problem, RubricError
from rubric_studio.core.rubric import Rubric

#: The card format's version (``card_version`` in the file).
CARD_VERSION = 1
#: Rubric keys besides ``criteria`` whose change makes a card stale, each named on its own.
RUBRIC_PARTS = ("name", "description", "pass_threshold", "on_error", "judge")
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
    """The rubric's content hash (as ``grade``'s ``rubric.hash``), a hash per part and per criterion."""
    data = rubric.model_dump(mode="json", by_alias=True)
    return {
        "name": rubric.name,
        "hash": rubric.content_hash(),
        "parts": {key: _short_hash(data.get(key)) for key in RUBRIC_PARTS},
        "criteria": {c.key: c.fingerprint() for c in rubric.criteria},
    }


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
) -> dict[str, Any]:
    """The card as a plain dict (the shape of ``docs/reference/schemas/card.schema.json``).

    ``agreement``: ``calibrate``'s agreement object (``overall``, ``criteria``); ``humans`` its
    ``humans`` section; ``probes``: :func:`probe_section`'s; ``consistency``: :func:`consistency_section`'s.
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
        "within_humans": within,
        "criteria": criteria,
        "probes": dict(probes) if probes else {"cant_tell": "no probe run for this card (card --probe-kinds K1,K2)"},
        "consistency": dict(consistency) if consistency else {"cant_tell": "each cell was judged once (card --repeat K)"},
        "cost_per_100": dict(cost),
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
    """The probe findings beyond noise of a probe report (``probe --format json``'s object)."""
    findings = []
    for kind, entry in report.get("kinds", {}).items():
        for cid, c in entry.get("criteria", {}).items():
            if not c.get("beyond_noise"):
                continue
            difference = c.get("difference") or {}
            findings.append({
                "kind": kind, "criterion": cid, "direction": c.get("direction"),
                "flip_rate": figure(c.get("rate"), c.get("ci"), int(c.get("n") or 0)),
                "difference": figure(difference.get("value"), difference.get("ci"),
                                     int(difference.get("n") or c.get("n") or 0)),
            })  # fmt: skip
    noise = {cid: figure(c.get("rate"), c.get("ci"), int(c.get("n") or 0)) for cid, c in report.get("noise", {}).items()}
    return {"kinds": list(report.get("kinds", {})), "seed": report.get("seed", 0), "noise": noise,
            "findings": findings, "samples": (report.get("samples") or {}).get("n", 0)}


def consistency_section(flip_rates: Mapping[str, Mapping[str, Any]], repeat: int) -> dict[str, Any]:
    """The flip rate over ``repeat`` judgements of each cell, overall and per criterion."""
    cells = sum(int(v["cells"]) for v in flip_rates.values())
    flipped = sum(int(v["flipped"]) for v in flip_rates.values())
    return {
        "repeat": repeat,
        "flip_rate": rate_figure(flipped, cells, "judged cells"),
        "criteria": {cid: rate_figure(int(v["flipped"]), int(v["cells"]), "judged cells") for cid, v in flip_rates.items()},
    }


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


def staleness(card: Mapping[str, Any], rubric: Rubric) -> list[str]:
    """What changed in ``rubric`` since ``card`` was written: ``tone changed``, ``judge changed``,
    ``x added``, ``y removed``; empty when the card is fresh."""
    then = card["rubric"]
    now = rubric_identity(rubric)
    if then.get("hash") == now["hash"]:
        return []
    changes: list[str] = []
    old, new = then.get("criteria") or {}, now["criteria"]
    changes += [f"{cid} changed" for cid in new if cid in old and old[cid] != new[cid]]
    changes += [f"{cid} added" for cid in new if cid not in old]
    changes += [f"{cid} removed" for cid in old if cid not in new]
    parts = then.get("parts") or {}
    changes += [f"{key} changed" for key in RUBRIC_PARTS if key in parts and parts[key] != now["parts"][key]]
    return changes or ["the rubric changed"]


def stale_message(card: Mapping[str, Any], changes: Sequence[str]) -> str:
    """``card is stale: tone changed since 2026-11-28``."""
    return f"card is stale: {', '.join(changes)} since {card.get('date', 'it was written')}"


def card_state(rubric: Rubric) -> tuple[str, str]:
    """(``fresh`` | ``stale`` | ``none`` | ``unreadable``, a short text for a status line) of the rubric's card."""
    if rubric.path is None:
        return "none", "card: none"
    try:
        card = read_card(card_path_for(rubric.path))
    except ValueError:
        return "unreadable", "card: unreadable"
    if card is None:
        return "none", "card: none"
    changes = staleness(card, rubric)
    if changes:
        return "stale", f"card: stale ({', '.join(changes)})"
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
    consistency = card["consistency"]
    if "flip_rate" in consistency:
        row(f"flip rate over {consistency['repeat']} repeats", consistency["flip_rate"], pct=True)
    row("cost per 100 samples", card["cost_per_100"], money=True)
    within = card["within_humans"]
    verdict = {True: "yes", False: "no", None: "can't tell"}[within["verdict"]]
    lines += ["", f"- judge within the humans' agreement: **{verdict}** — {within['reason']}"]
    if "flip_rate" not in consistency:
        lines.append(f"- consistency: can't tell — {consistency['cant_tell']}")
    probes = card["probes"]
    if "findings" not in probes:
        lines.append(f"- probes: can't tell — {probes['cant_tell']}")
    elif not probes["findings"]:
        lines.append(f"- probes ({', '.join(probes['kinds'])}): no finding beyond this judge's own noise")
    else:
        lines.append(f"- probe findings beyond noise ({', '.join(probes['kinds'])}):")
        for f in probes["findings"]:
            value, ci, n = _value(f["difference"], pct=True)
            lines.append(f"  - {f['kind']} · {f['criterion']}: {f['direction']}; flips above noise {value} "
                         f"(95% CI {ci}, n {n})")
    lines.extend(f"- warning: {w}" for w in card.get("warnings", []))
    return "\n".join(lines) + "\n"
