"""The people's tokens: made new each run, or kept (as hashes only) in a ``--tokens`` file.

A token is ``secrets.token_urlsafe(32)``; the server keeps only its SHA-256, so neither its memory
nor the tokens file holds a token someone could use. With ``--tokens FILE``, people already in the
file keep their token (their link from an earlier run keeps working), new people get a new one,
and ``--revoke NAME`` takes a person out of the file (their link and cookie stop working, also in a
server running on that file). The file is JSON::

    {"about": "...", "people": {"alice": "sha256:9f2c...", "carol": "sha256:41ab..."}}
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable
from pathlib import Path

from rubric_studio.core.atomic import write_text_safely
from rubric_studio.core.problems import Problem, RubricError

PREFIX = "sha256:"
ABOUT = ("rubric-studio serve: each person's name and the SHA-256 of their link's token; the tokens "
         "themselves are not kept. Remove a person with: rubric-studio serve RUBRIC --tokens FILE --revoke NAME")


def new_token() -> str:
    """A fresh token for one person's link."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What is kept of a token: ``sha256:<hex>``."""
    return PREFIX + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def read_tokens(path: Path) -> dict[str, str]:
    """Name -> token hash from a tokens file (a missing file has none); RubricError when it does not read."""
    if not path.exists():
        return {}
    from rubric_studio.core.files import read_user_file

    text = read_user_file(path, "tokens")
    expected = 'expected {"people": {"<name>": "sha256:<hex>"}} as written by rubric-studio serve --tokens'
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RubricError([Problem(str(path), exc.lineno, exc.colno, f"not JSON ({exc.msg}); {expected}")]) from None
    people = data.get("people") if isinstance(data, dict) else None
    if not isinstance(people, dict) or not all(isinstance(v, str) and v.startswith(PREFIX) and len(v) == len(PREFIX) + 64
                                               for v in people.values()):
        raise RubricError([Problem(str(path), None, None, expected)])
    return {str(name): value for name, value in people.items()}


def write_tokens(path: Path, hashes: dict[str, str]) -> None:
    """Write the tokens file atomically (its mode as the umask gives)."""
    write_text_safely(path, json.dumps({"about": ABOUT, "people": hashes}, indent=2, ensure_ascii=False) + "\n")


def issue_tokens(names: Iterable[str], path: Path | None) -> tuple[dict[str, str | None], dict[str, str]]:
    """(name -> new token, or None when the tokens file keeps the person's earlier one;
    name -> token hash). With ``path``, new people's hashes are added to the file."""
    kept = read_tokens(path) if path is not None else {}
    tokens: dict[str, str | None] = {}
    hashes: dict[str, str] = {}
    for name in names:
        if name in kept:
            tokens[name], hashes[name] = None, kept[name]
        else:
            tokens[name] = new_token()
            hashes[name] = token_hash(tokens[name] or "")
    if path is not None and any(token is not None for token in tokens.values()):
        write_tokens(path, {**kept, **hashes})
    return tokens, hashes


def revoke(path: Path, name: str) -> bool:
    """Take ``name`` out of the tokens file; False when the file does not hold them."""
    kept = read_tokens(path)
    if name not in kept:
        return False
    del kept[name]
    write_tokens(path, kept)
    return True
