"""The studio: a Textual app over the core and the engine (BRIEF §1, §7).

Modules: ``app`` (StudioApp: layout, workers, message handlers), ``messages``
(engine events and file changes as Textual messages), ``model`` (pure state:
flips, filters, sorting; no Textual), ``matrix`` (the virtualised results
table), ``inspector``, ``statusbar``, ``help``, ``conflict`` (the external-change
prompt), ``watch`` (watchfiles on the folders of the files in use).
"""
