"""How many requests a local inference server runs at once, when it says so.

llama.cpp's server publishes its generation slots (``GET /props`` → ``total_slots``;
``GET /slots`` → one entry per slot). Calls beyond that number wait in its queue with their
timeout running, so a run caps its concurrency at the slot count. vLLM and others publish
none: the run keeps the user's ``--concurrency`` and adapts on timeouts instead.

Only a server on this machine is asked (``localhost``, ``127.0.0.1``, ``::1`` over plain
HTTP): the question goes nowhere the judge calls do not already go, and carries no key.
Each request is bounded in time and size, and any answer that is not a sane slot count is
ignored.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Seconds a slot question may take (never more than the judge's own timeout).
PROBE_TIMEOUT = 3.0
MAX_REPLY_BYTES = 1024 * 1024
MAX_SLOTS = 1024


def local_root(base_url: str | None) -> tuple[str, int, str] | None:
    """(host, port, path prefix) of a plain-HTTP server on this machine, else None.
    The prefix drops a trailing ``/v1``: llama.cpp answers ``/props`` at its root."""
    if not base_url:
        return None
    try:
        parts = urlsplit(base_url)
        port = parts.port or 80
    except ValueError:
        return None
    if parts.scheme != "http" or (parts.hostname or "").lower() not in LOCAL_HOSTS:
        return None
    prefix = parts.path.rstrip("/")
    if prefix.endswith("/v1"):
        prefix = prefix[:-3]
    return parts.hostname or "127.0.0.1", port, prefix


async def published_slots(base_url: str | None, timeout: float) -> int | None:
    """The slot count a local llama.cpp-style server publishes, or None (not local, not said)."""
    root = local_root(base_url)
    if root is None:
        return None
    host, port, prefix = root
    bound = max(0.1, min(timeout, PROBE_TIMEOUT))
    for path, read in (("/props", _slots_from_props), ("/slots", _slots_from_list)):
        try:
            async with asyncio.timeout(bound):
                body = await _get(host, port, prefix + path)
        except (OSError, TimeoutError, ValueError):
            return None  # nothing answering in time: the judge calls will say why
        if body is None:
            continue
        try:
            count = read(json.loads(body))
        except (ValueError, RecursionError):
            count = None
        if count is not None:
            return count
    return None


def _slots_from_props(data: object) -> int | None:
    value = data.get("total_slots") if isinstance(data, dict) else None
    return _sane(value)


def _slots_from_list(data: object) -> int | None:
    return _sane(len(data)) if isinstance(data, list) else None


def _sane(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SLOTS:
        return value
    return None


async def _get(host: str, port: int, path: str) -> bytes | None:
    """The body of a 200 answer to ``GET path`` (at most :data:`MAX_REPLY_BYTES`), else None."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        name = f"[{host}]" if ":" in host else host
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {name}:{port}\r\nAccept: application/json\r\n"
                     "Connection: close\r\n\r\n".encode())  # fmt: skip
        await writer.drain()
        data = await reader.read(MAX_REPLY_BYTES + 1)
        while len(data) <= MAX_REPLY_BYTES:
            more = await reader.read(MAX_REPLY_BYTES + 1 - len(data))
            if not more:
                break
            data += more
    finally:
        writer.close()
    if len(data) > MAX_REPLY_BYTES:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = lines[0].split()
    if len(status) < 2 or status[1] != b"200":
        return None
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    return _unchunk(body) if headers.get(b"transfer-encoding", b"").lower() == b"chunked" else body


def _unchunk(body: bytes) -> bytes:
    """A chunked transfer-encoded body, joined."""
    out, rest = b"", body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out
