"""``rubric-studio validate RUBRIC...``: every problem with file:line:column; exit 2 if any error.

Settings that act only once the rubric is trusted (code checks, a judge base URL or provider
the user did not choose, a prompt file outside the rubric's folder; see
:mod:`rubric_studio.core.trust`) are listed as warnings at their key: they do not change the
exit code. A prompt file outside the folder is read only when the user trusts it.

A rubric with a card beside it (``<stem>.card.yaml``, ``rubric-studio card``) is compared with it:
when the rubric, the judge it names, or the samples and labels the card rests on changed since, a
warning names what changed ("card is stale: tone changed; labels changed since the card: 12 → 15
labelled (card of 2026-11-28)"). The samples and labels are read again from the files the card
names (inside the rubric's folder; others are not compared). A setting that cannot move a verdict
(``timeout``, ``concurrency``, tags ...) never makes it stale. A card that cannot be read as one
(not YAML, nested or sized past the bounded reader's limits, not shaped as a card) is an error at
its line and column: exit 2. The JSON entry's ``card`` is ``fresh``, ``stale``, ``none`` or
``unreadable``.
"""

from __future__ import annotations

import argparse
import json
import sys
from argparse import Namespace
from pathlib import Path


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Check rubric files; print every problem with file:line:column."
    parser.add_argument("rubrics", metavar="RUBRIC", nargs="+")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _trust_review(rubric) -> tuple[list, list]:
    """(untrusted gates, problems to add: a warning per untrusted setting)."""
    from rubric_studio.core.loading import trust_problems
    from rubric_studio.core.trust import effective_trust, rubric_gates, untrusted, user_choices

    gates = rubric_gates(rubric, user_choices())
    blocked = untrusted(gates, effective_trust(rubric))
    return blocked, trust_problems(rubric, blocked, [gate for gate in gates if gate not in blocked])


def _card_review(rubric) -> tuple[str, list]:
    """(the card's state, problems to add: a warning when it is stale, an error at its line and column
    when it cannot be read as a card)."""
    from rubric_studio.core.card import CardUnreadable, card_path_for, read_card, stale_message, staleness
    from rubric_studio.core.problems import Problem

    path = card_path_for(rubric.path)
    try:
        card = read_card(path)
    except CardUnreadable as exc:
        return "unreadable", [exc.problem]
    if card is None:
        return "none", []
    changes = staleness(card, rubric, _rests_on_now(rubric, card))
    if not changes:
        return "fresh", []
    message = f"{stale_message(card, changes)}; refresh it with rubric-studio card {rubric.path}"
    return "stale", [Problem(str(path), None, None, message, "warning")]


def _rests_on_now(rubric, card: dict) -> dict:
    """The samples and labels the card rests on, as they are now: read from the files it names
    (those beside the rubric when it names none), each ``{n, hash}`` or ``{cant_read: why}``.
    A file outside the rubric's folder (or in a hidden or credentials folder below it) is not read."""
    from rubric_studio.core.card import samples_basis
    from rubric_studio.core.discovery import find_samples_for
    from rubric_studio.core.labels import labels_path_for
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.samples import load_samples

    rests = card.get("rests_on") if isinstance(card.get("rests_on"), dict) else {}
    then_samples, then_labels = (rests.get(key) if isinstance(rests.get(key), dict) else None
                                 for key in ("samples", "labels"))
    if then_samples is None and then_labels is None:
        return {}
    then_samples, then_labels = then_samples or {}, then_labels or {}
    samples_path = _inside(rubric, then_samples, find_samples_for(rubric.path))
    if samples_path is None:
        return {}
    named = then_samples.get("path") or samples_path.name
    if not samples_path.exists():
        return {"samples": {"cant_read": f"{named} is gone"}}
    extract = then_samples.get("extract") if then_samples.get("extract") in _EXTRACTORS else "last_assistant"
    try:
        samples = load_samples(samples_path, extractor=extract).samples
    except (RubricError, OSError, ValueError):
        return {"samples": {"cant_read": f"{named} cannot be read (grade it to see why)"}}
    now: dict = {"samples": samples_basis(samples)} if then_samples else {}
    labels_path = _inside(rubric, then_labels, labels_path_for(rubric.path))
    if labels_path is not None:
        now["labels"] = _labels_now(rubric, labels_path, then_labels.get("path") or labels_path.name, samples)
    return now


