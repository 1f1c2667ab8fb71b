"""Bias probes: controlled perturbations of the judged text (padding, confident or hedging tone, a
reworded criterion, criteria order) re-judged to measure how often a verdict flips, per criterion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_studio._lazy import lazy_exports

if TYPE_CHECKING:
    from rubric_studio.engine.probes._perturb import DESCRIPTIONS, KINDS, paraphrase, perturb_text, reorder
    from rubric_studio.engine.probes._probes import (
        Flip,
        KindProbe,
        ProbeReport,
        parse_kinds,
        probed_criteria,
        run_probes,
    )

#: Public name -> the private module that defines it.
_EXPORTS = {
    "DESCRIPTIONS": "_perturb",
    "Flip": "_probes",
    "KindProbe": "_probes",
    "KINDS": "_perturb",
    "paraphrase": "_perturb",
    "parse_kinds": "_probes",
    "perturb_text": "_perturb",
    "probed_criteria": "_probes",
    "ProbeReport": "_probes",
    "reorder": "_perturb",
    "run_probes": "_probes",
}
__all__ = [
    "DESCRIPTIONS",
    "Flip",
    "KindProbe",
    "KINDS",
    "paraphrase",
    "parse_kinds",
    "perturb_text",
    "probed_criteria",
    "ProbeReport",
    "reorder",
    "run_probes",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
