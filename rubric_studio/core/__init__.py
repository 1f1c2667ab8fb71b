"""The core: rubric and sample models, deterministic checks, scoring, loading.

Imports neither Textual nor any LLM SDK (a test enforces it), so it can be used
in pipelines and loads fast.
"""