def _inside(rubric, entry: dict, default: Path | None) -> Path | None:
    """The file a card's ``rests_on`` entry names (``default`` when it names none), or None when it
    is not inside the rubric's folder (nor in a hidden or credentials folder below it)."""
    from rubric_studio.core.card import recorded_path
    from rubric_studio.core.folders import outside_reason

    text = entry.get("path")
    path = recorded_path(text, rubric.path) if isinstance(text, str) and text else default
    try:
        folder = Path(rubric.path).resolve().parent
        return None if path is None or outside_reason(path.resolve(), folder) is not None else path
    except (OSError, ValueError):  # a path no file can have (a NUL in a hand-edited card)
        return None


def _labels_now(rubric, labels_path: Path, named: str, samples: list) -> dict:
    """``{n, hash}`` of the labels as ``card`` reads them (the samples' own labels overlaid by the
    sidecar's consensus), or ``{cant_read: why}``."""
    from rubric_studio.cli.calibrate import read_labels
    from rubric_studio.core.card import labels_basis
    from rubric_studio.core.labels import labels_from_samples
    from rubric_studio.core.problems import RubricError

    try:
        if labels_path.exists():
            labels, problems, _ = read_labels(str(rubric.path), str(labels_path), samples)
        else:  # a sidecar that is gone leaves the labels the samples carry
            labels, problems = labels_from_samples(samples), []
    except (RubricError, OSError, ValueError):
        return {"cant_read": f"{named} cannot be read"}
    if not labels and any(p.severity == "error" for p in problems):
        return {"cant_read": f"{named} cannot be read"}
    return labels_basis(labels, [s.id for s in samples])


_EXTRACTORS = ("last_assistant", "all_assistant", "transcript")


def run(args: Namespace) -> int:
    from rubric_studio.cli.common import echo, print_problems
    from rubric_studio.core.loading import check_rubric_file

    report = []
    any_error = False
    for path in args.rubrics:
        rubric, problems = check_rubric_file(path)
        blocked: list = []
        if rubric is not None:
            blocked, more = _trust_review(rubric)
            card_state, stale = _card_review(rubric)
            problems = [*sorted([*problems, *more], key=lambda p: (p.line or 0, p.column or 0)), *stale]
        errors = [p for p in problems if p.severity == "error"]
        any_error = any_error or bool(errors) or rubric is None
        entry: dict = {"path": path, "valid": rubric is not None and not errors,
                       "problems": [p.to_dict() for p in problems]}
        if rubric is not None:
            entry.update(
                name=rubric.name,
                criteria=len(rubric.criteria),
                judge_criteria=len(rubric.judge_criteria),
                checks=len(rubric.check_criteria),
                code_checks=[
                    {"id": c.key, "type": c.check.type, "runs": c.check.function if c.check.type == "python" else c.check.command}  # type: ignore[union-attr]
                    for c in rubric.code_criteria
                ],
                untrusted=[{"setting": gate.setting, "value": gate.value} for gate in blocked],
                card=card_state,
            )
        report.append(entry)
        if args.format == "text":
            print_problems(problems)
            if rubric is not None and not errors:
                echo(
                    f"{path}: ok — {rubric.name}: {len(rubric.criteria)} criteria "
                    f"({len(rubric.judge_criteria)} judged, {len(rubric.check_criteria)} checks)"
                )
                trusted = not any(gate.setting.startswith("check.") for gate in blocked)
                for code in entry["code_checks"]:
                    when = "trusted" if trusted else "only once trusted (--allow-code)"
                    echo(f"  runs code: {code['id']} ({code['type']}: {code['runs']}) — {when}")
    if args.format == "json":
        sys.stdout.write(json.dumps({"files": report, "valid": not any_error}, indent=2) + "\n")
    return 2 if any_error else 0
