"""The core: rubric and sample models, deterministic checks, scoring, loading.

Imports neither Textual nor any LLM SDK (a test enforces it), so it can be used
in pipelines and loads fast.
"""

from __future__ import annotations

from rubric_studio._lazy import lazy_submodules

#: The public modules of this package, each imported on first use (``rubric_studio.core.<name>``).
__all__ = [
    "agreement",
    "atomic",
    "checks",
    "discovery",
    "document",
    "examples",
    "files",
    "human_agreement",
    "labels",
    "loading",
    "numbers",
    "panel",
    "pass_rate",
    "problems",
    "providers",
    "results",
    "rubric",
    "safe_text",
    "samples",
    "scoring",
    "textstream",
    "trust",
    "userdir",
    "values",
    "yamlpos",
]
__getattr__, __dir__ = lazy_submodules(__name__, __all__)
