"""``rubric-studio draft``: an LLM proposes criteria from a task description and sample outputs.

The proposals are listed on stderr, numbered; the user keeps some (a prompt when stdin is a
terminal, ``--pick 1,3`` or ``--yes`` otherwise; with neither and no terminal, all are kept and
stderr says so). The kept criteria become a normal rubric — printed as YAML, or written with
``-o`` atomically, never over an existing file without ``--force``. ``--format json`` prints one
object (proposals, dropped, kept ids, usage, the rubric text) for scripts.

Exit codes: 0 written or printed; 1 nothing kept; 2 bad input or no model configured;
3 the model gave no usable reply (its error is printed, never a traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from rubric_studio.cli.common import add_extract_option, echo, fail_usage, print_problems

DEFAULT_NAME = "drafted-rubric"


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Draft criteria with an LLM from a task description and sample outputs; keep the ones you pick."
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="sample outputs to learn from (at most 8 are shown)")
    parser.add_argument("--task", required=True, help="what the outputs are for (becomes the rubric's description)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the rubric to FILE (default: print the YAML)")
    parser.add_argument("--force", action="store_true", help="replace FILE when it exists")
    parser.add_argument("--name", help="rubric name (default: FILE's stem)")
    parser.add_argument("--model", "--judge", dest="model", metavar="P:M",
                        help="the model that drafts, as provider:model (default: your judge); --judge is the same")
    parser.add_argument("--base-url", metavar="URL", help="endpoint of an OpenAI- or Anthropic-compatible server")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="seconds to wait for the model's reply (default: judge.timeout of your settings, 60)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("-y", "--yes", action="store_true", help="keep every valid proposal without asking")
    choice.add_argument("--pick", metavar="N,N", help="keep these proposals by number (1,3,4 or 2-5)")
    parser.add_argument("--format", choices=("yaml", "json"), default="yaml",
                        help="json: print the proposals, what was dropped and kept, and the rubric as one object")
    parser.add_argument("--labels", metavar="FILE", help="labels to show the model (default: FILE's <stem>.labels.yaml)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the reply cache")
    parser.add_argument("--cache-path", metavar="FILE", help="SQLite cache file (default: in the user cache folder)")
    add_extract_option(parser)


def parse_pick(text: str, count: int | None = None) -> list[int]:
    """``"1,3,4"`` or ``"2-4"`` as 1-based numbers in the order given (ValueError says what is wrong)."""
    numbers: list[int] = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        low, sep, high = part.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ValueError(f"{part!r} is not a number or a range like 2-4")
        span = range(int(low), int(high) + 1) if sep else [int(low)]
        for number in span:
            if number < 1 or (count is not None and number > count):
                raise ValueError(f"there is no proposal {number} (numbers run from 1 to {count})")
            if number not in numbers:
                numbers.append(number)
    if not numbers:
        raise ValueError("no proposal numbers given")
    return numbers


def run(args: Namespace) -> int:
    output = Path(args.output) if args.output and args.output != "-" else None
    problem = _check_args(args, output)
    if problem:
        return fail_usage(problem)
    loaded = _load_inputs(args, output)
    if isinstance(loaded, int):
        return loaded
    samples, labels = loaded
    outcome = _ask(args, samples, labels)
    if isinstance(outcome, int):
        return outcome
    draft, usage = outcome
    _list_proposals(draft)
    chosen = _choose(args, draft)
    if isinstance(chosen, int):
        return chosen
    name = args.name or (output.stem if output is not None else DEFAULT_NAME)
    return _write(args, output, name, draft, chosen, usage)


def _check_args(args: Namespace, output: Path | None) -> str | None:
    """What is wrong with the command line, checked before the model is asked anything."""
    if not args.task or not args.task.strip():
        return "--task is empty; describe what the outputs are for"
    if args.timeout is not None and not 0 < args.timeout <= 604800:
        return "--timeout must be a number of seconds above 0 (at most 604800)"
    if args.name is not None and not args.name.strip():
        return "--name is empty"
    if args.pick is not None:
        try:
            parse_pick(args.pick)
        except ValueError as exc:
            return f"--pick: {exc}"
    if args.samples is not None and not Path(args.samples).exists():
        return f"{args.samples}: samples not found: no such file or folder"
    if output is not None:
        if output.is_dir():
            return f"{output}: is a folder; -o takes the rubric file to write"
        if output.exists() and not args.force:
            return f"{output} exists; pass --force to replace it (nothing was asked of the model)"
    return None


def _load_inputs(args: Namespace, output: Path | None) -> tuple[list, dict] | int:
    """(samples, labels); problems in either are warnings (drafting needs neither), an unreadable file exits 2."""
    from rubric_studio.core.labels import labels_from_samples
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.samples import load_samples

    if args.samples is None:
        return [], {}
    try:
        sample_set = load_samples(args.samples, extractor=args.extract)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    print_problems(sample_set.problems)
    samples = sample_set.samples
    if args.labels is None and output is None:
        return samples, labels_from_samples(samples)
    from rubric_studio.cli.calibrate import load_all_labels

    try:
        labels, problems = load_all_labels(str(output or args.labels), args.labels, samples)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    print_problems(problems)
    return samples, labels


def _ask(args: Namespace, samples: list, labels: dict) -> tuple[Any, Any] | int:
    """The draft and the usage, or an exit code (2: no model configured, 3: no usable reply)."""
    from rubric_studio.engine.assistant import make_assistant
    from rubric_studio.engine.draft import draft_criteria
    from rubric_studio.judges.base import JudgeError

    try:
        assistant = make_assistant(None, model=args.model, base_url=args.base_url, cache_path=args.cache_path,
                                   use_cache=not args.no_cache, timeout=args.timeout)
    except JudgeError as exc:
        return fail_usage(exc.message)

    async def ask() -> Any:
        try:
            return await draft_criteria(assistant, args.task, samples, labels)
        finally:
            await assistant.aclose()

    try:
        draft = asyncio.run(ask())
    except JudgeError as exc:
        from rubric_studio.judges.sdk_errors import TIMEOUT_HINT

        # draft has no rubric: the wait is its --timeout (default: judge.timeout of the user settings)
        message = exc.message.replace(TIMEOUT_HINT, "give a larger --timeout (seconds) to wait longer")
        echo(f"rubric-studio: error: drafting with {assistant.label} failed: {message}", sys.stderr)
        return 2 if exc.kind == "config" else 3
    return draft, assistant.usage


def _criteria(count: int) -> str:
    return f"{count} criterion" if count == 1 else f"{count} criteria"


def _list_proposals(draft: Any) -> None:
    """The numbered proposals and the dropped ones, on stderr (stdout stays the rubric)."""
    from rubric_studio.engine.draft import MIN_CRITERIA

    count = len(draft.proposals)
    few = f" (fewer than the {MIN_CRITERIA} asked for were valid)" if count < MIN_CRITERIA else ""
    echo(f"{_criteria(count)} proposed by {draft.model}{few}:", sys.stderr)
    for number, proposal in enumerate(draft.proposals, 1):
        flags = f"weight {proposal.data['weight']:g}" + (", required" if proposal.criterion.required else "")
        echo(f"{number:>3}. {proposal.id} [{proposal.kind_text()}, {flags}] {proposal.criterion.summary()}", sys.stderr)
        if proposal.why:
            echo(f"       why: {proposal.why}", sys.stderr)
        if proposal.renamed_from:
            echo(f"       (id {proposal.renamed_from!r} was taken by an earlier proposal)", sys.stderr)
    for dropped in draft.dropped:
        echo(f"dropped proposal #{dropped.number}{f' ({dropped.id})' if dropped.id else ''}: {dropped.reason}", sys.stderr)


def _choose(args: Namespace, draft: Any) -> list[Any] | int:
    """The proposals to keep, in their order, or an exit code."""
    count = len(draft.proposals)
    if args.yes:
        return list(draft.proposals)
    if args.pick is not None:
        try:
            numbers = parse_pick(args.pick, count)
        except ValueError as exc:
            return fail_usage(f"--pick: {exc}")
        return [draft.proposals[n - 1] for n in sorted(numbers)]
    if not sys.stdin.isatty():
        echo(f"stdin is not a terminal: keeping all {count} proposals (choose with --pick 1,3 or confirm with --yes)",
             sys.stderr)
        return list(draft.proposals)
    for _ in range(3):
        sys.stderr.write(f"Keep which? (e.g. 1,3,4 or 2-5; enter: all {count}; n: none) ")
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        if answer in ("", "a", "all", "y", "yes"):
            return list(draft.proposals)
        if answer in ("n", "none", "q"):
            echo("nothing kept; nothing written", sys.stderr)
            return 1
        try:
            return [draft.proposals[n - 1] for n in sorted(parse_pick(answer, count))]
        except ValueError as exc:
            echo(str(exc), sys.stderr)
    return fail_usage("no valid choice of proposals")


def rubric_text(name: str, task: str, proposals: list, samples_used: int) -> str:
    """A new rubric's text: name, description (the task), pass_threshold 0.8 and the drafted criteria."""
    from rubric_studio.core.document import RubricDocument
    from rubric_studio.engine.draft import append_drafted

    document = RubricDocument.from_text("name: draft\npass_threshold: 0.8\ncriteria: []\n", f"{name}.yaml")
    document.set_rubric_field("name", name)  # the document quotes what YAML 1.1 would misread
    document.set_rubric_field("description", task.strip())
    append_drafted(document, proposals, samples_used)
    return document.text


