"""The torch domain: what a torch call does to the abstract state. The generated op table
(``optable`` over ``data/optable.json``: what an op saves, aliases, mutates), and the
semantics the table cannot express: torch functions and grad mode (``torchsem``), tensor
methods, attributes, indexing and operators (``tensors``), nn modules and containers
(``modules``), optimizers (``optimizers``), custom autograd Functions (``functions``), the
Python builtins followed over these values (``builtins``), shapes (``flowshape``,
``flowops``), and which ``__init__`` provably builds no container (``initprobe``).

The interpreter asks this room "what does this call do"; its objects answer through the
autograd model (``checks``) and the interpreter they are handed at run time (never imported).
May import: ``engine.state``, ``engine.front``, the engine's shared models, and itself.
"""
