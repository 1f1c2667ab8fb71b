"""``rubric-studio validate RUBRIC...``: every problem with file:line:column; exit 2 if any error.

Settings that act only once the rubric is trusted (code checks, a judge base URL or provider
the user did not choose, a prompt file outside the rubric's folder; see
:mod:`rubric_studio.core.trust`) are listed as warnings at their key: they do not change the
exit code. A prompt file outside the folder is read only when the user trusts it. A value the
judge it is sent to is known to refuse (``reasoning_effort: minimal`` for a GPT-6 model:
:func:`rubric_studio.judges.capabilities.refused_setting`) is a warning at that value, too.

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


def _judges_named(rubric) -> list[tuple[str, str | None, str | None, tuple]]:
    """(``provider:model``, reasoning effort, base URL, where the effort is written) of each judge
    the rubric names with an effort set: its model, or each panel member (whose own effort, or the
    ``judge:`` block's it inherits)."""
    from rubric_studio.engine.panel import member_settings

    settings = rubric.judge
    if settings is None:
        return []
    if not settings.panel:
        named = [(settings.model, settings.reasoning_effort, settings.base_url, ("judge", "reasoning_effort"))]
    else:
        named = []
        for index, member in enumerate(settings.panel):
            own = "reasoning_effort" in member.model_fields_set
            try:
                merged = member_settings(settings, member)
            except ValueError:  # settings that do not merge: the run says why
                continue
            named.append((merged.model, merged.reasoning_effort, merged.base_url,
                          ("judge", "panel", index, "reasoning_effort") if own else ("judge", "reasoning_effort")))
    return [entry for entry in named if entry[0] and entry[1] is not None]


def _refused_review(rubric) -> list:
    """A warning at each ``reasoning_effort`` the judge it is sent to is known to refuse (the
    judge's endpoint as the rubric names it: the provider's own, or an alias's default)."""
    from types import SimpleNamespace

    from rubric_studio.core.providers import find
    from rubric_studio.core.yamlpos import load_with_positions

    named = _judges_named(rubric)
    if not named or rubric._source_text is None:
        return []
    from rubric_studio.judges.capabilities import refused_setting  # only for a rubric that sets an effort

    _, positions, _ = load_with_positions(rubric._source_text, str(rubric.path))
    problems = []
    for model_text, effort, base_url, where in named:
        written, _, model = model_text.partition(":")
        found = find(written.strip())
        if found is None or not model.strip():
            continue
        provider, alias = found
        base_url = base_url or (alias.default_base_url if alias is not None else None)
        if alias is not None and base_url is None:  # an endpoint the rubric does not name: unknown
            continue
        config = SimpleNamespace(provider=provider.name, model=model.strip(), base_url=base_url, temperature=0.0,
                                 reasoning_effort=effort, max_tokens=1024, structured_output=None, label=model_text)
        try:
            why = refused_setting(config, "reasoning_effort")
        except (ValueError, ImportError, AttributeError, TypeError):  # a plugin's table that cannot say
            continue
        if why is not None:
            problems.append(positions.problem(where, f"{'.'.join(map(str, where))}: {why}", severity="warning"))
    return problems


def _card_review(rubric) -> tuple[str, list]:
    """(the card's state, problems to add: a warning when it is stale, an error at its line and column
    when it cannot be read as a card)."""
    from rubric_studio.cli._card_basis import card_changes
    from rubric_studio.core.card import CardUnreadable, card_path_for, read_card, stale_message
    from rubric_studio.core.problems import Problem

    path = card_path_for(rubric.path)
    try:
        card = read_card(path)
    except CardUnreadable as exc:
        return "unreadable", [exc.problem]
    if card is None:
        return "none", []
    changes = card_changes(rubric, card)
    if not changes:
        return "fresh", []
    message = f"{stale_message(card, changes)}; refresh it with rubric-studio card {rubric.path}"
    return "stale", [Problem(str(path), None, None, message, "warning")]


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
            more += _refused_review(rubric)
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
