"""The web labeller behind ``rubric-studio serve``: a page and a JSON API where several people label
samples, blind to each other and to the judge, and a lead adjudicates.

Built on Starlette, uvicorn and Jinja2, imported only by ``serve``. The labelling rules (shares,
queues, who sees what, what a label may hold) live in :mod:`rubric_studio.session.labelling`;
this package only speaks HTTP around them. The API is documented in docs/reference/web-api.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.web._app import create_app
    from rubric_studio.web._auth import Door
    from rubric_studio.web._render import markdown_html, sample_html, visible_controls
    from rubric_studio.web._tokens import issue_tokens, read_tokens, revoke, token_hash

#: Public name -> the private module that defines it.
_EXPORTS = {
    "create_app": "_app",
    "Door": "_auth",
    "issue_tokens": "_tokens",
    "markdown_html": "_render",
    "read_tokens": "_tokens",
    "revoke": "_tokens",
    "sample_html": "_render",
    "token_hash": "_tokens",
    "visible_controls": "_render",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
