"""The engine: grading runs over checks and judges, the reply cache, incremental plans.

Imports no Textual (a test enforces it). The studio and the CLI both drive
:class:`~rubric_studio.engine.grader.Grader`; :mod:`rubric_studio.engine.api`
wraps it for one-shot use.
"""
