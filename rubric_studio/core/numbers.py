"""Number fields of a rubric: finite, never a boolean, within documented bounds.

YAML reads ``.nan``, ``.inf`` and ``1e999`` as floats and ``true`` as a boolean, and
pydantic's lax mode would take ``true`` for 1 and let ``nan`` through every ``ge``/``le``
bound of a field that does not state one. Every numeric field of the rubric and check
models uses :data:`Number` or :data:`Integer`, so a wrong value is refused when the file
is loaded — with its line and column — instead of quietly changing every score.

:data:`EPSILON`, the float noise every threshold comparison forgives, lives here too, so
scoring and the checks share it without importing each other.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AllowInfNan, BeforeValidator
from pydantic_core import PydanticCustomError

#: Largest weight (in absolute value) a criterion may have: far above any real rubric,
#: small enough that no sum of weights loses precision.
MAX_WEIGHT = 1_000_000
#: Largest character or word bound of a ``length`` check.
MAX_LENGTH = 1_000_000_000
#: Float noise a threshold comparison forgives (6/7.5 meets 0.8): scoring, checks and fitting share it.
EPSILON = 1e-9


def _not_a_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("bool_not_number", "expected a number, got {value}", {"value": str(value).lower()})
    return value


def _finite(value: Any) -> Any:
    """Refuse ``nan`` and infinities (also written as text) before any bound is compared with them."""
    value = _not_a_boolean(value)
    try:
        number = float(value) if isinstance(value, float | str) else None
    except ValueError:
        return value  # not a number at all: the float validator says so
    if number is not None and not math.isfinite(number):
        shown = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
        raise PydanticCustomError("finite_number", "expected a finite number, got {value}", {"value": shown})
    return value


#: A finite float (``nan``, ``inf`` and booleans refused).
Number = Annotated[float, BeforeValidator(_finite), AllowInfNan(False)]
#: An integer (booleans refused).
Integer = Annotated[int, BeforeValidator(_not_a_boolean)]
