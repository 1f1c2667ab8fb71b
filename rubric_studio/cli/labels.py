"""``rubric-studio labels import|export|compact``: human labels in and out of spreadsheets and Label Studio.

``labels import RUBRIC FILE`` merges the labels in FILE into the rubric's sidecar in one locked
read-modify-write, per annotator (never another annotator's label); a file that does not read, or
that labels a sample the rubric's samples do not hold, is reported with file:line:col and nothing
is written. ``labels export RUBRIC [SAMPLES] --to T`` writes CSV / JSON Lines (stdout or ``-o FILE``)
or, for Label Studio, a labeling config and a tasks file into ``-o DIR`` (the labels as annotations,
``--predictions REPORT`` adding a grading report's verdicts as predictions). Samples are found and
guarded as ``grade`` finds them (:func:`_samples_source`); see docs/how-to/labels-import-export.md.
``labels compact RUBRIC`` folds the labels journal (labels written by the studio and the web
labeller, one line each) into the sidecar, so the sidecar alone holds every label (before a commit).
"""

from __future__ import annotations

import argparse
import os
import sys
from argparse import Namespace
from pathlib import Path

TOKEN_ENV = "LABEL_STUDIO_API_KEY"
SOURCES = ("auto", "csv", "jsonl", "label-studio")


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = "Import and export human labels (CSV, JSON Lines, Label Studio)."
    actions = parser.add_subparsers(dest="action", required=True, metavar="import|export|compact")
    compact = actions.add_parser(
        "compact", help="fold the labels written since into the labels sidecar (do it before a commit)",
        description="Fold the labels journal (labels written by the studio and the web labeller) into the "
                    "rubric's labels sidecar, comments kept; the sidecar then holds every label.")
    compact.add_argument("rubric", metavar="RUBRIC")
    compact.add_argument("--labels", metavar="SIDECAR", help="the labels file (default: <rubric>.labels.yaml)")
    imp = actions.add_parser("import", help="merge labels from a file into the rubric's labels sidecar",
                             description="Merge labels from FILE into the rubric's labels sidecar, per annotator.")
    imp.add_argument("rubric", metavar="RUBRIC")
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--from", dest="source", choices=SOURCES, default="auto",
                     help="FILE's format (auto: by its suffix: .csv, .jsonl, .json = a Label Studio export)")
    imp.add_argument("--annotator", metavar="NAME",
                     help="the annotator of rows without one (default: $RUBRIC_STUDIO_ANNOTATOR, else your user name)")
    imp.add_argument("--labels", metavar="SIDECAR", help="the labels file (default: <rubric>.labels.yaml)")
    imp.add_argument("--samples", metavar="SAMPLES",
                     help="the samples the labels belong to (default: those beside the rubric); a label of "
                          "any other sample id is refused")
    imp.add_argument("--users", metavar="FILE",
                     help="Label Studio: user id -> e-mail, as JSON ({\"1\": \"a@x.org\"} or the /api/users reply)")
    imp.add_argument("--label-studio-url", metavar="URL", type=_server_url,
                     help=f"Label Studio: read user e-mails from this http(s) server (token from ${TOKEN_ENV}; "
                          "sent to no other server, even when redirected)")
    exp = actions.add_parser("export", help="write the labels as CSV / JSON Lines, or a Label Studio project",
                             description="Write the rubric's labels for a spreadsheet or Label Studio.")
    exp.add_argument("rubric", metavar="RUBRIC")
    exp.add_argument("samples", metavar="SAMPLES", nargs="?",
                     help="the samples (default: those beside the rubric); unlabelled ones get an empty row")
    exp.add_argument("--to", required=True, choices=("csv", "jsonl", "label-studio"))
    exp.add_argument("--labels", metavar="SIDECAR", help="the labels file (default: <rubric>.labels.yaml)")
    exp.add_argument("-o", "--output", metavar="FILE|DIR",
                     help="the file to write (default: stdout); for label-studio, the folder to write into")
    exp.add_argument("--predictions", metavar="REPORT.json",
                     help="label-studio: add the judge's verdicts in this report (rubric-studio grade --format json) "
                          "to the tasks as predictions, shown as pre-annotations")


def _server_url(text: str) -> str:
    """``--label-studio-url``: an http or https URL without control characters (else a usage error)."""
    from rubric_studio.interop.labels import check_server_url

    try:
        return check_server_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: Namespace) -> int:
    from rubric_studio.cli.common import print_problems

    if args.action == "compact":  # needs the sidecar only: a rubric being fixed does not stop it
        return _compact(args)
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.problems import RubricError

    try:
        rubric = load_rubric(args.rubric)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    try:
        return _import(args, rubric) if args.action == "import" else _export(args, rubric)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2


def _sidecar(args: Namespace) -> Path:
    from rubric_studio.core.labels import labels_path_for

    return Path(args.labels) if args.labels else labels_path_for(args.rubric)


