"""Analysis by pieces: what the language server uses to re-analyse only what an edit changed
(``incremental`` over top-level statements, ``unitcache`` replaying the records of unchanged
ones, ``reparse`` parsing only the edited region, ``rowmove`` moving diagnostics with their
lines, ``unittriggers`` the trigger pre-pass per statement), and ``parts``, which analyses a very
large text in parts (the CLI's and the server's way through files over a million characters).

May import: every room below it (``engine.state``, ``engine.front``, ``engine.domain``,
``engine.interp``, ``engine.checks``, ``engine.assembly``), the engine's shared models and entry
points (``engine.analyze``), ``gradwarden.rules``, and itself.
"""
