"""Reading a Label Studio server's users (id -> e-mail) with the user's token, and nothing more.

This is the one place rubric-studio talks to Label Studio. The token only ever goes to the
origin (scheme, host and port) the user named with ``--label-studio-url``:

* the URL must be ``http://`` or ``https://`` with a host, and hold no control character or space
  (:func:`check_server_url`); the token must be printable ASCII (:func:`check_token`), so neither
  can smuggle a header into a request;
* a redirect to the same origin is followed (the token kept); a redirect to any other origin
  (another host or port, or https to http) is refused before a request is made there, so the
  token never reaches a second server (:class:`_SameOriginRedirects`);
* a reply is read to at most :data:`MAX_REPLY_BYTES` and parsed as bounded JSON (depth, number
  size); what cannot be used is a :class:`ServerError` or a RubricError naming the URL, never
  showing the token.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from rubric_studio.core.files import MAX_FILE_BYTES
from rubric_studio.interop.labels._common import read_json
from rubric_studio.interop.labels._label_studio import users_from

#: The largest reply read from the server (the users list of a large organisation is far smaller).
MAX_REPLY_BYTES = MAX_FILE_BYTES
_UNSAFE_URL = re.compile(r"[\x00-\x20\x7f-\x9f]")
_TOKEN = re.compile(r"[\x21-\x7e]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class ServerError(Exception):
    """The server's users cannot be read; the message says why (never showing the token)."""


def check_server_url(url: str) -> str:
    """``url`` when it can name a Label Studio server (http or https, with a host, no control
    character or space); ValueError saying what was expected otherwise."""
    bad = _UNSAFE_URL.search(url)
    if bad is not None:
        raise ValueError(f"a control character or space (U+{ord(bad.group()):04X}) at character {bad.start() + 1}; "
                         "expected an http:// or https:// URL")
    if not url.isascii():
        raise ValueError("expected an http:// or https:// URL in ASCII (a host in its xn-- form, a path %-encoded)")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError as exc:
        raise ValueError(f"not a URL ({exc}); expected an http:// or https:// URL") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL with a host, like https://label-studio.example.org")
    return url


def check_token(token: str) -> str:
    """``token`` when it can go in a header as it is (printable ASCII, no space); ValueError otherwise
    (the message never shows the token)."""
    if not _TOKEN.fullmatch(token):
        raise ValueError("holds a character that cannot go in a request header (expected printable ASCII, "
                         "no spaces or line breaks); copy the token again from Label Studio")
    return token


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``, the port filled in from the scheme."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the origin of the request it answers; any other is a ServerError
    raised before anything is sent there."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        target = urllib.parse.urljoin(req.full_url, newurl)
        if origin(target) != origin(req.full_url):
            fp.close()
            scheme, host, port = origin(target)
            raise ServerError(f"{req.full_url}: redirected to another server ({scheme}://{host}:{port}) with HTTP {code}; "
                              "the token is not sent there: give that server as --label-studio-url if it is yours")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _request_json(request: urllib.request.Request, timeout: float) -> Any:
    """The JSON reply to ``request`` (same-origin redirects only, at most MAX_REPLY_BYTES, bounded JSON)."""
    opener = urllib.request.build_opener(_SameOriginRedirects)
    try:
        with opener.open(request, timeout=timeout) as reply:
            body = reply.read(MAX_REPLY_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise ServerError(f"{request.full_url}: the server answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise ServerError(f"{request.full_url}: cannot connect: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise ServerError(f"{request.full_url}: {type(exc).__name__}: {exc}") from None
    if len(body) > MAX_REPLY_BYTES:
        raise ServerError(f"{request.full_url}: a reply larger than {MAX_REPLY_BYTES // (1024 * 1024)} MB; refused")
    return read_json(body.decode("utf-8", errors="replace"), request.full_url)


def _access_header(base: str, token: str, timeout: float) -> str:
    """The Authorization header for ``token``: a legacy token as it is; a personal access token (a JWT
    refresh token) exchanged for an access token first."""
    if token.count(".") != 2:
        return f"Token {token}"
    request = urllib.request.Request(f"{base}/api/token/refresh/", method="POST",
                                     data=json.dumps({"refresh": token}).encode(),
                                     headers={"Content-Type": "application/json"})
    reply = _request_json(request, timeout)
    access = reply.get("access") if isinstance(reply, dict) else None
    if not isinstance(access, str) or not _TOKEN.fullmatch(access):
        raise ServerError(f"{request.full_url}: the reply holds no access token (expected {{\"access\": \"...\"}}); "
                          "is $LABEL_STUDIO_API_KEY a personal access token of this server?")
    return f"Bearer {access}"


def server_users(url: str, token: str, timeout: float = 30) -> dict[str, str]:
    """User id -> e-mail from a Label Studio server's ``/api/users/``; ServerError, RubricError (a reply
    that is not the users list) or ValueError (a bad URL or token) say what failed."""
    base = check_server_url(url).rstrip("/")
    header = _access_header(base, check_token(token), timeout)
    address = f"{base}/api/users/"
    data = _request_json(urllib.request.Request(address, headers={"Authorization": header}), timeout)
    return users_from(data, address)