# -- compact ----------------------------------------------------------------------------------
def _compact(args: Namespace) -> int:
    from rubric_studio.cli.common import echo, fail_usage, print_problems
    from rubric_studio.core.labels import fold_journal_counts, journal_path
    from rubric_studio.core.problems import RubricError

    target = _sidecar(args)
    try:
        folded, superseded = fold_journal_counts(target)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    except (ValueError, OSError) as exc:
        return fail_usage(f"{target}: labels not folded: {getattr(exc, 'strerror', None) or exc}")
    if not folded:
        echo(f"nothing to fold: {target} holds every label", sys.stderr)
        return 0
    echo(f"{folded} label change{'s' if folded != 1 else ''} folded into {target}", sys.stderr)
    if superseded:
        kept = journal_path(target).with_name(f"{target.name}.superseded")
        echo(f"warning: {superseded} of them had been changed in {target} by hand (or a git pull) since; "
             f"the file's version was kept, the label changes it replaced are in {kept}", sys.stderr)
    return 0


# -- import -----------------------------------------------------------------------------------
def _import(args: Namespace, rubric) -> int:
    from rubric_studio.cli.common import echo, fail_usage
    from rubric_studio.core.files import read_user_file
    from rubric_studio.core.labels import apply_changes, current_annotator
    from rubric_studio.interop.labels import read_export, read_table

    source = Path(args.file)
    if source.is_dir() or not (source.exists() or source.is_symlink()):
        return fail_usage(f"{args.file}: cannot import labels: {'a folder' if source.is_dir() else 'no such file'}")
    fmt = _source_format(args.source, source)
    if fmt is None:
        return fail_usage(f"{args.file}: cannot tell its format from the suffix; give --from csv|jsonl|label-studio")
    try:
        default = current_annotator(args.annotator)
    except ValueError as exc:
        return fail_usage(f"--annotator: {exc}")
    known = _known_samples(args)
    text = read_user_file(source, "labels", keep_newlines=fmt == "csv")  # a CSV note keeps its CR
    if fmt == "label-studio":
        users = _users(args)
        if users is None:
            return 2
        found = read_export(text, str(source), rubric, users, known)
    else:
        found = read_table(text, str(source), rubric, fmt, default, known)
    for warning in found.warnings:
        echo(f"warning: {args.file}: {warning}", sys.stderr)
    target = _sidecar(args)
    try:
        changed = apply_changes(target, found.changes)
    except (ValueError, OSError) as exc:
        return fail_usage(f"{target}: labels not written: {getattr(exc, 'strerror', None) or exc}")
    people = found.annotators
    echo(f"{len(found.labels)} labels by {len(people)} annotator{'s' if len(people) != 1 else ''} "
         f"({', '.join(people) or 'none'}) read from {args.file}; {changed} changed in {target}"
         + "".join(f"; {remark}" for remark in found.remarks), sys.stderr)
    return 0


def _source_format(given: str, path: Path) -> str | None:
    if given != "auto":
        return given
    return {".csv": "csv", ".jsonl": "jsonl", ".json": "label-studio"}.get(path.suffix.lower())


def _known_samples(args: Namespace):
    """The ids labels may name (the samples of ``--samples``, else those beside the rubric), None
    when there are no samples to check against."""
    from rubric_studio.core.samples import load_samples
    from rubric_studio.interop.labels import SampleIds

    source = _samples_source(args.rubric, args.samples)
    if source is None:
        return None
    loaded = load_samples(source)
    return SampleIds(str(source), frozenset(s.id for s in loaded), len(loaded.problems))


def _samples_source(rubric_path: str, named: str | None) -> Path | None:
    """The samples of a rubric, guarded as ``grade`` guards them: named ones are read (with a warning
    when they are a link into a hidden or credentials folder), found ones only when they really are in
    the rubric's folder (:func:`rubric_studio.core.discovery.refuse_found_elsewhere` raises otherwise)."""
    from rubric_studio.cli.common import echo
    from rubric_studio.core.discovery import find_samples_for, named_link_warning, refuse_found_elsewhere

    if named:
        if (link := named_link_warning(named)) is not None:
            echo(f"warning: {link}", sys.stderr)
        return Path(named)
    found = find_samples_for(rubric_path)
    if found is not None:  # labels has no --allow-code: naming the samples is the way to take them
        refuse_found_elsewhere(rubric_path, found, allow_code=False)
    return found


