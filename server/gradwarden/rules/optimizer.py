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


class PolicyWeightNotDetached(Rule):
    """A policy-gradient term multiplies a log-probability by a weight (an advantage, a
    baseline-corrected return) that still carries a graph into other parameters (a critic).

    The REINFORCE estimator treats the weight as a constant. Without ``.detach()``, the
    policy loss also sends gradients into whatever computed the weight: the critic is pushed
    up wherever ``log pi`` is large, on top of its own value loss. Nothing raises; the
    training is silently wrong. Detach the weight where it is computed:
    ``advantages = (returns - values).detach()``.
    """

    event = "policy_weight_not_detached"
    code = "GW506"
    name = "policy-weight-not-detached"
    family = "E"
    severity = Severity.WARNING
    summary = "log_prob * advantage with an advantage that still trains the critic."
    # (reported only when an optimizer trains what computed the weight: otherwise its gradients
    # are wasted, not wrong)
    message = "`{name}` weights a log-probability (line {mul_line}) but still carries a graph into parameters of its own (a critic): the policy loss backwarded at line {backward_line} trains them too{tail} (use `.detach()`)"
    INVALID = (
        """
        import torch
        actor, critic = torch.nn.Linear(4, 2), torch.nn.Linear(4, 1)
        opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()))
        states, returns = torch.randn(8, 4), torch.randn(8)
        actions = torch.randint(0, 2, (8,))
        log_probs = torch.log_softmax(actor(states), -1).gather(1, actions[:, None]).squeeze(1)
        values = critic(states).squeeze(1)
        advantages = returns - values  # <-
        loss = -(log_probs * advantages).mean() + (returns - values).pow(2).mean()
        loss.backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        actor, critic = torch.nn.Linear(4, 2), torch.nn.Linear(4, 1)
        opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()))
        states, returns = torch.randn(8, 4), torch.randn(8)
        actions = torch.randint(0, 2, (8,))
        log_probs = torch.log_softmax(actor(states), -1).gather(1, actions[:, None]).squeeze(1)
        values = critic(states).squeeze(1)
        advantages = (returns - values).detach()
        loss = -(log_probs * advantages).mean() + (returns - values).pow(2).mean()
        loss.backward()
        opt.step()
        """,
    )


class PeerTargetNotDetached(Rule):
    """A distillation or mutual-learning loss uses another trained model's prediction as its
    target distribution without ``.detach()``.

    ``kl_div(log_softmax(student), softmax(peer))`` sends gradients into the peer as well: the
    peer is trained to match the student, on top of its own loss (in deep mutual learning each
    model learns from the other's *fixed* prediction). Nothing raises; the gradients are
    silently not the ones the method specifies. Detach the target: ``softmax(peer).detach()``
    (or compute it under ``torch.no_grad()``).
    """

    event = "peer_target_not_detached"
    code = "GW507"
    name = "peer-target-not-detached"
    family = "E"
    severity = Severity.WARNING
    summary = "A soft target from another trained model is not detached (the loss trains that model too)."
    message = "the target distribution{name} of the loss at line {loss_line} still carries another trained model's graph: the backward at line {backward_line} sends it gradients that `{step}` (line {step_line}) applies, pulling that model toward this prediction (use `.detach()`)"
    INVALID = (
        """
        import torch
        import torch.nn.functional as F
        m1, m2 = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(list(m1.parameters()) + list(m2.parameters()), lr=0.1)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        l1 = m1(x)
        p2 = F.softmax(m2(x), 1)  # <-
        loss = F.cross_entropy(l1, y) + F.kl_div(F.log_softmax(l1, 1), p2, reduction="batchmean")
        loss.backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        import torch.nn.functional as F
        m1, m2 = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(list(m1.parameters()) + list(m2.parameters()), lr=0.1)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        l1 = m1(x)
        p2 = F.softmax(m2(x), 1).detach()
        loss = F.cross_entropy(l1, y) + F.kl_div(F.log_softmax(l1, 1), p2, reduction="batchmean")
        loss.backward()
        opt.step()
        """,
        """
        import torch
        import torch.nn.functional as F
        student, teacher = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(student.parameters(), lr=0.1)  # the teacher is not trained
        x = torch.randn(8, 4)
        loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(teacher(x), 1), reduction="batchmean")
        loss.backward()
        opt.step()
        """,
    )
