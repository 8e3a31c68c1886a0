"""A recurrent state cut inside the sequence that builds it (GW733)."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class StateDetachedEveryStep(Rule):
    """A loop-carried state detached at every iteration of the loop that builds it.

    ``for t in range(T): h = self.cell(x[:, t], h.detach())``, then a loss computed from the last ``h``
    after the loop: each iteration cuts the state it was handed, so the backward goes through the last
    iteration only. The earlier time steps (their inputs, and the weights' use at those steps) get no
    gradient; nothing raises, every parameter still gets a gradient from the last step, and the model
    never learns a dependency longer than one step. Often written "to avoid backpropagating through the
    graph a second time". Reported at the statement that rebinds the state: detach between sequences
    (truncated BPTT: once per chunk, with the backward inside the chunk loop), not between steps.
    A loop that backwards or steps itself, or that collects every iteration's state into the loss (an
    iterative refinement that detaches on purpose), is not reported.

    ``gradwarden debug`` proves it with the same code: the state fed back detached and the next backward
    skipping the detached graph.
    """

    event = "state_detached_every_step"
    code = "GW733"
    name = "state-detached-every-step"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # where the detach belongs (between sequences) is the loop's layout: moved by hand
    summary = "A recurrent state detached at every step of the loop that builds it: only the last step is backpropagated."
    message = "`{name}` is detached at every iteration of the loop at line {loop_line} that builds it: the backward " \
              "after the loop goes through the last iteration only, so the earlier steps get no gradient; detach " \
              "between sequences (truncated BPTT), not between steps"
    INVALID = (
        """
        import torch
        from torch import nn
        cell, head = nn.RNNCell(3, 5), nn.Linear(5, 1)
        opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
        x = torch.randn(4, 6, 3)
        h = torch.zeros(4, 5)
        for t in range(6):
            h = cell(x[:, t], h.detach())  # <-
        loss = head(h).pow(2).mean()
        loss.backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        cell, head = nn.RNNCell(3, 5), nn.Linear(5, 1)
        opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
        x = torch.randn(4, 6, 3)
        h = torch.zeros(4, 5)
        for chunk in range(2):
            h = h.detach()
            for t in range(3):
                h = cell(x[:, chunk * 3 + t], h)
            opt.zero_grad()
            head(h).pow(2).mean().backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        update = nn.Linear(4, 4)
        opt = torch.optim.SGD(update.parameters(), lr=0.1)
        target = torch.randn(2, 4)
        flow = torch.zeros(2, 4)
        preds = []
        for it in range(3):
            flow = flow + update(flow.detach())
            preds.append(flow)
        loss = sum((p - target).abs().mean() for p in preds)
        loss.backward()
        opt.step()
        """,
    )
