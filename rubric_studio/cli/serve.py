"""``rubric-studio serve RUBRIC [SAMPLES] --annotators A,B [--lead C]``: label samples in the browser.

Starts the web labeller (:mod:`rubric_studio.web`) and prints one line per person, ``<name>: <link>``;
the link carries the person's token (``?token=…``), which the page trades for a cookie. Each sample
goes to ``--overlap`` annotators (default 2 when there are two or more); they label blind to each
other and to the judge; the lead sees everyone's labels beside the judge's verdicts (``--results``,
a ``grade --format json`` report) and adjudicates. Labels go to the rubric's sidecar through its
journal, folded into the sidecar while nobody labels and when the server stops (Ctrl-C).

Loopback only unless ``--host`` says otherwise (plain HTTP then, with a warning, unless
``--certfile``/``--keyfile`` give TLS). Tokens are new each run unless ``--tokens FILE`` keeps them
(as hashes); ``--revoke NAME`` takes a person out of that file. Exit codes: 0 stopped; 2 bad input.
See docs/reference/web-api.md.
"""

from __future__ import annotations

import argparse
import signal
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from rubric_studio.cli.common import echo, fail_usage

DEFAULT_PORT = 8765


def register(parser: argparse.ArgumentParser) -> None:
    from rubric_studio.cli.common import add_extract_option

    parser.description = ("Label samples in the browser, several people at once: prints one link per person. "
                          "Annotators label blind (no judge verdicts, nobody else's labels); the lead sees "
                          "everyone's labels beside the judge's and adjudicates.")
    parser.add_argument("rubric", metavar="RUBRIC")
    parser.add_argument("samples", metavar="SAMPLES", nargs="?", help="default: the samples beside the rubric")
    parser.add_argument("--annotators", metavar="A,B", help="the annotators' names, comma-separated (required)")
    parser.add_argument("--lead", metavar="NAME", help="the person who sees everyone's labels and adjudicates")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--overlap", type=int, metavar="K",
                        help="annotators per sample (default: 2 with two or more annotators), for their agreement")
    parser.add_argument("--tokens", metavar="FILE",
                        help="keep the people's tokens (as hashes) in FILE, so their links work in later runs")
    parser.add_argument("--revoke", metavar="NAME", help="with --tokens: remove NAME from FILE (their link stops "
                                                         "working, also in a running server) and exit")
    parser.add_argument("--results", metavar="REPORT.json",
                        help="the judge's verdicts for the lead: a rubric-studio grade --format json report")
    parser.add_argument("--certfile", metavar="FILE", help="TLS certificate (PEM), with --keyfile: serve HTTPS")
    parser.add_argument("--keyfile", metavar="FILE", help="TLS private key (PEM), with --certfile")
    add_extract_option(parser)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {port}")
    return port


def run(args: Namespace) -> int:
    if args.revoke is not None:
        return _revoke(args)
    from rubric_studio.cli.common import print_problems
    from rubric_studio.core.atomic import UnsafeTarget
    from rubric_studio.core.problems import RubricError

    people = _people(args)
    if isinstance(people, int):
        return people
    if (args.certfile is None) != (args.keyfile is None):
        return fail_usage("--certfile and --keyfile go together (the certificate and its private key)")
    for option, path in (("--certfile", args.certfile), ("--keyfile", args.keyfile)):
        if path is not None and not Path(path).is_file():
            return fail_usage(f"{option} {path}: no such file")
    try:
        session = _session(args, people)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    except ValueError as exc:
        return fail_usage(str(exc))
    except OSError as exc:  # the labels sidecar or its journal cannot be used: a planted link, permissions
        return fail_usage(f"{getattr(exc, 'filename', None) or args.rubric}: {exc.strerror or exc}"
                          if not isinstance(exc, UnsafeTarget) else str(exc))
    try:
        return _serve(args, session, people)
    except KeyboardInterrupt:  # Ctrl-C before the server took the signal over: nothing was labelled yet
        echo(f"stopped; labels are in {session.store.path}", sys.stderr)
        return 0


def _people(args: Namespace) -> list[Any] | int:
    from rubric_studio.session.labelling import check_overlap, check_people

    if not args.annotators:
        return fail_usage("--annotators is required: the annotators' names, comma-separated (e.g. --annotators alice,bob)")
    names = [name.strip() for name in args.annotators.split(",") if name.strip()]
    try:
        people = check_people(names, args.lead)
        check_overlap(args.overlap, len(names))
    except ValueError as exc:
        return fail_usage(str(exc))
    return people


def _session(args: Namespace, people: list[Any]):
    """The labelling session; RubricError / ValueError say what cannot be used."""
    from rubric_studio.cli.labels import _samples_source
    from rubric_studio.core.labels import LabelStore, labels_path_for
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.core.problems import Problem, RubricError
    from rubric_studio.session.labelling import LabellingSession

    load_rubric(args.rubric)  # the rubric's own problems first, before anything about its samples
    source = _samples_source(args.rubric, args.samples)
    if source is None:
        raise RubricError([Problem(args.rubric, None, None, "no samples to label: name them (rubric-studio serve "
                                   "RUBRIC SAMPLES) or put <name>.samples.jsonl or samples/ beside the rubric")])
    report = _report(args.results) if args.results else None
    store = LabelStore(labels_path_for(args.rubric))
    return LabellingSession(args.rubric, source, people, store=store, overlap=args.overlap, report=report,
                            extractor=args.extract)


