"""Bias probes: controlled perturbations of the judged text (padding, confident or hedging tone, a
reworded criterion, criteria order, a content-free answer) re-judged to measure how often a verdict
moves, each kind against a null perturbation (same meaning, other bytes): the judge's own noise,
decided once per kind over all its criteria, or "can't tell" with what the probe could not see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

# ruff: noqa: F401 - the typing block restates _EXPORTS for type checkers (tests/test_lazy_surfaces.py)
if TYPE_CHECKING:
    from rubric_studio.engine.probes._decision import (
        KindDecision,
        Reading,
        Table,
        detectable_shift,
        exceed_p,
        read_table,
    )
    from rubric_studio.engine.probes._noise import (
        NoiseComparison,
        noise_verdict,
        paired_difference,
        wilson_interval,
    )
    from rubric_studio.engine.probes._perturb import (
        CONTENT_FREE,
        DESCRIPTIONS,
        DIRECTIONS,
        KINDS,
        NULL_DESCRIPTION,
        NULL_KIND,
        content_free,
        null_text,
        paraphrase,
        perturb_text,
        reorder,
    )
    from rubric_studio.engine.probes._probes import (
        CriterionProbe,
        Flip,
        KindProbe,
        ProbeReport,
        parse_kinds,
        probed_criteria,
        run_probes,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "CONTENT_FREE": "_perturb",
    "content_free": "_perturb",
    "detectable_shift": "_decision",
    "DIRECTIONS": "_perturb",
    "exceed_p": "_decision",
    "KindDecision": "_decision",
    "read_table": "_decision",
    "Reading": "_decision",
    "Table": "_decision",
    "CriterionProbe": "_probes",
    "DESCRIPTIONS": "_perturb",
    "Flip": "_probes",
    "KindProbe": "_probes",
    "KINDS": "_perturb",
    "NoiseComparison": "_noise",
    "noise_verdict": "_noise",
    "NULL_DESCRIPTION": "_perturb",
    "NULL_KIND": "_perturb",
    "null_text": "_perturb",
    "paired_difference": "_noise",
    "paraphrase": "_perturb",
    "parse_kinds": "_probes",
    "perturb_text": "_perturb",
    "probed_criteria": "_probes",
    "ProbeReport": "_probes",
    "reorder": "_perturb",
    "run_probes": "_probes",
    "wilson_interval": "_noise",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
