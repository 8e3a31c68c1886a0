"""Family E: optimizer steps and missing detaches between forward and backward."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class StepBeforeBackward(Rule):
    """``optimizer.step()`` updates, in place, parameters that a pending backward still needs.

    The step bumps the parameters' version counters; a graph built before the step (kept
    alive by ``retain_graph=True`` or not yet backwarded) saved those parameters, so its
    backward raises ``... modified by an inplace operation``. The GAN pattern: D's step
    between G's forward through D and G's backward. Do both backward passes first and step
    afterwards, recompute the forward after the step, or detach what the other loss sees.
    """

    event = "step_before_backward"
    code = "GW501"
    name = "step-before-backward"
    family = "E"
    severity = Severity.ERROR
    summary = "optimizer.step() between a forward and a backward that still needs the old weights."
    message = "`{step}` updates {params} in place, but `{saver}` (line {save_line}) saved them for {backward}, which will raise"
    INVALID = (
        """
        import torch
        from torch import nn, optim
        G, D = nn.Linear(2, 2), nn.Linear(2, 2)
        optD = optim.Adam(D.parameters())
        t = torch.ones(2, requires_grad=True)
        d = D(G(t))
        d.sum().backward(retain_graph=True)
        optD.step()  # <-
        (G(t) + d).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn, optim
        G, D = nn.Linear(2, 2), nn.Linear(2, 2)
        optD = optim.Adam(D.parameters())
        t = torch.ones(2, requires_grad=True)
        d = D(G(t))
        d.sum().backward(retain_graph=True)
        optD.step()
        (G(t) + d.detach()).sum().backward()
        """,
    )


class FusedStepBeforeBackward(Rule):
    """A ``fused=True`` optimizer steps between a forward and a backward that needs the weights.

    Fused optimizers update parameters without bumping their version counters, so PyTorch
    raises nothing: the backward silently uses the *new* weights with the old activations.
    """

    event = "fused_step"
    code = "GW502"
    name = "fused-step-before-backward"
    family = "E"
    severity = Severity.WARNING
    summary = "fused=True optimizer step before a backward that needs the old weights (silent)."
    message = "`{step}` (fused) updates {params} without a version bump; {backward} silently uses the new weights"
    INVALID = (
        """
        import torch
        from torch import nn
        m = nn.Linear(2, 2)
        opt = torch.optim.Adam(m.parameters(), fused=True)
        x = torch.ones(3, 2, requires_grad=True)
        y = m(x)
        y.sum().backward(retain_graph=True)
        opt.step()  # <-
        y.sum().backward()
        """,
    )


class PollutedGradients(Rule):
    """A backward meant for one model leaks gradients into another model's parameters.

    The loss of model B is computed from model A's output without ``.detach()``; its backward
    accumulates into A's ``.grad``, and A's optimizer steps later without zeroing in between,
    so A is trained on a loss it should not see. Nothing raises. Detach A's output where it
    feeds B's loss (``D(fake.detach())``) or zero A's gradients right before its backward.
    """

    event = "polluted_grads"
    code = "GW503"
    name = "polluted-gradients"
    family = "E"
    severity = Severity.WARNING
    summary = "Backward of one model's loss accumulates into another model's gradients (missing detach)."
    message = "this loss reaches {params} through `{name}` without `.detach()`; its backward (line {backward_line}) adds to their .grad, and `{opt}.step()` (line {step_line}) uses it without a zero_grad in between"
    INVALID = (
        """
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake).mean()  # <-
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake.detach()).mean()
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
        """,
    )


class MissingDetachFreesGraph(Rule):
    """One model's backward frees another model's graph, because the other model's output
    entered this loss without ``.detach()``.

    The discriminator's loss is computed on the generator's output as is; its backward runs
    through the generator too and frees the generator's saved tensors. The generator's own
    backward, later, goes through that freed graph and raises ``Trying to backward through
    the graph a second time``. Train D on ``netD(fake.detach())``.
    """

    event = "missing_detach_frees"
    code = "GW504"
    name = "missing-detach-frees-graph"
    family = "E"
    severity = Severity.ERROR
    summary = "Another model's output enters this loss without .detach(); its backward frees that model's graph."
    message = ("`{name}` enters this loss without `.detach()`: the backward at line {freed_line} also frees the graph "
               "behind it, and {later} goes through that graph again and raises")
    INVALID = (
        """
        import torch
        import torch.nn as nn
        netG, netD = nn.Linear(4, 6), nn.Linear(6, 1)
        optD = torch.optim.SGD(netD.parameters(), lr=0.1)
        optG = torch.optim.SGD(netG.parameters(), lr=0.1)
        fake = netG(torch.randn(8, 4))
        errD = netD(fake).mean()  # <-
        errD.backward()
        optD.step()
        errG = -netD(fake).mean()
        errG.backward()
        optG.step()
        """,
    )
    VALID = (
        """
        import torch
        import torch.nn as nn
        netG, netD = nn.Linear(4, 6), nn.Linear(6, 1)
        optD = torch.optim.SGD(netD.parameters(), lr=0.1)
        optG = torch.optim.SGD(netG.parameters(), lr=0.1)
        fake = netG(torch.randn(8, 4))
        errD = netD(fake.detach()).mean()
        errD.backward()
        optD.step()
        errG = -netD(fake).mean()
        errG.backward()
        optG.step()
        """,
    )


class TargetNotDetached(Rule):
    """A regression target computed by the same parameters as the prediction, not detached.

    ``smooth_l1_loss(q, rewards + gamma * net(next_states).max(1).values)``: the bootstrap
    target goes through the very network being trained, so the gradient also pushes the
    target towards the prediction. Nothing raises; training is silently different from the
    algorithm (DQN, TD learning, self-distillation). Compute the target under
    ``torch.no_grad()`` or ``.detach()`` it.
    """

    event = "target_not_detached"
    code = "GW505"
    name = "target-not-detached"
    family = "E"
    severity = Severity.WARNING
    summary = "A regression target shares parameters with the prediction and is not detached."
    message = "`{name}` is computed through the same parameters as the prediction and used as a target (line {loss_line}) without `.detach()`: gradients flow into the target too"
    INVALID = (
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        net = nn.Linear(4, 2)
        s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
        q = net(s).max(1).values
        target = r + 0.9 * net(s2).max(1).values  # <-
        F.smooth_l1_loss(q, target).backward()
        """,
    )
    VALID = (
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        net = nn.Linear(4, 2)
        s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
        q = net(s).max(1).values
        with torch.no_grad():
            target = r + 0.9 * net(s2).max(1).values
        F.smooth_l1_loss(q, target).backward()
        """,
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        enc, disc = nn.Linear(4, 4), nn.Linear(4, 2)
        x = torch.randn(3, 4)
        feat_rec, feat_real = disc(enc(x)), disc(x)
        F.mse_loss(feat_rec, feat_real).backward()  # feature matching: trains `enc`
        """,
    )
