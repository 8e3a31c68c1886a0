"""Analysis by pieces. What the language server uses to re-analyse only what an edit changed:
``incremental`` over top-level statements, ``unitcache`` replaying the records of unchanged
ones, ``reparse`` parsing only the edited region, ``rowmove`` moving diagnostics with their
lines, ``unittriggers`` the trigger pre-pass per statement. And ``parts``, which analyses a
very large text in parts (the way of the CLI and of the server through a file over a million
characters).

May import: every room below it (``engine.state``, ``engine.front``, ``engine.domain``,
``engine.interp``, ``engine.checks``), ``engine.assembly``, the whole-text analysis
(``engine.analyze``), the shared models (``engine.diagnostic``, ``engine.events``,
``engine.entry``), the rules (``gradwarden.rules``: events to diagnostics) and itself.
"""
