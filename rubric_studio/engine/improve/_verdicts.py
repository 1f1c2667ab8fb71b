"""Suggestions from sample-level verdict labels: which criteria separate the person's pass / fail,
and what making one required (or no longer required) does.

A person often labels whole samples (pass / fail) rather than cells. When the rubric's
verdict disagrees with theirs, some criterion usually "sides with the person" on those
samples: it is unmet on a sample the person failed but the rubric passed (so requiring it
would fail the sample), or it is a required criterion unmet on a sample the person passed.
:func:`blame` counts that per criterion; :func:`required_candidates` turns the criteria
blamed on the fitting samples into candidates that flip the ``required`` flag. Weights and
the threshold are fitted separately (the ``scoring`` kind, :mod:`.fit`). Both are
evaluated on held-out sample verdicts like every other candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.results import SampleResult
from rubric_studio.core.rubric import Rubric
from rubric_studio.engine.improve._improve import Candidate, cell_verdicts, rubric_verdicts

#: How many criteria (most blamed first) get a ``required`` candidate.
MAX_REQUIRED_CANDIDATES = 2


@dataclass(frozen=True)
class Blame:
    """One criterion against the person's sample verdicts.

    ``explains``: disagreeing samples on which flipping its ``required`` flag would give the
    person's verdict's direction (unmet where the person failed a passing sample, not required;
    unmet where the person passed a failing sample, required). ``sides``: labelled samples on which
    its met / unmet matches the person's pass / fail (a penalty counted the other way round)."""

    criterion: str
    required: bool
    explains: tuple[str, ...]
    sides: int
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "required": self.required, "explains": list(self.explains),
                "sides_with_person": self.sides, "n": self.n}


def blame(rubric: Rubric, results: Sequence[SampleResult], human: Mapping[str, bool],
          ids: Sequence[str]) -> list[Blame]:
    """Every criterion that explains at least one disagreeing sample among ``ids``, most first."""
    verdicts = rubric_verdicts(results)
    shared = [sid for sid in ids if sid in verdicts and sid in human]
    out = []
    for criterion in rubric.criteria:
        if criterion.weight <= 0:
            continue
        cells = cell_verdicts(results, criterion.key)
        judged = [sid for sid in shared if sid in cells]
        sides = sum(cells[sid] == human[sid] for sid in judged)
        # unmet where the person failed a sample the rubric passed (not required: requiring it would fail
        # the sample) or passed one the rubric failed (required: no longer requiring it could pass it)
        explains = tuple(sid for sid in judged if not cells[sid] and verdicts[sid] != human[sid]
                         and verdicts[sid] != criterion.required)
        if explains:
            out.append(Blame(criterion.key, criterion.required, explains, sides, len(judged)))
    return sorted(out, key=lambda b: (-len(b.explains), -b.sides, b.criterion))


def required_candidates(rubric: Rubric, blamed: Sequence[Blame]) -> list[Candidate]:
    """For the most blamed criteria: the rubric with their ``required`` flag flipped."""
    from rubric_studio.engine.improve._candidates import with_criterion

    out = []
    for item in blamed[:MAX_REQUIRED_CANDIDATES]:
        make_required = not item.required
        changed = with_criterion(rubric, item.criterion, required=True if make_required else None)
        verb = "make" if make_required else "stop making"
        out.append(Candidate("required", {"criterion": item.criterion, "required": make_required},
                             f"{verb} {item.criterion} required (it explains {len(item.explains)} disagreeing "
                             f"fitting sample(s): {', '.join(item.explains[:5])})", changed))
    return out
