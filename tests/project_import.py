"""A script that needs a model imported from its project: GW501 (the step at line 9 updates the
weights that the retained graph's second backward needs) is found only when ``models.D`` is
followed, since ``D``'s linear layer is what saved them. Shared by the tests of import following,
of the result cache (keyed by the followed files) and of the engine's cost counters."""
import textwrap

TRAIN = textwrap.dedent("""
    import torch
    from models import D
    d = D()
    opt = torch.optim.SGD(d.parameters(), lr=0.1)
    x = torch.randn(8, 4, requires_grad=True)
    out = d(x)
    out.sum().backward(retain_graph=True)
    opt.step()
    out.mean().backward()
""")
