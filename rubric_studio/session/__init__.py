"""The studio's state and commands without Textual.

A :class:`~rubric_studio.session.studio.StudioSession` owns what one studio window works on:
the rubric document, the samples, the human labels, the versions and the grading runs. The
Textual app holds one session, sends it commands and renders the events it reports; every
flow (labelling, calibration, interop) is a session method a test can drive without a screen.
"""

from __future__ import annotations

from rubric_studio._lazy import lazy_submodules

#: The public modules of this package, each imported on first use (``rubric_studio.session.<name>``).
__all__ = [
    "calibration",
    "interop",
    "labels",
    "results_model",
    "studio",
    "trust",
    "versions",
]
__getattr__, __dir__ = lazy_submodules(__name__, __all__)
