"""The ASGI layer in front of every route: security headers on every response, the token-for-cookie
trade, 401 for a request nobody's token backs, and the CSRF and Origin checks of state-changing
requests made with the cookie (a request with ``Authorization: Bearer`` cannot be forged by another
site, so it needs neither)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rubric_studio.web._auth import Door

SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
#: The scope keys the routes read: who is asking, and how they showed it ("cookie" / "bearer").
PERSON, VIA = "rubric_studio.person", "rubric_studio.via"

_DENIED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{refresh}<title>{title}</title></head>
<body><h1>{title}</h1><p>{text}</p></body></html>
"""


class Guard:
    """Wraps the app: see the module docstring."""

    def __init__(self, app: ASGIApp, door: Door, *, cookie_name: str, secure: bool = False) -> None:
        self.app, self.door, self.cookie_name, self.secure = app, door, cookie_name, secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode("latin-1").lower()
                           not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            await _respond(send_with_headers, *refusal)
            return
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, dict[str, str], bytes] | None:
        """(status, headers, body) to answer instead of the route, or None to let the request in."""
        headers = Headers(scope=scope)
        query = QueryParams(scope.get("query_string", b""))
        method = scope["method"]
        if "token" in query and method in ("GET", "HEAD"):
            return self._trade(scope, query, headers)
        person, via = None, None
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            person, via = self.door.person_for_token(authorization[7:].strip()), "bearer"
        else:
            cookie = _cookie(headers.get("cookie", ""), self.cookie_name)
            if cookie is not None:
                person, via = self.door.person_for_cookie(cookie), "cookie"
        if person is None:
            return _unauthorised(scope, headers)
        if method not in SAFE_METHODS and via == "cookie":
            problem = self._forgery(scope, headers, person)
            if problem is not None:
                return _error(403, problem)
        scope[PERSON], scope[VIA] = person, via
        return None

    def _trade(self, scope: Scope, query: QueryParams, headers: Headers) -> tuple[int, dict[str, str], bytes]:
        """``?token=T``: a cookie and a 303 to the same path without the token, or 401.

        A link followed from another site that would sign this browser in as someone else than the
        person it is signed in as gets a page asking first: another site cannot switch whose
        labels you write without your seeing it (a link you paste, or follow from the page, can).
        """
        person = self.door.person_for_token(query["token"])
        if person is None:
            return _page(401, "Not a valid link", "This link's token is not valid for this server (it was revoked, "
                                                   "or the server was started again without --tokens). "
                                                   "Ask for a new link.")
        cookie = _cookie(headers.get("cookie", ""), self.cookie_name)
        current = self.door.person_for_cookie(cookie) if cookie is not None else None
        if current is not None and current.name != person.name and headers.get("sec-fetch-site") == "cross-site":
            return _switch_page(person.name, current.name, query["token"])
        rest = urlencode([(k, v) for k, v in query.multi_items() if k != "token"])
        location = quote(scope["path"], safe="/:@!$&'()*+,;=-._~") + (f"?{rest}" if rest else "")
        attributes = "; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if self.secure else "")
        return 303, {"location": location,
                     "set-cookie": f"{self.cookie_name}={self.door.cookie_value(person)}{attributes}"}, b""

    def _forgery(self, scope: Scope, headers: Headers, person: Any) -> str | None:
        """Why a state-changing request made with the cookie may be forged (None: it is not)."""
        if not self.door.csrf_ok(person, headers.get("x-csrf-token")):
            return "missing or wrong X-CSRF-Token header (the page sends it; scripts use Authorization: Bearer)"
        origin = headers.get("origin")
        if origin is not None and origin != f"{scope.get('scheme', 'http')}://{headers.get('host', '')}":
            return f"request from another origin ({origin}) refused"
        return None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value.strip().strip('"')
    return None


def _unauthorised(scope: Scope, headers: Headers) -> tuple[int, dict[str, str], bytes]:
    if scope["path"].startswith("/api/"):
        status, extra, body = _error(401, "no token: open your link (…/?token=…) or send Authorization: Bearer <token>")
        return status, {**extra, "www-authenticate": "Bearer"}, body
    # A link followed from another site: a SameSite=Strict cookie is not sent on that first
    # navigation, so the page asks again from itself, which sends it.
    again = headers.get("sec-fetch-site") == "cross-site" and scope["method"] == "GET"
    return _page(401, "Open your link", "This labeller needs the link you were given (it ends in ?token=…).",
                 refresh=again)


def _switch_page(name: str, current: str, token: str) -> tuple[int, dict[str, str], bytes]:
    from html import escape

    from rubric_studio.web._render import visible_controls

    link = "/?" + urlencode({"token": token})
    text = (f"This link signs you in as <b>{escape(visible_controls(name))}</b>; this browser labels as "
            f"<b>{escape(visible_controls(current))}</b> now. <a href=\"{escape(link)}\">Label as "
            f"{escape(visible_controls(name))}</a> or <a href=\"/\">go on as {escape(visible_controls(current))}</a>.")
    return _page(200, "Switch person?", text)


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps({"error": message}).encode()


def _page(status: int, title: str, text: str, *, refresh: bool = False) -> tuple[int, dict[str, str], bytes]:
    body = _DENIED_PAGE.format(title=title, text=text,
                               refresh='<meta http-equiv="refresh" content="0">\n' if refresh else "")
    return status, {"content-type": "text/html; charset=utf-8"}, body.encode()


async def _respond(send: Send, status: int, headers: dict[str, str], body: bytes) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
