"""What judge calls cost: a built-in USD price table the user can extend or override.

Prices are USD per 1M tokens (input, output), list prices for standard (non-batch)
calls; the built-in ones are each registered provider's ``prices``
(:mod:`rubric_studio.core.providers`). Dated model names match their family by prefix at a ``-`` / ``@`` /
``:`` boundary, the longest prefix winning (``gpt-4o-mini-2024-07-18`` → gpt-4o-mini).

Prompt caching is billed at its own rates: tokens read from the provider's prompt cache at
``cached_input`` and tokens written to it (Anthropic) at ``cache_write``, both USD per 1M.
When a price does not state them, they are the provider's ``cache_read_factor`` /
``cache_write_factor`` times the input price (OpenAI 0.5× read, no write charge — a model's
own rate where its table gives a third figure; Anthropic 0.1× read, 1.25× write for the
5-minute cache), and the full input price for a provider without factors. A call's cost is::

    (input − cached − written)·input + cached·cached_input + written·cache_write + output·output

over 1M, where ``input`` counts every prompt token (cached and written ones included).

User table: ``prices.yaml`` in the config folder (``$RUBRIC_STUDIO_HOME`` or
``~/.config/rubric-studio``), entries ``MODEL: {input: X, output: Y}`` (optionally
``cached_input: Z, cache_write: W``) where MODEL is
``model``, ``provider:model`` or ``provider:*`` (say ``ollama:*: {input: 0, output: 0}``
to count local models as free). User entries win over built-in ones. Unknown models cost
``None`` (not 0): a report must never show a made-up total. Ollama and other local models
are unknown unless the user prices them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import NamedTuple

from rubric_studio.core.providers import find, get
from rubric_studio.core.userdir import config_dir


class Price(NamedTuple):
    input: float  # USD per 1M input tokens
    output: float  # USD per 1M output tokens
    cached_input: float | None = None  # USD per 1M tokens read from the prompt cache (None: the provider's rule)
    cache_write: float | None = None  # USD per 1M tokens written to the prompt cache (None: the provider's rule)


def _pricing_source(provider: str):
    found = find(provider)
    if found is None:
        return None
    return get(found[0].priced_like) if found[0].priced_like else found[0]


def builtin_prices(provider: str) -> dict[str, Price]:
    """The built-in list prices for a provider name as written (its registered ``prices``, or
    those of the provider it is ``priced_like``); none for a keyless local alias (ollama)."""
    found = find(provider)
    if found is None or (found[1] is not None and found[1].keyless):
        return {}
    source = _pricing_source(provider)
    return {model: Price(*price) for model, price in (source.prices if source else {}).items()}


def cache_rates(provider: str, price: Price) -> tuple[float, float]:
    """(USD per 1M cached-read tokens, per 1M cache-write tokens) of ``price`` for ``provider``."""
    source = _pricing_source(provider)
    read_factor = getattr(source, "cache_read_factor", None)
    write_factor = getattr(source, "cache_write_factor", None)
    read = price.cached_input if price.cached_input is not None else price.input * (read_factor if read_factor is not None else 1.0)
    write = price.cache_write if price.cache_write is not None else price.input * (write_factor if write_factor is not None else 1.0)
    return read, write


_BOUNDARY = ("-", "@", ":")
_user_cache: dict[Path, tuple[float, dict[str, Price]]] = {}
_checked: dict[Path, tuple[float, dict[str, Price]]] = {}  # path -> (when last stat-ed, its table)
RECHECK_SECONDS = 1.0
#: Largest price table read: one line per model, so a real one is a few KB.
MAX_PRICES_BYTES = 1024 * 1024


def prices_path() -> Path:
    return config_dir() / "prices.yaml"


def load_user_prices(path: Path | None = None) -> dict[str, Price]:
    """The user's price table (empty when there is none; bad entries are logged and skipped)."""
    path = path or prices_path()
    now = time.monotonic()
    checked = _checked.get(path)
    if checked is not None and now - checked[0] < RECHECK_SECONDS:
        return checked[1]  # every judge reply is priced: stat the file at most once a second
    try:
        mtime = path.stat().st_mtime
    except OSError:
        _checked[path] = (now, {})
        return {}
    cached = _user_cache.get(path)
    if cached is not None and cached[0] == mtime:
        _checked[path] = (now, cached[1])
        return cached[1]
    table = _read_table(path)
    _user_cache[path] = (mtime, table)
    _checked[path] = (now, table)
    return table


def _read_table(path: Path) -> dict[str, Price]:
    """The entries of the price file ``path``, read with the bounds of every user file (regular
    file, size, nesting depth, aliases); a file that cannot be used is logged and prices nothing."""
    from rubric_studio.core.files import read_user_file
    from rubric_studio.core.problems import RubricError
    from rubric_studio.core.yamlpos import safe_load

    log = logging.getLogger(__name__)
    table: dict[str, Price] = {}
    try:
        data = safe_load(read_user_file(path, "prices", max_bytes=MAX_PRICES_BYTES), str(path)) or {}
    except RubricError as exc:
        log.warning("ignoring the price table: %s", exc.problems[0] if exc.problems else exc)
        data = {}
    if not isinstance(data, dict):
        log.warning("ignoring %s: expected a mapping model -> {input, output}", path)
        data = {}
    for model, entry in data.items():
        try:
            price = Price(float(entry["input"]), float(entry["output"]),
                          *(None if entry.get(name) is None else float(entry[name]) for name in ("cached_input", "cache_write")))
        except (TypeError, KeyError, ValueError, AttributeError):
            log.warning("%s: %r needs {input: USD per 1M tokens, output: USD per 1M tokens} "
                        "(optionally cached_input, cache_write)", path, model)
            continue
        if all(value is None or value >= 0 for value in price):
            table[str(model)] = price
    return table


def _match(table: dict[str, Price], model: str) -> Price | None:
    if model in table:
        return table[model]
    best = None
    for name in table:
        if model.startswith(name) and model[len(name)] in _BOUNDARY and (best is None or len(name) > len(best)):
            best = name
    return table[best] if best is not None else None


def price_for(provider: str, model: str) -> Price | None:
    """The price of ``provider:model``, or None when unknown."""
    user = load_user_prices()
    if user:
        for key in (f"{provider}:{model}", model):
            if key in user:
                return user[key]
        found = _match(user, f"{provider}:{model}") or _match(user, model) or user.get(f"{provider}:*")
        if found is not None:
            return found
    return _match(builtin_prices(provider), model)


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int,
             cached_input_tokens: int = 0, cache_write_tokens: int = 0) -> float | None:
    """USD for one call's tokens, or None when the model's price is unknown. ``input_tokens``
    counts every prompt token; ``cached_input_tokens`` / ``cache_write_tokens`` are the part of
    them read from / written to the provider's prompt cache, priced at their own rates."""
    price = price_for(provider, model)
    if price is None:
        return None
    cached = max(0, min(cached_input_tokens, input_tokens))
    written = max(0, min(cache_write_tokens, input_tokens - cached))
    read_rate, write_rate = cache_rates(provider, price) if cached or written else (price.input, price.input)
    full = input_tokens - cached - written
    return (full * price.input + cached * read_rate + written * write_rate + output_tokens * price.output) / 1_000_000
