"""How a sample's human label is read: its own ``label`` field overlaid by the sidecar's.

The sidecar (``--labels`` or ``<rubric>.labels.yaml``) wins field by field: its verdict, score
and note when it gives them, its cells over the inline ones. Every command reads labels this one
way: ``calibrate`` (and ``card``, ``probe``, ``improve``, ``validate`` through its
:func:`~rubric_studio.cli.calibrate.read_labels`) for the whole sidecar at once, ``grade`` and
``jobs wait`` label by label as samples stream past, to correct their pass rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rubric_studio.core.labels import Label


def inline_label(sample: Any) -> Label | None:
    """A sample's own ``label`` field, or None when it has none; ValueError (naming the sample)
    when it does not read as a label."""
    from rubric_studio.core.labels import parse_label

    if sample.label is None:
        return None
    return parse_label(sample.label, where=f"{sample.id}.label")


def overlaid(inline: Label | None, sidecar: Label | None) -> Label | None:
    """``sidecar``'s fields over ``inline``'s (either may be missing). A verdict the sidecar's
    annotators tied on leaves the inline verdict, which then is no tie."""
    from rubric_studio.core.labels import Label

    if inline is None or sidecar is None:
        return sidecar or inline
    return Label(
        verdict=sidecar.verdict if sidecar.verdict is not None else inline.verdict,
        score=sidecar.score if sidecar.score is not None else inline.score,
        criteria={**inline.criteria, **sidecar.criteria},
        note=sidecar.note if sidecar.note is not None else inline.note,
        criterion_scores={**inline.criterion_scores, **sidecar.criterion_scores},
        ties=tuple(t for t in sidecar.ties if t != "verdict" or inline.verdict is None),
        given_under={**{c: g for c, g in inline.given_under.items() if c not in sidecar.criteria},
                     **sidecar.given_under},
    )
