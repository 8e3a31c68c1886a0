"""The interpreter: runs a module's statements and expressions over the abstract state,
path-sensitively, with calls inlined. ``interpreter`` holds one run and what its roles share;
the roles of Python semantics are here (``statements``, ``stores``, ``expressions``, ``calls``,
``unreached``: the functions the module's own code never ran; ``annotations``: what an
argument's annotation or default says it is; ``records``: the ``__init__`` a ``@dataclass`` generates; ``projects``: what an import of a module of the
user's project binds), with a per-definition work budget (``budget``:
where it ran out is named by the note that says so).

For anything torch it asks the objects of the domain and of the checks it holds as roles, built
by ``engine.assembly``: it never imports the checks.

May import: ``engine.state``, ``engine.front``, ``engine.domain``, the shared models
(``engine.diagnostic``, ``engine.events``, ``engine.entry``) and itself.
"""
