"""The shell commands the README and the documentation show, read from their Markdown source.

The convention (written up for authors in ``docs/contributing-docs.md``):

* A fenced block whose language is ``console`` holds commands after a ``$ `` prompt; the lines
  without a prompt are the output shown to the reader (not compared unless pinned).
* A fenced block whose language is ``sh``, ``bash`` or ``shell`` holds one command per line
  (a trailing ``\\`` continues it; blank lines and ``# comment`` lines are skipped).
* Any other language (``text``, ``yaml``, ``python`` ...) is not a command. A fence with no
  language at all must not hold a command: that is an error, so no command is skipped silently.
* An HTML comment on the line right before the fence says what to expect::

      <!-- doc-test: exit=0|1 contains="pass" contains="kappa" -->
      <!-- doc-test: skip="needs Node.js and network (npx)" -->
      <!-- doc-test: screen="support-reply" -->

  ``exit`` the exit codes each command may end with (default 0); ``contains`` a substring the
  block's output must hold (repeatable); ``screen`` a text the studio's first screen shows (for
  studio commands, default ``^q Quit``); ``schema`` the name of a JSON Schema under
  ``docs/reference/schemas/`` the last command's standard output must validate against;
  ``skip`` the reason the block cannot run here (required: an empty reason is an error).

* A page whose blocks build on each other (the tutorial) says so on a line of its own, anywhere
  but right before a fence::

      <!-- doc-test-page: in-order local-judge="http://127.0.0.1:8080/v1" -->

  ``in-order``: its blocks run in order in one folder, as one test (a skipped block is left out,
  the others still run). ``local-judge``: the address the page gives for a local judge server;
  the test serves its fake judge there instead (the address is replaced by the fake's in every
  command and file). On such a page a block that is not run may carry ``file=NAME``: the reader
  writes that text into NAME (in the studio's editor, or any editor), and the test writes it
  there at that point of the page.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from rubric_studio.cli import SUBCOMMANDS  # the CLI's own list: a new command is never taken for the studio

ROOT = Path(__file__).resolve().parent.parent
RUN_LANGUAGES = {"console", "sh", "bash", "shell"}
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
_ANNOTATION = re.compile(r"^\s*<!--\s*doc-test:(?P<body>.*?)-->\s*$")
_PAGE = re.compile(r"^\s*<!--\s*doc-test-page:(?P<body>.*?)-->\s*$")
_KEYS = {"exit", "contains", "screen", "schema", "skip"}
_FILE_KEYS = {"file"}
_PAGE_KEYS = {"in-order", "local-judge"}


class DocTestSyntaxError(ValueError):
    """A doc-test annotation or fence the harness cannot read."""


@dataclass
class Block:
    """One runnable fenced block: where it is, its commands and what is expected of them."""

    file: str
    line: int
    language: str
    commands: list[str]
    exits: frozenset[int] = frozenset({0})
    contains: list[str] = field(default_factory=list)
    screen: str | None = None
    schema: str | None = None
    skip: str | None = None
    #: The page's blocks run in order in one folder (``doc-test-page: in-order``).
    in_order: bool = False
    #: The address the page gives for a local judge server (``doc-test-page: local-judge=URL``).
    local_judge: str | None = None
    #: A file block (``file=NAME``): the name the reader writes ``text`` into; it has no command.
    writes: str | None = None
    text: str = ""

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def is_studio(command: str) -> bool:
    """Whether ``command`` opens the studio (so it needs a terminal): ``rubric-studio RUBRIC ...``,
    or ``rubric-studio new ...`` without ``--no-open``."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return False
    if len(words) < 2 or words[0] != "rubric-studio" or any(w in ("&&", "||", "|", ";") for w in words):
        return False
    if words[1] == "new":
        return "--no-open" not in words
    return words[1] not in SUBCOMMANDS and not words[1].startswith("-")


