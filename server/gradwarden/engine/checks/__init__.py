"""The checks over the abstract state, each emitting ``Event``s that ``gradwarden.rules`` turns
into diagnostics: autograd lifetime (ops that record nodes and save tensors, in-place writes and
PyTorch's on-the-spot checks, backward with its version and freed-graph checks: ``autograd``,
``writes``, ``backward``), gradient flow (``flow``: which tensors certainly do not require grad
and why, with ``flowfacts``, the layers that observe the domain ``flowtorch`` and the
interpreter ``flowlayers``, and the checks ``flowchecks``, ``training``), views
(``flowviews``) and gradients never zeroed (``zerograd``).

May import: ``engine.state``, ``engine.front``, ``engine.domain``, ``engine.interp`` (the flow
layers specialise the interpreter's roles), the engine's shared models, and itself.
"""
