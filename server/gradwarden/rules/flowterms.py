"""Silent gradient flow (issue 24): parameters no backwarded loss reaches, unselected branches with
a non-finite gradient, forward-hook slots overwritten by a second call, parts of a loss that cannot
contribute to its gradient (a term cut from the graph and added back as a constant, a detached copy
a forward hook keeps), custom backwards whose gradients are out of forward's order."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class UntrainedParameter(Rule):
    """A parameter handed to an optimizer that no backwarded loss reaches.

    The optimizer steps it, but its ``.grad`` stays ``None`` at every step: the program uses
    its value only through a copy that carries no gradient back. ``.detach()`` (a
    straight-through output ``x + (q - x).detach()`` used for the codebook's own loss, features
    kept by a forward hook as ``output.detach()``), ``.data``, ``.item()``/``float()``/
    ``.tolist()``/``.numpy()`` added back to the loss as a number, a computed tensor re-wrapped
    as a new leaf (``nn.Parameter(evolved_w)``), a value computed under ``torch.no_grad()``. Or the
    optimizer no longer holds it: one rebuilt each epoch (a learning-rate schedule) from a one-shot
    iterator (``filter(...)``) that the first one consumed gets an empty group, and from then on
    the parameters' gradients are applied by no optimizer (reported where the iterator is made:
    ``list(filter(...))`` is the fix). Or the optimizer's groups are filters over one module's
    ``named_parameters()`` (weight decay for matrices, none for biases) that together leave a
    parameter the loss trains out of every group: reported at the filter that should take it
    (``p.dim() < 2``, not only ``n.endswith(".bias")``). A module the program put in ``.eval()``
    whose outputs it detaches is frozen on purpose and not reported.
    Nothing raises; that part of the model silently never trains. Compute the loss term on the
    tensor itself, or freeze the parameter on purpose (``requires_grad_(False)``, left out of
    the optimizer).

    ``gradwarden debug`` proves it from the run: the parameter's ``.grad`` at each step after a
    backward, and the line where a value computed from it left the graph; a module whose forward
    reads ``self.training`` run in eval mode by a training step while its own parameters get no
    gradient (at the ``.train(False)``/``.eval()``); an optimizer whose parameters never get a
    gradient while another instance of their model's class, built later, gets gradients that no
    optimizer holds (at that instance's construction).
    """

    event = "untrained_parameter"
    code = "GW719"
    name = "untrained-parameter"
    family = "H"
    severity = Severity.WARNING
    summary = "An optimizer's parameter that no backwarded loss reaches (it never trains)."
    message = "{names}, {fate}: {why}"
    NO_FIX = (0, 1, 2, 3)
    INVALID = (
        """
        import torch
        from torch import nn
        hyper, head = nn.Linear(4, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD(list(hyper.parameters()) + list(head.parameters()), lr=0.1)
        for _ in range(2):
            w = hyper(torch.eye(4))
            layer_w = nn.Parameter(w)  # <-
            loss = head(torch.randn(3, 4) @ layer_w).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        encoder, codebook = nn.Linear(4, 3), nn.Embedding(8, 3)
        opt = torch.optim.SGD(list(encoder.parameters()) + list(codebook.parameters()), lr=0.1)
        for _ in range(2):
            z = encoder(torch.randn(16, 4))
            book = codebook.weight.detach()  # <-
            q = book[torch.cdist(z, book).argmin(-1)]
            loss = (q - z).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
        head_params = filter(lambda p: p.requires_grad, head.parameters())  # <-
        def make_opt(lr):
            return torch.optim.SGD([{"params": head_params, "lr": lr * 10}, {"params": backbone.parameters()}], lr=lr)
        opt = make_opt(0.1)
        for epoch in range(3):
            for _ in range(2):
                loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            opt = make_opt(0.1 / (epoch + 1))  # a new optimizer per epoch: its head group is empty
        """,
        """
        import torch
        from torch import nn
        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(20, 8)
                self.pos = nn.Parameter(torch.zeros(1, 6, 8))  # a learned position embedding ...
                layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
                self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
                self.head = nn.Linear(8, 2)
            def forward(self, tokens):
                h = self.tok(tokens)  # <- ... never added: `self.tok(tokens) + self.pos`
                return self.head(self.encoder(h).mean(1))
        model = Classifier()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(2):
            loss = model(torch.randint(0, 20, (3, 6))).logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        encoder, codebook, decoder = nn.Linear(4, 3), nn.Embedding(8, 3), nn.Linear(3, 4)
        params = list(encoder.parameters()) + list(codebook.parameters()) + list(decoder.parameters())
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(2):
            x = torch.randn(16, 4)
            z = encoder(x)
            q = codebook(torch.cdist(z, codebook.weight).argmin(-1))
            z_q = z + (q - z).detach()  # straight-through: the decoder's gradient reaches the encoder
            loss = (decoder(z_q) - x).pow(2).mean() + (q - z.detach()).pow(2).mean()  # codebook loss on q
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 8), nn.Linear(8, 2)
        backbone.requires_grad_(False)  # frozen on purpose: the head trains
        opt = torch.optim.SGD([p for p in list(backbone.parameters()) + list(head.parameters()) if p.requires_grad],
                              lr=0.1)
        for _ in range(2):
            loss = head(backbone(torch.randn(3, 4))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
        head_params = list(filter(lambda p: p.requires_grad, head.parameters()))  # a list: every rebuild gets it
        def make_opt(lr):
            return torch.optim.SGD([{"params": head_params, "lr": lr * 10}, {"params": backbone.parameters()}], lr=lr)
        opt = make_opt(0.1)
        for epoch in range(3):
            for _ in range(2):
                loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            opt = make_opt(0.1 / (epoch + 1))
        """,
    )


class NonfiniteBranchGradient(Rule):
    """A branch that the forward does not use, but whose gradient is NaN or infinite.

    ``torch.where(mask, x, 1 / x)``, ``torch.where(p > 0, p * p.log(), 0)``, a ``log`` of
    probabilities that are masked afterwards: where the mask drops an element, the forward
    value is never used, yet backward differentiates every element. There the incoming
    gradient is 0 and the op's derivative is infinite or undefined (``1/x`` or ``log`` at 0,
    an ``exp`` that overflowed, ``sqrt`` at 0), and ``0 x inf = NaN`` reaches the parameters.
    Nothing raises; the weights turn into NaN or silently stop training. Make the branch
    finite before the op (``safe = torch.where(p > 0, p, 1)``, then ``p * safe.log()``), or
    clamp its input.

    ``gradwarden debug`` proves it from the run: the backward of that op turned a zero
    incoming gradient into NaN/inf, and the non-finite values reached a gradient the program
    gets.
    """

    event = "nonfinite_branch"
    code = "GW720"
    name = "nonfinite-branch-gradient"
    family = "H"
    severity = Severity.WARNING
    summary = "An unused where/mask branch whose gradient is NaN/inf (0 x inf reaches the parameters)."
    message = "`{op}` at line {line} is non-finite where `{mask}` does not select it: its gradient there is 0 x inf = NaN, which reaches {target}"
    NO_FIX = (0, 1, 2, 3)
    INVALID = (
        """
        import torch
        p = torch.tensor([0.0, 0.2, 0.3, 0.5], requires_grad=True)  # routing weights with exact zeros
        entropy = -torch.where(p > 0, p * torch.log(p), torch.zeros_like(p)).sum()  # <-
        entropy.backward()
        """,
        """
        import torch
        v = torch.randn(5, 3, requires_grad=True)
        n = v.norm(dim=-1, keepdim=True) * (torch.arange(5) < 3).float()[:, None]
        unit = torch.where(n > 0, v / n, torch.zeros_like(v))  # <-
        unit.sum().backward()
        """,
        """
        import torch
        x = torch.tensor([-3.0, 25.0, 100.0], requires_grad=True)
        rate = torch.where(x > 20.0, x, torch.log1p(torch.exp(x)))  # <-
        rate.sum().backward()
        """,
        """
        import torch
        from torch import nn
        policy = nn.Linear(4, 5)
        legal = torch.tensor([[True, True, False, True, False]] * 3)
        logits = policy(torch.randn(3, 4)).masked_fill(~legal, float("-inf"))
        logp = logits.log_softmax(-1)  # <-
        entropy = -(logp.exp() * logp).nan_to_num(0.0).sum()
        entropy.backward()
        """,
    )
    VALID = (
        """
        import torch
        p = torch.relu(torch.randn(8, requires_grad=True))
        safe = torch.where(p > 0, p, torch.ones_like(p))  # the log never sees a 0
        entropy = -torch.where(p > 0, p * safe.log(), torch.zeros_like(p)).sum()
        entropy.backward()
        """,
        """
        import torch
        v = torch.randn(5, 3, requires_grad=True)
        n = v.norm(dim=-1, keepdim=True)
        unit = torch.where(n > 0, v / n.clamp_min(1e-8), torch.zeros_like(v))  # the division never sees a 0
        unit.sum().backward()
        """,
        """
        import torch
        from torch import nn
        policy = nn.Linear(4, 5)
        legal = torch.tensor([[True, True, False, True, False]] * 3)
        logits = policy(torch.randn(3, 4)).masked_fill(~legal, float("-inf"))
        logp = logits.log_softmax(-1).clamp_min(-1e4)  # finite where the mask is
        entropy = -(logp.exp() * logp).sum()
        entropy.backward()
        """,
    )


class HookOverwritesActivation(Rule):
    """A forward hook that keeps a module's output in one slot, on a module called several
    times per step.

    ``self.features[name] = output`` (or ``self.activation = output``) keeps only the last
    call's output: a module shared by two towers, or applied twice, overwrites the first
    call's activation before the loss reads it, and a penalty or feature loss computed from the
    slot silently covers one call only, with the gradient of that call only. Keep every call
    (``self.features.setdefault(name, []).append(output)``, cleared each step), or register the
    hook on modules called once per step.
    """

    event = "hook_overwrite"
    code = "GW721"
    name = "hook-overwrites-activation"
    family = "H"
    severity = Severity.WARNING
    summary = "A forward hook keeps one slot per module, and the module runs several times per step."
    message = "{lead}the forward hook stores `{slot}` on every call of `{module}`, which runs {calls} times per step: each call overwrites the last, and the loss reads only the last call's activation"
    NO_FIX = (0, 1, 2)
    INVALID = (
        """
        import torch
        from torch import nn
        proj = nn.Linear(4, 4)
        acts = {}

        def keep(module, inputs, output):
            acts["proj"] = output  # <-

        proj.register_forward_hook(keep)
        a, b = proj(torch.randn(2, 4)), proj(torch.randn(2, 4))  # shared by two towers
        loss = (a * b).sum() + 0.1 * sum(x.pow(2).mean() for x in acts.values())
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        class Recorder:
            def __init__(self, module):
                self.out = {}
                module.register_forward_hook(self)
            def __call__(self, module, inputs, output):
                self.out["z"] = output  # <-
        proj = nn.Linear(4, 4)
        rec = Recorder(proj)
        for view in (torch.randn(2, 4), torch.randn(2, 4)):
            proj(view)
        loss = rec.out["z"].pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        gen, disc = nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        feats = {}
        disc[0].register_forward_hook(lambda m, i, o: feats.__setitem__("h", o))
        disc(gen(torch.randn(3, 4)))
        fake_feats = feats  # <- a second name for the dict, not a copy
        disc(torch.randn(3, 4))
        loss = (fake_feats["h"] - feats["h"].detach()).abs().mean()  # exactly 0: no gradient to gen
        loss.backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        proj = nn.Linear(4, 4)
        acts = []
        proj.register_forward_hook(lambda module, inputs, output: acts.append(output))
        a, b = proj(torch.randn(2, 4)), proj(torch.randn(2, 4))
        loss = (a * b).sum() + 0.1 * sum(x.pow(2).mean() for x in acts)
        loss.backward()
        acts.clear()
        """,
        """
        import torch
        from torch import nn
        class Recorder:
            def __init__(self, module):
                self.out = {}
                module.register_forward_hook(self)
            def __call__(self, module, inputs, output):
                self.out.setdefault("z", []).append(output)
        proj = nn.Linear(4, 4)
        rec = Recorder(proj)
        for view in (torch.randn(2, 4), torch.randn(2, 4)):
            proj(view)
        z1, z2 = rec.out.pop("z")
        loss = (z1 - z2).pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        gen, disc = nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        feats = {}
        def keep(module, inputs, output):
            feats["h"] = output
        disc[0].register_forward_hook(keep)
        disc(gen(torch.randn(3, 4)))
        fake_feats = dict(feats)  # a copy: the next call overwrites `feats` only
        disc(torch.randn(3, 4))
        loss = (fake_feats["h"] - feats["h"].detach()).abs().mean()
        loss.backward()
        """,
    )


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
    from it. A draw by ``.sample()`` of a reparameterisable distribution (``Normal``,
    ``Independent(Normal(...))``) whose parameters require grad is such a cut too: fed to a
    decoder, the reconstruction never reaches the encoder; ``rsample()`` keeps the path (a sample
    scored through ``log_prob``, as REINFORCE does, is not a cut).

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


class EvalModeTraining(Rule):
    """A training step runs a model with BatchNorm or Dropout while it is in eval mode.

    ``.eval()`` (or ``.train(False)``) is left on by an evaluation helper, or set inside the
    training loop by a validation run while ``.train()`` runs only once, before the loop: the
    next training steps normalise with BatchNorm's running statistics instead of the batch's
    (which then stop updating) and Dropout drops nothing. Nothing raises; the model trains on
    other gradients than in train mode. Reported at the mode switch the fix changes (the
    helper's switch, or the ``.train()`` that belongs at the start of every iteration), only
    when the model switched as a whole holds every parameter the optimizer steps (a frozen
    backbone deliberately kept in eval is not reported) and the program asked for train mode
    somewhere.
    """

    event = "eval_mode_training"
    code = "GW724"
    name = "eval-mode-training"
    family = "H"
    severity = Severity.WARNING
    summary = "A training step runs a model with BatchNorm/Dropout in eval mode."
    message = ("the training step at line {step_line} runs the model in eval mode: its {layer}, and the gradients "
               "differ from train mode's; {why}")
    NO_FIX = (0, 1, 2)
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.train()  # <-
        for step in range(4):
            x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                acc = (model(x).argmax(1) == y).float().mean()
        """,
        """
        import torch
        from torch import nn

        def evaluate(net, x):
            net.eval()  # <-
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.3), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        print(evaluate(model, torch.randn(4, 6)))
        for step in range(3):
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn

        def validate(net, x):
            net.train(mode=False)  # <-
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.3), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            print(validate(model, torch.randn(4, 6)))
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn

        def validate(net, x):
            was = net.training
            net.train(mode=False)
            with torch.no_grad():
                score = net(x).mean().item()
            net.train(was)
            return score

        model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.3), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            print(validate(model, torch.randn(4, 6)))
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(4):
            model.train()
            x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                acc = (model(x).argmax(1) == y).float().mean()
        """,
        """
        import torch
        from torch import nn
        backbone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
        head = nn.Linear(8, 3)
        backbone.eval()
        for p in backbone.parameters():
            p.requires_grad_(False)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
            loss = nn.functional.cross_entropy(head(backbone(x)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn

        def evaluate(net, x):
            net.eval()
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        print(evaluate(model, torch.randn(4, 6)))
        for step in range(3):
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
