"""What the providers say when a reply arrived but cannot be used: cut off, refused, looping.

Such replies are billed, so the errors carry their tokens. A reply cut off at
``max_tokens`` usually means the limit is too low, but small local models also fall into
loops (the same phrase over and over until the limit): raising ``max_tokens`` does not help
then, so the message says which it was.
"""

from __future__ import annotations

from rubric_studio.judges.base import JudgeError
from rubric_studio.judges.parsing import extract_json

LOOP_MIN_REPEATS = 3
LOOP_MIN_SPAN = 60  # characters the repetition must cover
LOOP_MAX_UNIT = 200
_TAIL = 1200


def repeated_unit(text: str) -> str | None:
    """The phrase the text ends by repeating (≥3 times over ≥60 characters), or None."""
    tail = text[-_TAIL:]
    for size in range(1, min(LOOP_MAX_UNIT, len(tail) // LOOP_MIN_REPEATS) + 1):
        unit = tail[-size:]
        if not unit.strip():
            continue
        repeats, end = 1, len(tail) - size
        while end >= size and tail[end - size : end] == unit:
            repeats += 1
            end -= size
        if repeats >= LOOP_MIN_REPEATS and repeats * size >= LOOP_MIN_SPAN:
            return unit
    return None


def with_tokens(error: JudgeError, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
                cache_write_tokens: int = 0) -> JudgeError:
    error.input_tokens, error.output_tokens = input_tokens, output_tokens
    error.cached_input_tokens, error.cache_write_tokens = cached_input_tokens, cache_write_tokens
    return error


def cut_off(text: str, max_tokens: int, input_tokens: int = 0, output_tokens: int = 0, *cache: int) -> JudgeError:
    """The error for a reply that stopped at ``max_tokens``."""
    unit = repeated_unit(text)
    if unit is not None:
        shown = " ".join(unit.split())[:40] or repr(unit)
        message = (
            f"reply cut off at max_tokens ({max_tokens}): the model was repeating itself ({shown!r} over and over); "
            "a larger max_tokens will not help: a larger model or another temperature may"
        )
    else:
        message = f"reply cut off at max_tokens ({max_tokens}); raise judge.max_tokens"
    return with_tokens(JudgeError("malformed", message, raw=text), input_tokens, output_tokens, *cache)


def refused(reason: str, raw: str | None, input_tokens: int = 0, output_tokens: int = 0, *cache: int) -> JudgeError:
    """The error for a reply in which the model declined to judge."""
    shown = " ".join(reason.split())[:200] or "no reason given"
    return with_tokens(JudgeError("refusal", f"the judge refused: {shown}", raw=raw), input_tokens, output_tokens, *cache)


def expected_keys(schema: dict) -> list[str]:
    """The top-level keys a reply to ``schema`` has (a verdict or score and rationale, or criterion ids)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return list(props) if isinstance(props, dict) else []


def _names_a_key(text: str, keys: list[str]) -> bool:
    return any(f'"{key}"' in text for key in [*keys, "criteria"])


def json_mode_ignored(text: str, expected: list[str], cut: bool, max_tokens: int) -> JudgeError | None:
    """The error for a reply in json_object mode that is not the JSON asked for, or None when it may be.

    A reply that ran to ``max_tokens`` without naming one expected key was not going to become
    the judgement: raising max_tokens does not help then.
    """
    if not expected:
        return None
    shown = ", ".join(expected[:6])
    if cut:
        if _names_a_key(text, expected):
            return None
        why = f"its reply ran to max_tokens ({max_tokens}) without any of the expected keys ({shown})"
    else:
        try:
            data = extract_json(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            why = "the reply is not a JSON object"
        elif not _names_a_key(text, expected):
            why = f"the reply has none of the expected keys ({shown})"
        else:
            return None
    return JudgeError("malformed", f"the model did not follow json_object mode: {why}; "
                                   "try judge.structured_output: json_schema or a larger model", raw=text)  # fmt: skip


def no_tool_call(text: str, cut_at: int | None = None) -> JudgeError | None:
    """The error for a forced tool call that did not come back (and no JSON object instead), or None.
    ``cut_at``: the reply was text that ran to max_tokens — more tokens would not make it a call."""
    try:
        if isinstance(extract_json(text), dict):
            return None  # the judgement came back as text: read it
    except ValueError:
        pass
    how = f" (the reply was text that ran to max_tokens ({cut_at}))" if cut_at is not None else ""
    return JudgeError("malformed", f"no tool call came back{how}; this server may not support forced tool calls — "
                                   "try judge.structured_output: json_schema", raw=text)  # fmt: skip
