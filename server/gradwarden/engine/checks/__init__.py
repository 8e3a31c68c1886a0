"""The checks over the abstract state, each emitting ``Event``s that ``gradwarden.rules`` turns
into diagnostics. Autograd lifetime: ops that record nodes and save tensors (``autograd``),
in-place writes with PyTorch's on-the-spot checks (``writes``), backward with its version and
freed-graph checks (``backward``). Gradient flow: which tensors certainly do not require grad
and why (``flow``, ``flowfacts``), recorded by layers over the domain (``flowtorch``) and over
the graph and the interpreter (``flowlayers``), and checked at a backward (``flowchecks``) and
around training (``training``). Views and overlapping writes (``flowviews``), gradients never
zeroed (``zerograd``). Silent gradient flow (issue 24): which parameters the backwarded losses
reach and where the other paths were cut (``reach``), training steps that take a module's
eval-mode branch (``modes``), unselected branches with a non-finite gradient (``branches``; the zero diagonal
of a pairwise self-difference under a division or ``sqrt``: ``zerodiag``),
forward-hook slots overwritten by a second call (``hookslots``), custom backwards whose gradients
are out of forward's order (``gradorder``).

May import: ``engine.state``, ``engine.front``, ``engine.domain``, ``engine.interp`` (the flow
layers specialise the interpreter's roles), the shared models (``engine.diagnostic``,
``engine.events``, ``engine.entry``) and itself.
"""