def _annotation(text: str, where: str, keys: set[str] = _KEYS, flags: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    try:
        items = shlex.split(text)
    except ValueError as exc:
        raise DocTestSyntaxError(f"{where}: unreadable doc-test annotation: {exc}") from None
    found: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if item in flags:
            found[item] = []
            continue
        if not sep or key not in keys:
            raise DocTestSyntaxError(f"{where}: doc-test expects key=value with a key of {sorted(keys)}, got {item!r}")
        found.setdefault(key, []).append(value)
    if "skip" in found and not all(v.strip() for v in found["skip"]):
        raise DocTestSyntaxError(f"{where}: skip needs a reason: skip=\"why it cannot run here\"")
    return found


def _commands(language: str, body: list[str]) -> list[str]:
    commands: list[str] = []
    pending = ""
    for raw in body:
        line = raw.rstrip()
        if language == "console" and not pending:
            if not line.startswith("$ "):
                continue  # output shown to the reader
            line = line[2:]
        elif not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append((pending + line).strip())
        pending = ""
    if pending:
        commands.append(pending.strip())
    return commands


def _page_options(lines: list[str], name: str) -> dict[str, list[str]]:
    """The page's ``doc-test-page`` line, read (none: {}); one shown inside a fence is an example."""
    found: dict[str, list[str]] = {}
    fence = ""
    for number, line in enumerate(lines, 1):
        opening = _FENCE.match(line)
        if opening and (not fence or opening["fence"].startswith(fence)):
            fence = "" if fence else opening["fence"]
            continue
        match = None if fence else _PAGE.match(line)
        if match:
            if found:
                raise DocTestSyntaxError(f"{name}:{number}: a second doc-test-page line; write one per page")
            found = _annotation(match["body"], f"{name}:{number}", {"local-judge"}, frozenset({"in-order"}))
            if "local-judge" in found and not all(found["local-judge"]):
                raise DocTestSyntaxError(f"{name}:{number}: local-judge needs the address the page uses")
    return found


def blocks_of(path: Path, root: Path = ROOT) -> list[Block]:
    """The command blocks (and, on an in-order page, the file blocks) of one Markdown file (raises
    :class:`DocTestSyntaxError`)."""
    name = str(path.relative_to(root))
    lines = path.read_text(encoding="utf-8").split("\n")
    page = _page_options(lines, name)
    in_order, local_judge = "in-order" in page, (page.get("local-judge") or [None])[-1]
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match["indent"], match["fence"], match["info"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        previous = lines[start - 1] if start else ""
        note = _ANNOTATION.match(previous)
        where = f"{name}:{start + 1}"
        if not language:
            if any(b.startswith(("$ ", "rubric-studio ")) for b in body):
                raise DocTestSyntaxError(f"{where}: a fence without a language holds a command; write ```console "
                                         "(or ```sh) so it is tested, or ```text if it is a synopsis")
            continue
        if language not in RUN_LANGUAGES:
            if not note:
                continue
            if not in_order:
                raise DocTestSyntaxError(f"{where}: a doc-test annotation on a ```{language} block, which is not run "
                                         "(file=NAME is for pages marked <!-- doc-test-page: in-order -->)")
            writes = (_annotation(note["body"], where, _FILE_KEYS).get("file") or [""])[-1]
            if not writes:
                raise DocTestSyntaxError(f"{where}: file= needs the name the reader writes this text into")
            blocks.append(Block(name, start + 1, language, [], in_order=True, local_judge=local_judge, writes=writes,
                                text="\n".join(body) + "\n"))
            continue
        options = _annotation(note["body"], where) if note else {}
        commands = _commands(language, body)
        if not commands:
            raise DocTestSyntaxError(f"{where}: a ```{language} block without a command")
        try:
            exits = frozenset(int(code) for code in options.get("exit", ["0"])[-1].split("|"))
        except ValueError:
            raise DocTestSyntaxError(f"{where}: exit= takes codes like 0 or 0|1") from None
        blocks.append(Block(name, start + 1, language, commands, exits, options.get("contains", []),
                            (options.get("screen") or [None])[-1], (options.get("schema") or [None])[-1],
                            (options.get("skip") or [None])[-1], in_order, local_judge))
    return blocks


def documented_files(root: Path = ROOT) -> list[Path]:
    """The README and every page of the documentation site."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def all_blocks(root: Path = ROOT) -> list[Block]:
    """Every command block of the README and the documentation."""
    return [block for path in documented_files(root) for block in blocks_of(path, root)]
