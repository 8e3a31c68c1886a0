"""Explanations for hover: the interpreter re-run with recording roles (``recorder``) gives the
version-counter timeline of the tensor under the cursor (``timeline``, ``explain.explain_at``).
Never on the lint path.

May import: every room below it (``engine.state``, ``engine.front``, ``engine.domain``,
``engine.interp``, ``engine.checks``), ``engine.assembly``, the shared models
(``engine.diagnostic``, ``engine.events``, ``engine.entry``) and itself.
"""
