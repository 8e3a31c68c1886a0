"""GW725: a loop's zeroing call that covers only part of what its optimizer steps
(engine/checks/training.py ``_partly_zeroed``): ``model.zero_grad()`` with a tensor kept beside the
model in the optimizer. Each flagged program was run under torch 2.13 while it was written: the
uncovered tensor's ``.grad`` at the last step is the sum of every step's gradient."""
from __future__ import annotations

import textwrap
from typing import List, Tuple

from gradwarden.engine.analyze import analyze_source


def _found(src: str) -> List[Tuple[str, int]]:
    return [(d.code, d.span.row) for d in analyze_source(textwrap.dedent(src).lstrip("\n"), "prog.py")
            if d.severity.label in ("error", "warning")]


WEIGHTED = """
    import torch
    from torch import nn

    def task_losses(net, x):
        out = net(x)
        return out[:, 0].pow(2).mean(), out[:, 1].abs().mean()

    net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
    log_vars = torch.zeros(2, requires_grad=True)
    opt = torch.optim.Adam(list(net.parameters()) + [log_vars], lr=1e-3)
    for it in range(6):
        a, b = task_losses(net, torch.randn(16, 5))
        loss = a * torch.exp(-log_vars[0]) + b * torch.exp(-log_vars[1]) + log_vars.sum()
        {zero}
        loss.backward()
        {step}
"""


def test_a_module_zero_grad_that_misses_a_tensor_the_optimizer_steps_is_reported_at_the_call():
    assert _found(WEIGHTED.format(zero="net.zero_grad()", step="opt.step()")) == [("GW725", 14)]


def test_zeroing_everything_the_optimizer_holds_is_silent():
    assert _found(WEIGHTED.format(zero="opt.zero_grad()", step="opt.step()")) == []
    both = "net.zero_grad()\n        log_vars.grad = None"
    assert _found(WEIGHTED.format(zero=both, step="opt.step()")) == []


def test_accumulation_that_leaves_every_parameter_alike_is_silent():
    step = "if (it + 1) % 3 == 0:\n            opt.step()\n            opt.zero_grad()"
    assert _found(WEIGHTED.format(zero="pass", step=step)) == []


def test_two_models_each_zeroed_with_its_own_optimizer_are_silent():
    src = """
        import torch
        from torch import nn
        gen, disc = nn.Linear(3, 4), nn.Linear(4, 1)
        opt_g = torch.optim.Adam(gen.parameters())
        opt_d = torch.optim.Adam(disc.parameters())
        for _ in range(3):
            z, real = torch.randn(8, 3), torch.randn(8, 4)
            disc.zero_grad()
            loss_d = disc(gen(z).detach()).mean() - disc(real).mean()
            loss_d.backward()
            opt_d.step()
            gen.zero_grad()
            loss_g = -disc(gen(z)).mean()
            loss_g.backward()
            opt_g.step()
    """
    assert _found(src) == []
