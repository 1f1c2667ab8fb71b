"""Bias probes: controlled perturbations of the judged text (padding, confident or hedging tone, a
reworded criterion, criteria order) re-judged to measure how often a verdict flips, per criterion,
each against a null perturbation (same meaning, other bytes): the judge's own noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.engine.probes._noise import (
        NoiseComparison,
        noise_verdict,
        paired_difference,
        wilson_interval,
    )
    from rubric_studio.engine.probes._perturb import (
        DESCRIPTIONS,
        KINDS,
        NULL_DESCRIPTION,
        NULL_KIND,
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
__all__ = [
    "CriterionProbe",
    "DESCRIPTIONS",
    "Flip",
    "KindProbe",
    "KINDS",
    "NoiseComparison",
    "noise_verdict",
    "NULL_DESCRIPTION",
    "NULL_KIND",
    "null_text",
    "paired_difference",
    "paraphrase",
    "parse_kinds",
    "perturb_text",
    "probed_criteria",
    "ProbeReport",
    "reorder",
    "run_probes",
    "wilson_interval",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
