"""The shape of a judge call as the capability table and the request bodies read it.

:class:`~rubric_studio.judges.base.JudgeConfig` and :class:`~rubric_studio.judges.base.JudgeRequest`
have these fields; the table (:mod:`rubric_studio.judges.capabilities`) and the bodies
(:mod:`rubric_studio.judges.bodies`) are typed against this shape, so that ``base`` can use them
(a judge's identity, a request's cache key) without the two holding each other.
"""

from __future__ import annotations

from typing import Any, Protocol


class CallConfig(Protocol):
    """The judge settings a request body and the capability table read."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def temperature(self) -> float: ...

    @property
    def reasoning_effort(self) -> str | None: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def structured_output(self) -> str | None: ...

    @property
    def label(self) -> str: ...


class CallRequest(Protocol):
    """One judge call's messages and reply schema, as a request body carries them."""

    @property
    def system(self) -> str: ...

    @property
    def user(self) -> str: ...

    @property
    def schema(self) -> dict[str, Any]: ...

    @property
    def schema_name(self) -> str: ...

    @property
    def repeat_index(self) -> int: ...

    @property
    def cache_prefix(self) -> int: ...