def _report(path: str):
    from rubric_studio.core.files import read_user_file
    from rubric_studio.session.labelling import read_report

    return read_report(read_user_file(Path(path), "report", controls_ok=True), path)


def _revoke(args: Namespace) -> int:
    from rubric_studio.cli.common import print_problems
    from rubric_studio.core.problems import RubricError
    from rubric_studio.web._tokens import revoke

    if not args.tokens:
        return fail_usage("--revoke needs --tokens FILE: the file that keeps the tokens")
    try:
        removed = revoke(Path(args.tokens), args.revoke)
    except RubricError as exc:
        print_problems(exc.problems)
        return 2
    except OSError as exc:
        return fail_usage(f"{args.tokens}: not written: {exc.strerror or exc}")
    if not removed:
        return fail_usage(f"{args.tokens}: holds no token of {args.revoke!r}")
    echo(f"{args.revoke}: removed from {args.tokens}; their link and cookie no longer work")
    return 0


# -- serving -------------------------------------------------------------------------------------
def _serve(args: Namespace, session, people: list[Any]) -> int:
    import socket

    from rubric_studio.core.problems import RubricError

    try:
        listener = _listen(args.host, args.port)
    except OSError as exc:
        return fail_usage(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; give another --port")
    try:
        tokens, hashes = _tokens(args, people)
    except RubricError as exc:
        listener.close()
        return fail_usage(str(exc))
    except OSError as exc:
        listener.close()
        return fail_usage(f"{args.tokens}: not written: {exc.strerror or exc}")
    port = listener.getsockname()[1]
    base = f"{'https' if args.certfile else 'http'}://{_link_host(args.host, socket.gethostname())}:{port}"
    if not _loopback(args.host) and not args.certfile:
        echo(f"warning: listening on {args.host}: traffic (tokens, labels) is plain HTTP that anyone on the network "
             "can read; give --certfile and --keyfile to serve HTTPS", sys.stderr)
    echo(f"serving {len(session.sample_ids)} samples of {args.rubric} at {base} to "
         f"{', '.join(p.name for p in people)} (overlap {session.overlap}); Ctrl-C stops", sys.stderr)
    _say_links(args, tokens, base)
    return _run_server(args, session, people, hashes, listener, port)


def _tokens(args: Namespace, people: list[Any]):
    from rubric_studio.web._tokens import issue_tokens

    return issue_tokens([p.name for p in people], Path(args.tokens) if args.tokens else None)


def _say_links(args: Namespace, tokens: dict[str, str | None], base: str) -> None:
    from urllib.parse import quote

    for name, token in tokens.items():
        if token is None:
            echo(f"{name}: their link from an earlier run, as {base}/?token=… (the token is kept, hashed, "
                 f"in {args.tokens}; a link with another address or port needs it changed to this one)")
        else:
            echo(f"{name}: {base}/?token={quote(token, safe='')}")
    sys.stdout.flush()


def _run_server(args: Namespace, session, people: list[Any], hashes: dict[str, str], listener, port: int) -> int:
    import uvicorn

    from rubric_studio.web import Door, create_app

    door = Door({p.name: p for p in people}, hashes, tokens_file=Path(args.tokens) if args.tokens else None)
    app = create_app(session, door, cookie_name=f"rubric_studio_{port}", secure=bool(args.certfile))
    # No access log: a link's token is in its query string. A browser's open connections get 5 s to end on Ctrl-C.
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="on",
                            ssl_certfile=args.certfile, ssl_keyfile=args.keyfile, timeout_graceful_shutdown=5)
    signal.signal(signal.SIGTERM, _stop_on_terminate)  # uvicorn stops cleanly, then raises it again here
    try:
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:  # Ctrl-C (or a SIGTERM) before or after uvicorn took the signal over
        session.store.fold()
    finally:
        listener.close()
    echo(f"stopped; labels are in {session.store.path}", sys.stderr)
    return 0


def _stop_on_terminate(_signum: int, _frame: Any) -> None:
    """SIGTERM (a service manager, ``kill``) stops the server as Ctrl-C does: labels folded, exit 0."""
    raise KeyboardInterrupt


def _listen(host: str, port: int):
    """A socket bound to ``host:port`` (the port known before the links are printed)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every connection accepted: a reply's headers and body, written apart, go out at
        # once instead of the body waiting for the browser's delayed acknowledgement (40 ms a request).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind((host, port))
        listener.listen(128)
    except OSError:
        listener.close()
        raise
    listener.set_inheritable(True)
    return listener


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _link_host(host: str, machine: str) -> str:
    """The host a link names: the machine's name for a wildcard address, an IPv6 address in brackets."""
    if host in ("", "0.0.0.0", "::"):
        return machine
    return f"[{host}]" if ":" in host else host