def _users(args: Namespace) -> dict[str, str] | None:
    """Label Studio user id -> e-mail: from ``--users``, then the server's; None after saying what failed
    (never showing the token)."""
    from rubric_studio.cli.common import fail_usage
    from rubric_studio.core.files import read_user_file
    from rubric_studio.interop.labels import read_users

    users: dict[str, str] = {}
    if args.label_studio_url:
        from rubric_studio.interop.labels import ServerError, server_users  # urllib, ssl: this path only

        token = os.environ.get(TOKEN_ENV, "").strip()
        problem = _token_problem(token)
        if problem is not None:
            fail_usage(problem)
            return None
        try:
            users.update(server_users(args.label_studio_url, token))
        except (ServerError, ValueError) as exc:
            fail_usage(f"cannot read the users from Label Studio: {exc}")
            return None
    if args.users:
        users.update(read_users(read_user_file(Path(args.users), "users"), args.users))
    return users


def _token_problem(token: str) -> str | None:
    """What is wrong with the token in $LABEL_STUDIO_API_KEY (never the token itself), or None."""
    from rubric_studio.interop.labels import check_token

    if not token:
        return f"--label-studio-url needs an access token in ${TOKEN_ENV}"
    try:
        check_token(token)
    except ValueError as exc:
        return f"${TOKEN_ENV} {exc}"
    return None


# -- export -----------------------------------------------------------------------------------
def _export(args: Namespace, rubric) -> int:
    from rubric_studio.cli.common import fail_usage, print_problems, write_output
    from rubric_studio.core.labels import load_labels
    from rubric_studio.interop.labels import export_table

    if args.predictions and args.to != "label-studio":
        return fail_usage("--predictions adds a report's verdicts to a Label Studio project; "
                          "use it with --to label-studio")
    samples = _samples(args)
    sidecar = load_labels(_sidecar(args), missing_ok=args.labels is None)
    if sidecar.problems:
        print_problems(sidecar.problems)
        return 2
    _warn_unknown_criteria(rubric, sidecar.by_annotator)
    if args.to == "label-studio":
        return _export_label_studio(args, rubric, samples, sidecar.by_annotator)
    ids = [s.id for s in samples] if samples else None
    text = export_table(rubric, sidecar.by_annotator, args.to, ids)
    if args.output and Path(args.output).is_dir():
        return fail_usage(f"{args.output}: a folder; give a file name to write the {args.to} to")
    return 0 if write_output(text, args.output) else 2


def _warn_unknown_criteria(rubric, by_sample) -> None:
    from rubric_studio.cli.common import echo

    known = {c.key for c in rubric.criteria}
    left = sorted({c for labels in by_sample.values() for lab in labels.values() for c in lab.criteria} - known)
    if left:
        echo(f"warning: labels of criteria not in the rubric are not exported: {', '.join(left)}", sys.stderr)


def _samples(args: Namespace) -> list:
    from rubric_studio.cli.common import print_problems
    from rubric_studio.core.samples import load_samples

    source = _samples_source(args.rubric, args.samples)
    if source is None:
        return []
    loaded = load_samples(source)
    print_problems(loaded.problems)
    return list(loaded)


def _export_label_studio(args: Namespace, rubric, samples: list, labels) -> int:
    """The labeling config and the tasks (with ``labels`` as annotations and, with ``--predictions``, the
    report's verdicts) into ``-o DIR``; a report that cannot be read is exit 2 before anything is written."""
    from rubric_studio.cli.common import echo, fail_usage, write_output
    from rubric_studio.interop.labels import labeling_config, tasks_file

    if not args.output:
        return fail_usage("--to label-studio writes two files: give -o DIR")
    if not samples:
        return fail_usage(f"{args.rubric}: no samples to label; give SAMPLES")
    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        return fail_usage(f"{args.output}: not a folder")
    report = _grade_report(args.predictions) if args.predictions else None
    made = tasks_file(rubric, samples, labels, report)
    for warning in made.warnings:
        echo(f"warning: {warning}", sys.stderr)
    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(args.rubric).stem
    config, task_file = folder / f"{stem}.label-studio.xml", folder / f"{stem}.tasks.json"
    ground_truth = any(s.ground_truth for s in samples)
    if not (write_output(labeling_config(rubric, ground_truth), str(config))
            and write_output(made.text, str(task_file))):
        return 2
    carried = (f", {made.annotations} annotation{'s' if made.annotations != 1 else ''} by "
               f"{', '.join(made.annotators)}" if made.annotations else "")
    predicted = (f", {made.predictions} with predictions of {report.model or 'the report'}"
                 if report is not None else "")
    echo(f"wrote {config} (the labeling config) and {task_file} ({len(samples)} tasks{carried}{predicted})",
         sys.stderr)
    return 0


def _grade_report(path: str):
    """The ``--predictions`` report; RubricError (exit 2, nothing written) when it cannot be read as one."""
    from rubric_studio.core.files import read_user_file
    from rubric_studio.interop.labels import REPORT_MAX_BYTES, read_grade_report

    text = read_user_file(Path(path), "report", controls_ok=True, max_bytes=REPORT_MAX_BYTES)
    return read_grade_report(text, path)
