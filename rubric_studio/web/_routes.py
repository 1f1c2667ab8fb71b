"""The page and the JSON API (docs/reference/web-api.md): HTTP around a
:class:`~rubric_studio.session.labelling.LabellingSession`.

Every route runs after :class:`~rubric_studio.web._guard.Guard` let the request in, so the person
asking is known (``request.scope[PERSON]``); what they may see and write is the session's rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rubric_studio.session.labelling import LabellingSession, NotFound, PayloadError, Person, Refused
from rubric_studio.web._auth import Door
from rubric_studio.web._guard import PERSON
from rubric_studio.web._render import visible_controls
from rubric_studio.web._views import label_json, overview_json, progress_json, view_json

HERE = Path(__file__).resolve().parent
#: The largest request body read (a label with a long note is a few kilobytes).
MAX_BODY = 256 * 1024

_TEMPLATES = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))


def _error(status: int, message: str, field: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return JSONResponse(body, status_code=status)


def _answering(handler):
    """Run a handler with the session's refusals as HTTP answers: 403, 404, 422."""

    def endpoint(request: Request) -> Response:
        try:
            return handler(request, request.app.state.session, request.scope[PERSON])
        except Refused as exc:
            return _error(403, str(exc))
        except NotFound as exc:
            return _error(404, str(exc))
        except PayloadError as exc:
            return _error(422, str(exc), exc.field)

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


@_answering
def page(request: Request, session: LabellingSession, person: Person) -> Response:
    """The labelling page (the lead's with the lead panel)."""
    session.sync()
    door: Door = request.app.state.door
    html = _TEMPLATES.get_template("index.html").render(
        person=person.name, person_shown=visible_controls(person.name), role=person.role,
        csrf=door.csrf_token(person), rubric_name=visible_controls(session.rubric.name))
    return HTMLResponse(html)


@_answering
def me(request: Request, session: LabellingSession, person: Person) -> Response:
    """Who the token belongs to, their role and the CSRF token their page sends."""
    return JSONResponse({"person": person.name, "role": person.role,
                         "csrf": request.app.state.door.csrf_token(person),
                         "rubric": {"name": session.rubric.name, "path": str(session.rubric_path)}})


@_answering
def next_sample(request: Request, session: LabellingSession, person: Person) -> Response:
    """The person's next sample to label (``?after=ID`` continues from that sample); ``?id=ID`` is
    that sample's view (how a sample whose id is ``next`` is reached)."""
    if "id" in request.query_params:
        return JSONResponse(view_json(session, person, session.view(person, request.query_params["id"])))
    session.sync()
    found = session.next_sample(person, request.query_params.get("after"))
    order = session.order(person)
    return JSONResponse({"id": found, "first": order[0] if order else None})


@_answering
def queue(request: Request, session: LabellingSession, person: Person) -> Response:
    """The person's queue of sample ids, and their re-check queue: the samples whose label they gave
    under an older wording of a criterion."""
    session.sync()
    return JSONResponse({"ids": session.queue(person), "recheck": session.recheck(person)})


@_answering
def sample(request: Request, session: LabellingSession, person: Person) -> Response:
    """One sample as the person sees it."""
    view = session.view(person, request.path_params["sample_id"])
    return JSONResponse(view_json(session, person, view))


@_answering
def label(request: Request, session: LabellingSession, person: Person) -> Response:
    """GET: the person's label (the lead: ``?annotator=NAME`` for anyone's); PUT: replace it; DELETE: remove it."""
    sample_id = request.path_params["sample_id"]
    if request.method == "GET":
        annotator = request.query_params.get("annotator")
        found = session.label_of(person, sample_id, annotator)
        return JSONResponse({"id": sample_id, "label": label_json(found, own=annotator in (None, person.name))})
    payload: Any = {}
    if request.method == "PUT":
        payload = request.scope["rubric_studio.body"]
    written = session.save(person, sample_id, payload)
    return JSONResponse({"id": sample_id, "label": label_json(written), "progress": progress_json(session, person)})


@_answering
def progress(request: Request, session: LabellingSession, person: Person) -> Response:
    """``{done, total, …}`` for the person (the lead: also per annotator)."""
    return JSONResponse(progress_json(session, person))


@_answering
def overview(request: Request, session: LabellingSession, person: Person) -> Response:
    """The lead's table of every sample: everyone's labels and the judge."""
    return JSONResponse(overview_json(session, person))


def reading_json(endpoint):
    """Reads a PUT's JSON body first (422 when it is not JSON, 413 when too large)."""

    async def wrapped(request: Request) -> Response:
        if request.method == "PUT":
            declared = request.headers.get("content-length", "0")
            if declared.isdigit() and int(declared) > MAX_BODY:
                return _error(413, f"request body larger than {MAX_BODY} bytes")
            body = await request.body()
            if len(body) > MAX_BODY:
                return _error(413, f"request body larger than {MAX_BODY} bytes")
            try:
                request.scope["rubric_studio.body"] = json.loads(body or b"null")
            except (ValueError, RecursionError) as exc:
                return _error(422, f"body: not JSON ({exc})", "body")
        return await run_in_threadpool(endpoint, request)

    return wrapped


def routes() -> list[Any]:
    """Every route of the labeller."""
    return [
        Route("/", page, methods=["GET"]),
        Route("/api/me", me, methods=["GET"]),
        Route("/api/progress", progress, methods=["GET"]),
        Route("/api/queue", queue, methods=["GET"]),
        Route("/api/overview", overview, methods=["GET"]),
        Route("/api/samples/next", next_sample, methods=["GET"]),
        Route("/api/samples/{sample_id:path}", sample, methods=["GET"]),
        Route("/api/labels/{sample_id:path}", reading_json(label), methods=["GET", "PUT", "DELETE"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
