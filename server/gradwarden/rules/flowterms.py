"""Family H, gradient flow: parts of a loss that cannot contribute to its gradient (a term cut
from the graph and added back as a constant, a detached copy a forward hook keeps)."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class DeadLossTerm(Rule):
    """A part of a backwarded loss that was cut from the graph, so it contributes nothing to the
    gradient.

    A term added to the loss as a number or a graph-less tensor (``loss = rec + beta *
    float(kld)``, ``total + log_var.item()``, ``pg_loss - c * entropy`` where the entropy comes
    from a ``@torch.no_grad()`` helper) shifts the value the loss reports but adds a constant to
    its gradient: zero. A forward hook that keeps ``output.detach()`` (or ``output.clone().
    detach()``) for skip connections or a perceptual loss hands the loss a copy without a graph:
    the gradient through that path is lost. Nothing raises; the regulariser, bonus or feature
    loss silently never trains anything. Keep the term a tensor of the graph (log
    ``float(term)`` separately), and store ``output`` itself in the hook when a loss is computed
    from it.

    Reported at the cut (the ``float()``/``.item()``, the call of the ``no_grad`` helper, the
    hook's store) when the analysis sees the value cut from a graph that requires grad and then
    used by a backwarded loss: as a term of its sum, or anywhere for a hook's copy. ``x +
    (q - x).detach()`` (a straight-through estimator) and ``logp - logp.detach()`` (a
    surrogate) are not terms that cannot contribute.
    """

    event = "dead_term"
    code = "GW722"
    name = "dead-loss-term"
    family = "H"
    severity = Severity.WARNING
    summary = "A part of a backwarded loss cut from the graph (`.item()`, `float()`, no_grad, a hook's detached copy)."
    message = "{why}: the loss backwarded at line {backward_line} gets no gradient through it; keep it a tensor of the graph"
    NO_FIX = (0, 1, 2)
    INVALID = (
        """
        import torch
        from torch import nn
        enc, dec = nn.Linear(6, 2), nn.Linear(2, 6)
        x = torch.randn(8, 6)
        z = enc(x)
        rec = (dec(z) - x).pow(2).mean()
        kl = 0.1 * float(z.pow(2).mean())  # <-
        loss = rec + kl
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        policy = nn.Linear(4, 3)

        @torch.no_grad()
        def entropy_of(obs):
            return torch.distributions.Categorical(logits=policy(obs)).entropy().mean()

        obs, actions, adv = torch.randn(16, 4), torch.randint(0, 3, (16,)), torch.randn(16)
        logp = torch.distributions.Categorical(logits=policy(obs)).log_prob(actions)
        loss = -(logp * adv).mean() - 0.01 * entropy_of(obs)  # <-
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        encoder, head = nn.Sequential(nn.Linear(4, 8), nn.ReLU()), nn.Linear(16, 1)
        kept = {}

        def keep(module, inputs, output):
            kept["feat"] = output.detach()  # <-

        encoder.register_forward_hook(keep)
        h = encoder(torch.randn(2, 4))
        loss = head(torch.cat([h, kept["feat"]], dim=1)).pow(2).mean()
        loss.backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        enc, dec = nn.Linear(6, 2), nn.Linear(2, 6)
        x = torch.randn(8, 6)
        z = enc(x)
        rec = (dec(z) - x).pow(2).mean()
        kl = z.pow(2).mean()
        loss = rec + 0.1 * kl
        loss.backward()
        print(float(rec), float(kl))  # numbers for the log
        """,
        """
        import torch
        from torch import nn
        encoder, head = nn.Sequential(nn.Linear(4, 8), nn.ReLU()), nn.Linear(8, 1)
        kept = {}
        encoder.register_forward_hook(lambda m, i, o: kept.__setitem__("feat", o.detach()))  # for a plot only
        loss = head(encoder(torch.randn(2, 4))).pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(8, 4)
        z = x @ w
        z_q = z + (torch.round(z) - z).detach()  # straight-through estimator
        loss = (z_q - 1).pow(2).mean()
        loss.backward()
        """,
    )
