"""Who is asking: a person's token, traded for a cookie, checked on every request.

* A link ``/?token=T`` (or ``Authorization: Bearer T`` on the JSON API) names a person when the
  SHA-256 of ``T`` is theirs; hashes are compared with :func:`hmac.compare_digest`.
* The cookie holds the person's name and an HMAC, under a secret made for this run, of the name
  and the hash of their token: it cannot be forged, it dies with the server, and it dies when the
  person's token is revoked from the tokens file (their hash is gone, or is another one).
* A state-changing request sent with the cookie carries ``X-CSRF-Token``: an HMAC of the person's
  name under the run's secret, which the page reads from its ``<meta name="csrf-token">``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, unquote

from rubric_studio.core.files import file_signature
from rubric_studio.core.problems import RubricError
from rubric_studio.session.labelling import Person
from rubric_studio.web._tokens import read_tokens, token_hash


class Door:
    """The people who may come in, and the checks of their tokens, cookies and CSRF tokens."""

    def __init__(self, people: Mapping[str, Person], hashes: Mapping[str, str], *, tokens_file: Path | None = None,
                 secret: bytes | None = None) -> None:
        self.people = dict(people)
        self._hashes = {name: value for name, value in hashes.items() if name in self.people}
        self.tokens_file = tokens_file
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._file_signature = self._signature()

    # -- the tokens file, read again when it changes (a revoked person is shut out at once) -------
    def _signature(self) -> tuple[int, int, int] | None:
        return None if self.tokens_file is None else file_signature(self.tokens_file)

    def hashes(self) -> dict[str, str]:
        """Name -> token hash of the people who may come in now."""
        if self.tokens_file is not None:
            signature = self._signature()
            if signature != self._file_signature:
                self._file_signature = signature
                try:
                    kept = read_tokens(self.tokens_file) if signature is not None else {}
                except (RubricError, OSError, ValueError):  # a file that does not read shuts everyone out
                    kept = {}
                self._hashes = {name: value for name, value in kept.items() if name in self.people}
        return self._hashes

    # -- tokens, cookies, CSRF --------------------------------------------------------------------
    def person_for_token(self, token: str) -> Person | None:
        """The person whose token this is, or None."""
        given = token_hash(token)
        found = None
        for name, value in self.hashes().items():  # every hash compared: the time says nothing
            if hmac.compare_digest(given, value):
                found = name
        return self.people.get(found) if found is not None else None

    def _mac(self, purpose: str, name: str, extra: str = "") -> str:
        message = "\0".join((purpose, name, extra)).encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def cookie_value(self, person: Person) -> str:
        """The cookie that stands for ``person``'s token until the server stops or it is revoked."""
        return f"{quote(person.name, safe='')}.{self._mac('cookie', person.name, self.hashes().get(person.name, ''))}"

    def person_for_cookie(self, value: str) -> Person | None:
        """The person a cookie stands for, or None (forged, from an earlier run, or revoked)."""
        quoted, _, mac = value.rpartition(".")
        name = unquote(quoted)
        current = self.hashes().get(name)
        if current is None or name not in self.people:
            return None
        if not hmac.compare_digest(mac, self._mac("cookie", name, current)):
            return None
        return self.people[name]

    def csrf_token(self, person: Person) -> str:
        """The value ``person``'s page sends as ``X-CSRF-Token``."""
        return self._mac("csrf", person.name)

    def csrf_ok(self, person: Person, given: str | None) -> bool:
        """Whether ``given`` is ``person``'s CSRF token."""
        return given is not None and hmac.compare_digest(given, self.csrf_token(person))