def _write(args: Namespace, output: Path | None, name: str, draft: Any, chosen: list, usage: Any) -> int:
    from rubric_studio.core.atomic import ABSENT, write_text_safely
    from rubric_studio.core.loading import parse_rubric
    from rubric_studio.core.problems import RubricError

    if not any(p.criterion.weight > 0 for p in chosen):
        return fail_usage("keep at least one criterion with a positive weight (penalties alone cannot score)")
    text = rubric_text(name.strip(), draft.task, chosen, draft.samples_used)
    try:
        parse_rubric(text, str(output or "<draft>"))
    except RubricError as exc:  # a safety net: every criterion was validated on its own
        print_problems(exc.problems)
        return 2
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            write_text_safely(output, text, expect=None if args.force else ABSENT)
        except OSError as exc:
            return fail_usage(f"cannot write {output}: {getattr(exc, 'strerror', None) or exc}")
    if args.format == "json":
        from rubric_studio.core.safe_text import json_safe

        report = _json_report(draft, chosen, output, text, usage)
        sys.stdout.write(json_safe(json.dumps(report, indent=2, ensure_ascii=False)) + "\n")
    elif output is None:
        sys.stdout.write(text)
    if output is not None:
        echo(f"wrote {output}: {_criteria(len(chosen))}", sys.stderr)
    cost = f", {usage.cost_text()}" if usage.requests else ""
    echo(f"model calls: {usage.requests} (cache hits: {usage.cache_hits}){cost}", sys.stderr)
    return 0


def _json_report(draft: Any, chosen: list, output: Path | None, text: str, usage: Any) -> dict[str, Any]:
    kept = {id(p) for p in chosen}
    return {
        "model": draft.model,
        "task": draft.task,
        "samples_used": draft.samples_used,
        "labelled_used": draft.labelled_used,
        "proposals": [
            {"number": n, "id": p.id, "kept": id(p) in kept, "kind": p.criterion.kind,
             "criterion": p.criterion.model_dump(mode="json", by_alias=True, exclude_defaults=True),
             "why": p.why, "renamed_from": p.renamed_from}
            for n, p in enumerate(draft.proposals, 1)
        ],
        "dropped": [{"number": d.number, "id": d.id, "reason": d.reason} for d in draft.dropped],
        "output": str(output) if output is not None else None,
        "rubric": text,
        "usage": usage.to_dict(),
    }
