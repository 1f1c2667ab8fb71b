"""Who gave a label: annotators in the labels sidecar, and the consensus of several.

A sidecar entry holds every annotator's label of one sample (docs/reference/files.md#several-annotators)::

    sample-id:
      verdict: pass              # the label of the annotator named below
      criteria: {tone: met}
      annotator: alice           # absent: an unnamed annotator (a sidecar written before annotators)
      annotators:                # everyone else who labelled this sample, each a label of its own
        bob: {verdict: fail, criteria: {tone: unmet}}
        adjudicated: {verdict: pass}

A sidecar written before annotators existed loads unchanged: its labels belong to the unnamed
annotator (:data:`UNNAMED`). A label written for a person goes to the top level when the entry
has no label yet (or the top level is theirs), else under ``annotators:``; one annotator's write
never touches another's label.

Consensus (what judge-vs-human agreement, ``improve`` and the studio compare the judge with):
per field, the majority of the annotators who gave that field — a verdict, a criterion's
met/unmet — with a tie giving no consensus for that field; scores are averaged; notes are joined
(each after its annotator's name when more than one gave a note).
A label from :data:`ADJUDICATED` wins over the majority, field by field.
"""

from __future__ import annotations

import getpass
import os
from collections import Counter
from collections.abc import Mapping
from typing import Any

#: The annotator of labels written with no name (a sidecar from before annotators).
UNNAMED = "(unnamed)"
#: The annotator whose label settles a disagreement: it wins for consensus.
ADJUDICATED = "adjudicated"
#: The entry keys that say who labelled (beside a label's own keys).
ENTRY_KEYS = ("annotator", "annotators")
ENV_VAR = "RUBRIC_STUDIO_ANNOTATOR"


def check_name(name: str) -> str:
    """``name`` stripped; ValueError when it cannot name an annotator."""
    cleaned = str(name).strip()
    if not cleaned or cleaned == UNNAMED or any(c in cleaned for c in "\n\r\t:#{}[],"):
        raise ValueError(f"not an annotator name: {name!r} (use letters, digits, '.', '-', '_' or spaces)")
    return cleaned


def current_annotator(given: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Who is labelling: ``given`` (``--annotator``), else ``RUBRIC_STUDIO_ANNOTATOR``, else the OS user.

    ValueError for a name that cannot be one; :data:`UNNAMED` when the OS user is unknown.
    """
    env = os.environ if env is None else env
    if given is not None:
        return UNNAMED if given.strip() == UNNAMED else check_name(given)
    if env.get(ENV_VAR, "").strip():
        return check_name(env[ENV_VAR])
    try:
        return check_name(getpass.getuser())
    except (OSError, KeyError, ValueError, ImportError):
        return UNNAMED


def annotator_is_named(given: str | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Whether the annotator was named (``--annotator`` or ``RUBRIC_STUDIO_ANNOTATOR``) rather than
    taken from the OS user: the studio then shows whose labels its keys write."""
    env = os.environ if env is None else env
    return given is not None or bool(env.get(ENV_VAR, "").strip())


def majority(values: list[str]) -> str | None:
    """The most common value; None on a tie for the most (or no values)."""
    ranked = Counter(values).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def annotator_names(by_sample: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every annotator who labelled something, in order of first appearance (adjudication last)."""
    names = list(dict.fromkeys(name for labels in by_sample.values() for name in labels))
    return [n for n in names if n != ADJUDICATED] + ([ADJUDICATED] if ADJUDICATED in names else [])


def labels_of(by_sample: Mapping[str, Mapping[str, Any]], annotator: str) -> dict[str, Any]:
    """One annotator's labels by sample id."""
    return {sample_id: labels[annotator] for sample_id, labels in by_sample.items() if annotator in labels}
