"""``rubric-studio export RUBRIC --to T [-o FILE]``: write the rubric for another eval tool.

Warnings (what the target cannot express) go to stderr as ``warning: ...``; the samples found
beside the rubric become the test cases of targets that run them (promptfoo, AgentV) unless
``--no-samples``; the exported file goes to stdout or FILE. AgentV replays the samples' outputs
from a fixtures file written beside FILE, so with stdout it gets the one example test and a note.
Exit 2 when the rubric is invalid.
"""

from __future__ import annotations

import argparse
import sys
from argparse import Namespace


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Write a rubric in another eval tool's format."
    parser.add_argument("rubric", metavar="RUBRIC")
    from rubric_studio.cli._formats import builtin_format_names, format_choice

    parser.add_argument("--to", required=True, metavar="FORMAT", type=format_choice("export"),
                        help=f"{', '.join(builtin_format_names('export'))}, or a plugin's")
    parser.add_argument("--agentv-version", choices=("4", "5"), default="5",
                        help="AgentV layout: 5 (default, the newest) or 4 (the 4.x line on npm)")
    parser.add_argument("--no-samples", action="store_true",
                        help="write one example test instead of the samples found beside the rubric")
    parser.add_argument("-o", "--output", metavar="FILE")


def _card_comment(rubric, target: str) -> str:
    """``# rubric card: hash …, κ 0.41 [0.12, 0.70] (n=13), 2026-11-28 (x.card.yaml)`` heading a promptfoo or
    AgentV YAML export when the rubric has a card that is fresh as ``validate`` reads it (the
    rubric, the judge it names, the samples and labels the card rests on); nothing otherwise."""
    if target not in ("promptfoo", "agentv") or rubric.path is None:
        return ""
    from rubric_studio.cli._card_basis import card_changes
    from rubric_studio.core.card import card_path_for, read_card

    path = card_path_for(rubric.path)
    try:
        card = read_card(path)
    except ValueError:
        return ""
    if card is None or card_changes(rubric, card):
        return ""
    kappa = card.get("kappa") or {}
    if kappa.get("value") is None or not kappa.get("ci"):
        figure = f"κ can't tell ({kappa.get('cant_tell', 'no labels')})"
    else:
        figure = f"κ {kappa['value']:.2f} [{kappa['ci'][0]:.2f}, {kappa['ci'][1]:.2f}] (n={kappa['n']})"
    line = f"rubric card: hash {card['rubric']['hash']}, {figure}, {card.get('date')} ({path.name})"
    return "# " + " ".join(line.split()) + "\n"


def run(args: Namespace) -> int:
    from rubric_studio.cli.common import echo, print_problems, write_output
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.problems import RubricError
    from rubric_studio.interop import FORMATS, ExportRefused, export_rubric

    try:
        rubric = load_rubric(args.rubric)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    try:
        options = _options(args)
        if FORMATS[args.to].samples and not args.no_samples:
            options.update(_sample_options(args))
        result = export_rubric(rubric, args.to, **options)
    except RubricError as exc:  # the samples beside the rubric are unreadable
        print_problems(exc.problems)
        return 2
    except ExportRefused as exc:
        echo(f"error: {args.rubric}: cannot export to {args.to}: {exc}", sys.stderr)
        return 2
    for warning in result.warnings:
        echo(f"warning: {warning}", sys.stderr)
    if not write_output(_card_comment(rubric, args.to) + result.text, args.output):
        return 2
    if args.output is None or args.output == "-":
        _print_catalog(result.files)
        return 0
    return 0 if _write_companions(result.files, args.output) else 2


def _options(args: Namespace) -> dict[str, object]:
    """The target's own export options given on the command line."""
    if args.to == "agentv" and getattr(args, "agentv_version", None):
        return {"agentv_version": int(args.agentv_version)}
    return {}


def _sample_options(args: Namespace) -> dict[str, object]:
    """``samples=`` (and where their companion file goes) for a target that carries them."""
    from pathlib import Path

    from rubric_studio.cli.common import echo
    from rubric_studio.core.discovery import find_samples_for
    from rubric_studio.interop import FORMATS

    info = FORMATS[args.to]
    to_stdout = args.output is None or args.output == "-"
    if info.companion_name is not None and to_stdout:
        if find_samples_for(args.rubric) is not None:
            echo("note: the samples beside the rubric go in a replay file beside the eval; give -o FILE to "
                 "export them as the tests (one example test written)", sys.stderr)
        return {}
    samples = _samples_beside(args.rubric)
    if info.companion_name is not None and samples:
        return {"samples": samples, "samples_file": info.companion_for(Path(args.output).name)}
    return {"samples": samples}


#: What each kind of companion file is, for the note that says it was written.
_COMPANION_ROLES = {".agentv/providers.yaml": "the provider catalog AgentV 5 needs to run it",
                    ".agentv/config.yaml": "names the provider catalog for AgentV 5"}


def _print_catalog(files: dict[str, str]) -> None:
    """With the export on stdout, the AgentV 5 provider catalog (which is not written) on stderr,
    saying where it goes."""
    from rubric_studio.cli.common import echo
    from rubric_studio.interop.agentv import CATALOG_FILE, CONFIG_FILE

    if CATALOG_FILE not in files:
        return
    echo(f"note: AgentV 5 runs this eval only with a provider catalog; beside the eval, write {CONFIG_FILE} as\n"
         f"{files[CONFIG_FILE]}and {CATALOG_FILE} as\n{files[CATALOG_FILE]}"
         "(or export with -o FILE to have both written)", sys.stderr)


def _write_companions(files: dict[str, str], output: str | None) -> bool:
    """Write the export's companion files beside ``output``, saying so on stderr. A project file
    that exists with other content (an ``.agentv/config.yaml`` of the user's) is left as it is,
    saying what to add."""
    from pathlib import Path

    from rubric_studio.cli.common import echo, write_output

    for name, text in files.items():
        path = Path(output or ".").parent / name
        role = _COMPANION_ROLES.get(name, "the samples' outputs, replayed as the answers")
        if name in _COMPANION_ROLES and path.is_file():
            try:
                existing = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                existing = None
            # a catalog this command wrote before is replaced; the user's own files are not
            ours = existing is not None and (existing == text or existing.startswith(text.split("\n", 1)[0] + "\n"))
            if not ours:
                echo(f"note: {path} exists and was left as it is; for AgentV 5 to run the export it needs\n"
                     f"{text}", sys.stderr)
                continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            echo(f"rubric-studio: error: cannot create {path.parent}: {exc.strerror or exc}", sys.stderr)
            return False
        if not write_output(text, str(path)):
            return False
        echo(f"note: wrote {path} ({role})", sys.stderr)
    return True


def _samples_beside(rubric_path: str) -> list | None:
    """The samples found beside the rubric (None when there are none), saying on stderr where from
    and which records were skipped (as ``grade`` does)."""
    from rubric_studio.cli.common import echo, print_problems
    from rubric_studio.core.discovery import find_samples_for, refuse_found_elsewhere
    from rubric_studio.core.samples import load_samples

    source = find_samples_for(rubric_path)
    if source is None:
        return None
    refuse_found_elsewhere(rubric_path, source, allow_code=False)  # export has no --allow-code
    samples = load_samples(source)
    print_problems(samples.problems)
    echo(f"note: {len(samples)} samples from {source} become the tests (--no-samples for one example test)",
         sys.stderr)
    return list(samples)
