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


class GradientOrder(Rule):
    """A custom Function's backward whose gradients, as their names say, are not in forward's order.

    ``backward`` returns the gradient of forward's i-th input at position i, whatever it is called.
    When the code names its gradients after the inputs (``grad_gamma``, ``g_time_first``,
    ``x_grad``) and those names put two gradients in each other's place, or a gradient is computed
    only under ``ctx.needs_input_grad[k]`` of another input than the one it names, each input gets
    another input's gradient (or None). Nothing raises when the shapes agree: the parameters train
    on the wrong numbers or not at all. Return the gradients in forward's order (and test
    ``needs_input_grad`` at the input's own index); ``torch.autograd.gradcheck`` confirms it.

    Read from the class's code; reported only when every name involved maps to one input.
    """

    event = "gradient_order"
    code = "GW723"
    name = "gradient-order"
    family = "F"
    severity = Severity.WARNING
    summary = "A custom backward returns its gradients in another order than forward's inputs (as their names say)."
    message = "`{fn}.backward`: {what}; autograd gives each input the gradient at its position, so the inputs get each other's gradients"
    NO_FIX = (0, 1)
    INVALID = (
        """
        import torch

        class FiLM(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, gamma, beta):
                ctx.save_for_backward(x, gamma)
                return x * gamma + beta

            @staticmethod
            def backward(ctx, grad_out):
                x, gamma = ctx.saved_tensors
                grad_x, grad_gamma, grad_beta = grad_out * gamma, grad_out * x, grad_out
                return grad_x, grad_beta, grad_gamma  # <-

        x, g, b = (torch.randn(4, requires_grad=True) for _ in range(3))
        FiLM.apply(x, g, b).sum().backward()
        """,
        """
        import torch

        class Binarize(torch.autograd.Function):
            @staticmethod
            def forward(ctx, weight, alpha):
                ctx.save_for_backward(weight)
                return torch.sign(weight) * alpha

            @staticmethod
            def backward(ctx, grad_output):
                (weight,) = ctx.saved_tensors
                grad_weight = grad_alpha = None
                if ctx.needs_input_grad[1]:  # <-
                    grad_weight = grad_output * (weight.abs() <= 1).type_as(grad_output)
                return grad_weight, grad_alpha

        w = torch.randn(4, requires_grad=True)
        Binarize.apply(w, 0.5).sum().backward()
        """,
    )
    VALID = (
        """
        import torch

        class FiLM(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, gamma, beta):
                ctx.save_for_backward(x, gamma)
                return x * gamma + beta

            @staticmethod
            def backward(ctx, grad_out):
                x, gamma = ctx.saved_tensors
                grad_x = grad_gamma = grad_beta = None
                if ctx.needs_input_grad[0]:
                    grad_x = grad_out * gamma
                if ctx.needs_input_grad[1]:
                    grad_gamma = grad_out * x
                if ctx.needs_input_grad[2]:
                    grad_beta = grad_out
                return grad_x, grad_gamma, grad_beta

        x, g, b = (torch.randn(4, requires_grad=True) for _ in range(3))
        FiLM.apply(x, g, b).sum().backward()
        """,
    )
