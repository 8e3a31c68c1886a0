"""The torch domain: what a torch call does to the abstract state. The generated op table
(``optable`` over ``data/optable.json``: what an op saves, aliases, mutates) and the semantics
the table cannot express: ``torch.*`` functions and grad mode (``torchsem``), tensor methods,
attributes, indexing and operators (``tensors``), nn modules and containers (``modules``),
optimizers (``optimizers``), custom autograd Functions (``functions``; how many values a
``backward`` returns, read from its code: ``returncount``), the Python builtins
followed over these values (``builtins``), shapes (``flowshape``, ``flowops``), and which
``__init__`` provably builds no container (``initprobe``).

The interpreter asks this room "what does this call do": each object here plays a role of the
interpreter (engine/assembly.py) and answers through the autograd graph (engine/checks/) that
the interpreter it is handed at run time holds, never by importing it.

May import: ``engine.state``, ``engine.front``, the shared models (``engine.diagnostic``,
``engine.events``, ``engine.entry``) and itself.
"""
