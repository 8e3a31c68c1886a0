"""The instrumentation of a gradwarden debug run, one concern per module (private).

Loaded by ``_child.py`` under a private name, in the target interpreter: the standard
library and torch only, never gradwarden. ``events``, ``userfiles``, ``coverage``, ``device``
and ``report`` need no torch; the others import it and are loaded once torch is there.
"""
