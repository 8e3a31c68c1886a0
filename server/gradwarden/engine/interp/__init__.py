"""The interpreter: runs a module's statements and expressions over the abstract state,
path-sensitively, with calls inlined (``interpreter`` holds the run and its roles,
``statements``, ``expressions``, ``calls``; ``unreached`` analyses the functions the module's
own code never ran) within a per-definition work budget (``budget``).

For anything torch it asks the objects of the domain and the checks that it holds (its roles),
without importing them: ``engine.assembly`` chooses which object plays each role.
May import: ``engine.state``, ``engine.front``, ``engine.domain``, the engine's shared models,
and itself.
"""
