"""The labeller's ASGI app: routes behind the guard, and the label journal folded while idle and at
the end."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

from starlette.applications import Starlette

from rubric_studio.session.labelling import LabellingSession
from rubric_studio.web._auth import Door
from rubric_studio.web._guard import Guard
from rubric_studio.web._routes import routes

#: How often the idle check runs, and how long without a label before the journal is folded (seconds).
FOLD_EVERY, IDLE_BEFORE_FOLD = 10.0, 30.0


def create_app(session: LabellingSession, door: Door, *, cookie_name: str = "rubric_studio",
               secure: bool = False, fold_every: float = FOLD_EVERY, idle: float = IDLE_BEFORE_FOLD) -> Guard:
    """The web labeller as an ASGI app (serve it with uvicorn, or drive it in-process with
    ``starlette.testclient.TestClient``).

    ``cookie_name`` should name the server (two servers on one host share cookies across ports);
    ``secure`` marks the cookie Secure (HTTPS). While it runs, every ``fold_every`` seconds the
    label journal is folded into the sidecar when no label was written for ``idle`` seconds; it is
    folded once more when the app stops.
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        folding = asyncio.create_task(_fold_while_idle(session, fold_every, idle))
        try:
            yield
        finally:
            folding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await folding
            await asyncio.to_thread(_fold, session, lambda: session.store.fold())

    app = Starlette(routes=routes(), lifespan=lifespan)
    app.state.session, app.state.door = session, door
    return Guard(app, door, cookie_name=cookie_name, secure=secure)


async def _fold_while_idle(session: LabellingSession, every: float, idle: float) -> None:
    while True:
        await asyncio.sleep(every)
        await asyncio.to_thread(_fold, session, lambda: session.store.fold_if_idle(idle))


def _fold(session: LabellingSession, fold) -> int:
    """Fold, saying on stderr why it could not (the labels stay in the journal, nothing is lost)."""
    try:
        return int(fold())
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"warning: {session.store.path}: labels not folded into the sidecar yet: {exc}\n")
        return 0
