"""Family H: gradient flow — backward of something without a graph, non-scalar backward,
leaves and non-leaves, optimizers over the wrong tensors, autograd.grad inputs, reentrant
checkpoints, custom backwards that drop the chain rule, gradients never reset."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class BackwardWithoutGrad(Rule):
    """``backward()`` (or ``torch.autograd.grad``) of a tensor that does not require grad.

    Autograd can only differentiate what it recorded. The loss has no graph when it was
    computed under ``torch.no_grad()`` / ``torch.inference_mode()`` / a ``@torch.no_grad()``
    function, from ``.detach()`` or ``.data``, from a Python number (``.item()``, ``.tolist()``,
    ``float(t)``) re-wrapped by ``torch.tensor(...)``, through an op that is not differentiable
    (``argmax``, comparisons, integer casts), from ``torch.autograd.grad`` results without
    ``create_graph=True``, or when every parameter it depends on is frozen. PyTorch raises
    ``RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn``;
    a Python number raises ``AttributeError`` on ``.backward()``. The diagnostic points at the
    line where the gradient path was cut. Re-creating the loss with ``requires_grad=True``
    silences the error but trains nothing (reported as a warning).

    The analysis is silent when it cannot see where a value comes from (a function's own
    arguments, a call into a library it does not follow); when the cut is certain but some
    other operand is unknown, the finding is information.
    """

    event = "no_grad_backward"
    code = "GW701"
    name = "backward-without-grad"
    family = "H"
    severity = Severity.ERROR
    summary = "backward() of a tensor that does not require grad (its gradient path was cut)."
    message = "`{name}` {state}: {why}; {outcome}"
    # a loss through argmax, a fully frozen model, outputs marked non-differentiable: the fix
    # depends on what was meant
    NO_FIX = (2, 3, 5, 6)
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        with torch.no_grad():
            pred = model(x)  # <-
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        loss = nn.functional.cross_entropy(model(x), y)
        loss = torch.tensor(loss.item())  # <-
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        x = torch.randn(8, 4)
        pred = model(x).argmax(dim=1)  # <-
        loss = (pred.float() - 1.0).pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        for p in model.parameters():
            p.requires_grad = False  # <-
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
        """,
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        loss = (w * 2).sum().detach()  # <-
        loss.backward()
        """,
        """
        import torch
        class TopK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                values, idx = x.topk(k)
                ctx.mark_non_differentiable(values, idx)  # <-
                return values, idx
            @staticmethod
            def backward(ctx, grad_values, grad_idx):
                return None, None
        x = torch.randn(6, requires_grad=True)
        hard, _ = TopK.apply(x * 2, 3)
        hard.mean().backward()
        """,
        """
        import torch
        from torch import nn
        def set_requires_grad(net, flag):
            for p in net.parameters():
                p.requires_grad = flag
        gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
        opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
        fake = gen(torch.randn(2, 4))
        set_requires_grad(disc, False)  # <-
        loss_d = disc(fake.detach()).mean() - disc(torch.randn(2, 4)).mean()
        loss_d.backward()
        opt_d.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        print(f"loss {loss.item():.3f}")
        with torch.no_grad():
            val = ((model(x) - y) ** 2).mean().item()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        logits = model(x)
        acc = (logits.argmax(dim=1) == y).float().mean()
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        def run(model, x, y, train):
            if train:
                out = model(x)
            else:
                with torch.no_grad():
                    out = model(x)
            loss = ((out - y) ** 2).mean()
            if train:
                loss.backward()
            return loss.item()
        m = nn.Linear(4, 1)
        run(m, torch.randn(2, 4), torch.randn(2, 1), True)
        run(m, torch.randn(2, 4), torch.randn(2, 1), False)
        """,
    )


class NonScalarBackward(Rule):
    """``backward()`` without ``gradient=`` on a tensor that holds more than one element.

    An implicit gradient (1.0) exists only for a scalar: a per-sample loss
    (``reduction='none'``), a forgotten ``.mean()``, a model output used as the loss raise
    ``RuntimeError: grad can be implicitly created only for scalar outputs``. Reduce it
    (``loss.mean().backward()`` or ``.sum()``), or pass the gradient of each element
    (``out.backward(gradient=torch.ones_like(out))``). The shape is followed only where the
    code states it (factories, known layers, reductions); an unknown shape stays silent.
    """

    event = "nonscalar_backward"
    code = "GW702"
    name = "non-scalar-backward"
    family = "H"
    severity = Severity.ERROR
    summary = "backward() without gradient= on a tensor that is not a scalar."
    message = "{api}{at} of `{name}`, a tensor of shape {shape}, without a gradient: only a scalar has an implicit one{cond}"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        criterion = nn.CrossEntropyLoss(reduction="none")
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        loss = criterion(model(x), y)  # <-
        loss.backward()
        """,
        """
        import torch
        w = torch.randn(3, 1, requires_grad=True)
        x, y = torch.randn(16, 3), torch.randn(16, 1)
        loss = (x @ w - y) ** 2  # <-
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        class PerSample(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 1)
            def forward(self, x, y):
                return (self.fc(x) - y).pow(2).squeeze(1)
        model = PerSample()
        loss = model(torch.randn(8, 4), torch.randn(8, 1))
        loss.backward()  # <-
        """,
        """
        import torch
        from torch import nn
        unit = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        z = torch.randn(2, 3, 8, 8, requires_grad=True)
        act = unit(nn.functional.interpolate(z, size=(6, 6)))[:, 1, 2, 2]
        grad_z = torch.autograd.grad(act, z)[0]  # <-
        """,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def per_sample_loss(pred, target, mu):
            recon = F.mse_loss(pred, target, reduction="none").sum(dim=1)
            return recon + mu.pow(2).sum(dim=1)  # <-
        enc, dec = nn.Linear(6, 4), nn.Linear(2, 6)
        x = torch.randn(8, 6)
        mu, logvar = enc(x).chunk(2, dim=-1)
        loss = per_sample_loss(dec(mu), x, mu)
        loss.backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        criterion = nn.CrossEntropyLoss(reduction="none")
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        loss = criterion(model(x), y)
        loss.mean().backward()
        """,
        """
        import torch
        x = torch.randn(5, requires_grad=True)
        out = x * 2
        out.backward(gradient=torch.ones_like(out))
        """,
    )


class GradInputNotInGraph(Rule):
    """``torch.autograd.grad(outputs, inputs)`` with an input that is not part of the graph.

    Every input must require grad (``RuntimeError: One of the differentiated Tensors does not
    require grad``) and, unless ``allow_unused=True``, be something the outputs were computed
    from (``The differentiated Tensor at index N appears to not have been used in the graph``)
    — typically a tensor re-created (``x = x.detach().requires_grad_()``) after the forward, or
    a parameter the forward does not use. Compute the outputs from that very tensor, or pass
    ``allow_unused=True`` (its gradient is then ``None``). An input that does not require grad
    (the WGAN-GP ``interpolates`` built from data and a detached sample) is reported where it is
    made: ``.requires_grad_()`` belongs there.
    """

    event = "grad_input_unused"
    code = "GW703"
    name = "grad-input-not-in-graph"
    family = "H"
    severity = Severity.ERROR
    summary = "autograd.grad with an input that does not require grad or is not used by the outputs."
    message = "`torch.autograd.grad` input `{name}` {problem}"
    INVALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = (x * 2).sum()
        gx, gw = torch.autograd.grad(y, [x, w])  # <-
        """,
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)  # <-
        y = (x * w).sum()
        g, = torch.autograd.grad(y, [x])
        """,
    )
    VALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = (x * w).sum()
        gx, gw = torch.autograd.grad(y, [x, w])
        """,
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = (x * 2).sum()
        gx, gw = torch.autograd.grad(y, [x, w], allow_unused=True)
        """,
    )


class RequiresGradOnNonLeaf(Rule):
    """Changing ``requires_grad`` of a tensor computed by an op (a non-leaf).

    Only leaves (tensors created by the user) carry a ``requires_grad`` flag of their own; a
    computed tensor requires grad because its inputs do. ``y.requires_grad = False`` or
    ``y.requires_grad_(False)`` (and even ``y.requires_grad = True``) raise ``RuntimeError: you
    can only change requires_grad flags of leaf variables``. To stop gradients use
    ``y = y.detach()``; to make a new leaf, ``y = y.detach().requires_grad_()``.
    """

    event = "requires_grad_nonleaf"
    code = "GW704"
    name = "requires-grad-on-non-leaf"
    family = "H"
    severity = Severity.ERROR
    summary = "requires_grad changed on a tensor that is not a leaf."
    message = "{how} on `{name}`, which is computed by an op (line {made_line}) and is not a leaf: raises{cond}"
    INVALID = (
        """
        import torch
        from torch import nn
        teacher = nn.Linear(4, 2)
        target = teacher(torch.randn(3, 4))
        target.requires_grad = False  # <-
        """,
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        h = w * 2
        h.requires_grad_(False)  # <-
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        teacher = nn.Linear(4, 2)
        target = teacher(torch.randn(3, 4)).detach()
        """,
        """
        import torch
        x = torch.randn(3)
        x.requires_grad = True
        w = torch.randn(3, requires_grad=True)
        h = (w * 2).requires_grad_(True)
        """,
    )


class GradOfNonLeaf(Rule):
    """``.grad`` read on a tensor that is not a leaf: it is always ``None``.

    Backward accumulates ``.grad`` only into leaves. ``w = torch.randn(3, requires_grad=True)
    * 0.01`` or ``.double()`` / ``.to(device)`` after creation makes ``w`` the *output* of an op:
    the leaf is the unnamed tensor before it, and ``w.grad`` stays ``None`` (PyTorch warns; a
    manual update ``w -= lr * w.grad`` then fails with a TypeError). Create the leaf last —
    ``w = (torch.randn(3) * 0.01).requires_grad_()``, or pass ``device=``/``dtype=`` to the
    factory — or call ``w.retain_grad()``.
    """

    event = "grad_nonleaf"
    code = "GW705"
    name = "grad-of-non-leaf"
    family = "H"
    severity = Severity.WARNING
    summary = ".grad of a non-leaf tensor (always None)."
    message = "`{name}` is made by an op here, so it is not a leaf: its `.grad` (read at line {read_line}) stays None{cond}"
    INVALID = (
        """
        import torch
        w = torch.randn(3, 1, requires_grad=True) * 0.01  # <-
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        print(w.grad)
        """,
    )
    VALID = (
        """
        import torch
        w = (torch.randn(3, 1) * 0.01).requires_grad_()
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        """,
        """
        import torch
        w = torch.randn(3, 1, requires_grad=True) * 0.01
        w.retain_grad()
        x = torch.randn(8, 3)
        (x @ w).sum().backward()
        print(w.grad)
        """,
    )


class OptimizeNonLeaf(Rule):
    """An optimizer given a tensor that is not a leaf.

    Optimizers update leaves in place; a tensor computed by an op (``torch.randn(3,
    requires_grad=True).double()``, ``... * 0.01``) is refused with ``ValueError: can't
    optimize a non-leaf Tensor``. Create the leaf last (``(torch.randn(3) * 0.01)
    .requires_grad_()``, or ``device=``/``dtype=`` in the factory) or wrap it in
    ``nn.Parameter``.
    """

    event = "optimize_nonleaf"
    code = "GW706"
    name = "optimize-non-leaf"
    family = "H"
    severity = Severity.ERROR
    summary = "Optimizer over a tensor that is not a leaf (ValueError)."
    message = "`{name}` is made by an op here, not a leaf; the optimizer at line {opt_line} refuses it (can't optimize a non-leaf Tensor){cond}"
    raises = "ValueError"
    INVALID = (
        """
        import torch
        w = torch.randn(3, requires_grad=True).double()  # <-
        opt = torch.optim.SGD([w], lr=0.1)
        """,
    )
    VALID = (
        """
        import torch
        w = torch.randn(3, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        """,
    )


class OptimizerWithoutGrad(Rule):
    """An optimizer whose parameters never require grad: every ``step()`` does nothing.

    Parameters that are frozen (``requires_grad = False``, ``model.requires_grad_(False)``) or
    plain tensors created without ``requires_grad=True`` never receive a ``.grad``, and the
    optimizer skips them silently: the model does not train. Build the optimizer over the
    parameters that train (``filter(lambda p: p.requires_grad, model.parameters())`` on the
    right module), or create them with ``requires_grad=True``.
    """

    event = "optimize_no_grad"
    code = "GW707"
    name = "optimizer-without-grad"
    family = "H"
    severity = Severity.WARNING
    summary = "Optimizer over tensors that never require grad (step() does nothing)."
    message = "`{opt}` optimizes {n} tensor(s) that are all {what}: they never get a gradient, so `step()` changes nothing"
    NO_FIX = (0,)  # which parameters should train is the user's call
    INVALID = (
        """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 8), nn.Linear(8, 2)
        backbone.requires_grad_(False)
        opt = torch.optim.SGD(backbone.parameters(), lr=0.1)  # <-
        x = torch.randn(3, 4)
        loss = head(backbone(x)).sum()
        loss.backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 8), nn.Linear(8, 2)
        backbone.requires_grad_(False)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        x = torch.randn(3, 4)
        loss = head(backbone(x)).sum()
        loss.backward()
        opt.step()
        """,
    )


class OptimizedPlainTensor(Rule):
    """A plain tensor that never requires grad, handed to an optimizer beside real parameters.

    ``torch.optim`` accepts a tensor created without ``requires_grad=True`` (a ``.clone()`` of
    an initial value, ``torch.randn(...) * 0.1``): it never gets a ``.grad``, so ``step()``
    silently leaves it unchanged while the other parameters train. Frozen parameters of a
    module are not reported (freezing part of a model is deliberate); only tensors that never
    required grad anywhere in the code. Make it a trainable leaf where it is created:
    ``(...).requires_grad_()`` or ``nn.Parameter(...)``.
    """

    event = "optimize_plain_tensor"
    code = "GW716"
    name = "optimized-plain-tensor"
    family = "H"
    severity = Severity.WARNING
    summary = "A tensor without requires_grad among an optimizer's parameters never changes."
    message = "`{name}` never requires grad (it is created without `requires_grad=True`), yet `{opt}` optimizes it: it gets no gradient, so `step()` (line {step_line}) never changes it"
    INVALID = (
        """
        import torch
        init = torch.randn(4, 3) * 0.1
        w = init.clone()  # <-
        b = torch.zeros(3, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=0.1)
        for _ in range(3):
            loss = (torch.randn(8, 4) @ w + b).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        init = torch.randn(4, 3) * 0.1
        w = init.clone().requires_grad_()
        b = torch.zeros(3, requires_grad=True)
        opt = torch.optim.SGD([w, b], lr=0.1)
        for _ in range(3):
            loss = (torch.randn(8, 4) @ w + b).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))
        model[0].requires_grad_(False)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
        """,
    )


class CheckpointWithoutGrad(Rule):
    """A reentrant ``torch.utils.checkpoint.checkpoint`` whose inputs do not require grad.

    The reentrant variant (``use_reentrant=True``, the default when the argument is not
    passed) records nothing when none of the tensors passed in requires grad: the output has
    no graph, and the parameters of the checkpointed module silently get no gradient (torch
    only warns *None of the inputs have requires_grad=True*). Pass ``use_reentrant=False``.
    """

    event = "checkpoint_no_grad"
    code = "GW708"
    name = "checkpoint-without-grad"
    family = "H"
    severity = Severity.WARNING
    summary = "Reentrant checkpoint with no input requiring grad (its parameters get no gradient)."
    message = "reentrant `checkpoint` of {fn}: none of its inputs requires grad, so its {n} trainable parameter(s) get no gradient"
    INVALID = (
        """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint
        block, head = nn.Linear(4, 8), nn.Linear(8, 1)
        x = torch.randn(2, 4)
        h = checkpoint(block, x, use_reentrant=True)  # <-
        head(h).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint
        block, head = nn.Linear(4, 8), nn.Linear(8, 1)
        x = torch.randn(2, 4)
        h = checkpoint(block, x, use_reentrant=False)
        head(h).sum().backward()
        """,
    )


class BackwardIgnoresGradOutput(Rule):
    """A custom ``autograd.Function.backward`` that returns a gradient not computed from the
    incoming gradient.

    ``backward(ctx, grad_output)`` must return dL/dinput = grad_output x d(output)/d(input);
    returning only the local derivative (``return 2 * x``) drops the chain rule. The result is
    right only when the Function's output *is* the loss; anywhere else the gradients are
    silently wrong. Multiply by ``grad_output`` (``None`` and explicit zeros are fine).
    """

    event = "backward_ignores_grad"
    code = "GW709"
    name = "backward-ignores-grad-output"
    family = "H"
    severity = Severity.WARNING
    summary = "Custom Function backward returns a gradient that ignores grad_output."
    message = "`{fn}.backward` returns `{expr}`, which does not use `{grad}`: the chain rule is dropped (wrong unless the output is the loss itself)"
    INVALID = (
        """
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return 2 * x  # <-
        x = torch.randn(3, requires_grad=True)
        (Square.apply(x) * 3).sum().backward()
        """,
    )
    VALID = (
        """
        import torch


        def kernel(grad, out):  # stands for a CUDA kernel that fills its out-argument
            out.copy_(grad * 2)


        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                grad_x = torch.empty_like(grad_output)
                kernel(grad_output.contiguous(), grad_x)
                return grad_x


        x = torch.randn(3, requires_grad=True)
        Double.apply(x).sum().backward()
        """,
        """
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return grad_output * 2 * x
        x = torch.randn(3, requires_grad=True)
        (Square.apply(x) * 3).sum().backward()
        """,
        """
        import torch
        class RoundSTE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                return torch.round(x * scale) / scale
            @staticmethod
            def backward(ctx, grad):
                g = grad.clone()
                return g, None
        """,
    )


class GradientsPartlyZeroed(Rule):
    """A loop's zeroing call clears only some of the gradients its optimizer steps.

    ``model.zero_grad()`` clears the module's parameters; a tensor kept beside the model (a learnable
    temperature, a loss weight, a second model) that the optimizer also steps keeps adding into its
    ``.grad`` every backward, so each step uses the sum of every gradient so far for it, while the
    model's parameters get one step's. Nothing raises. Reported at the zeroing call: zero what the
    optimizer holds (``optimizer.zero_grad()``). Gradient accumulation that leaves every parameter
    alike is not reported.
    """

    event = "grads_partly_zeroed"
    code = "GW725"
    name = "gradients-partly-zeroed"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # no automatic fix yet: which zeroing call covers the optimizer is written by hand
    summary = "A zero_grad() call that misses some of the parameters the optimizer steps (their .grad accumulates)."
    message = "`{call}` does not clear the gradients of {names}, which `{opt}` also steps: their `.grad` adds up " \
              "over every iteration, so the step at line {step_line} uses the sum of every backward so far; " \
              "clear what the optimizer holds (`{opt}.zero_grad()`)"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        log_t = nn.Parameter(torch.zeros(()))
        opt = torch.optim.SGD([*model.parameters(), log_t], lr=0.1)
        for step in range(5):
            logits = model(torch.randn(8, 4)) / log_t.exp()
            loss = nn.functional.cross_entropy(logits, torch.randint(0, 3, (8,)))
            model.zero_grad()  # <-
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        log_t = nn.Parameter(torch.zeros(()))
        opt = torch.optim.SGD([*model.parameters(), log_t], lr=0.1)
        for step in range(5):
            logits = model(torch.randn(8, 4)) / log_t.exp()
            loss = nn.functional.cross_entropy(logits, torch.randint(0, 3, (8,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 3)
        log_t = nn.Parameter(torch.zeros(()))
        opt = torch.optim.SGD([*model.parameters(), log_t], lr=0.1)
        for step in range(5):
            logits = model(torch.randn(8, 4)) / log_t.exp()
            loss = nn.functional.cross_entropy(logits, torch.randint(0, 3, (8,)))
            model.zero_grad()
            log_t.grad = None
            loss.backward()
            opt.step()
        """,
    )


class InputGradAccumulates(Rule):
    """A loop backwards into the same input (a leaf made to require grad: a saliency map, an
    adversarial example, an inverted latent no optimizer holds) and reads its ``.grad`` every
    iteration, never resetting it.

    ``backward()`` *adds* into ``.grad``: each read gets the sum of every iteration's gradient so
    far, not this iteration's (SmoothGrad summing running totals, an attack stepping along an
    accumulated direction). Nothing raises. Reset it between iterations: ``x.grad = None`` or
    ``x.grad.zero_()``, or take the gradient with ``torch.autograd.grad``.
    """

    event = "input_grad_accumulates"
    code = "GW729"
    name = "input-grad-accumulates"
    family = "H"
    severity = Severity.WARNING
    summary = "An input's .grad read in a loop that backwards into it and never resets it."
    NO_FIX = (0,)  # no automatic fix yet: where the reset goes (after the read) is written by hand
    message = "this backward adds into `{name}.grad` every iteration and nothing in the loop resets it: the read at line {read_line} gets the sum of every backward so far (reset it with `{name}.grad = None`)"
    INVALID = (
        """
        import torch
        model = torch.nn.Linear(4, 2)
        x = torch.randn(1, 4, requires_grad=True)
        total = torch.zeros(1, 4)
        for _ in range(3):
            x.data = torch.randn(1, 4)
            model(x).sum().backward()  # <-
            total += x.grad
        """,
    )
    VALID = (
        """
        import torch
        model = torch.nn.Linear(4, 2)
        x = torch.randn(1, 4, requires_grad=True)
        total = torch.zeros(1, 4)
        for _ in range(3):
            x.data = torch.randn(1, 4)
            model(x).sum().backward()
            total += x.grad
            x.grad = None
        """,
        """
        import torch
        model = torch.nn.Linear(4, 2)
        total = torch.zeros(1, 4)
        for _ in range(3):
            x = torch.randn(1, 4, requires_grad=True)
            model(x).sum().backward()
            total += x.grad
        """,
    )


class GradientsNeverZeroed(Rule):
    """A training loop that steps the optimizer every iteration and never resets ``.grad``.

    ``backward()`` *adds* into ``.grad``; without ``optimizer.zero_grad()`` (or
    ``model.zero_grad()``, ``p.grad = None``) each step uses the sum of all gradients so far,
    and training drifts or diverges with no error. Gradient accumulation that resets every
    k steps is fine and not reported.
    """

    event = "grads_accumulate"
    code = "GW710"
    name = "gradients-never-zeroed"
    family = "H"
    severity = Severity.WARNING
    summary = "optimizer.step() in a loop that never zeroes the gradients."
    message = "this backward adds into `.grad` every iteration and nothing in the loop resets it: `{opt}.step()` (line {step_line}) uses the gradients of every backward so far"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(5):
            x, y = torch.randn(8, 4), torch.randn(8, 1)
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()  # <-
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(5):
            x, y = torch.randn(8, 4), torch.randn(8, 1)
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(8):
            x, y = torch.randn(8, 4), torch.randn(8, 1)
            loss = ((model(x) - y) ** 2).mean() / 4
            loss.backward()
            if (step + 1) % 4 == 0:
                opt.step()
                model.zero_grad(set_to_none=True)
        """,
    )


class ModuleRequiresGradAttribute(Rule):
    """``module.requires_grad = False`` (or ``True``) on an ``nn.Module``.

    Modules have no ``requires_grad`` property: the assignment only creates a plain Python
    attribute on the module object, and every parameter keeps its own flag. A "frozen" layer
    keeps training (silently); an "unfrozen" head stays frozen, and a loss that depends only
    on frozen parameters then raises in ``backward()``. Use ``module.requires_grad_(flag)``,
    which sets the flag on every parameter. Files whose classes give modules a
    ``requires_grad`` of their own (a method, a class attribute, a read of
    ``self.requires_grad``) are not reported.
    """

    event = "module_requires_grad_attr"
    code = "GW715"
    name = "module-requires-grad-attribute"
    family = "H"
    severity = Severity.WARNING
    summary = "module.requires_grad = ... sets a plain attribute; the parameters are unchanged."
    message = "`{module}.requires_grad = {flag}` only sets a Python attribute on the module: its {n} parameter(s) {effect}; use `{module}.requires_grad_({flag})`"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        model[0].requires_grad = False  # <-
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(3, 4)).sum().backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        model[0].requires_grad_(False)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(3, 4)).sum().backward()
        opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        for p in model.parameters():
            p.requires_grad = False
        """,
    )


class InferenceTensorSaved(Rule):
    """A tensor made under ``torch.inference_mode()`` used by an op that autograd records.

    ``inference_mode`` is ``no_grad`` plus a promise: what it makes are *inference tensors*,
    which no later graph may save. Feeding one to a layer whose parameters train (a frozen
    encoder's features into a trained head, a cached embedding into a loss) raises
    "Inference tensors cannot be saved for backward" at that op. Use ``torch.no_grad()`` for
    values that training code reads, or ``.clone()`` them outside the block. Reported at the
    ``inference_mode`` block or decorator, the line the fix changes.
    """

    event = "inference_saved"
    code = "GW717"
    name = "inference-tensor-saved"
    family = "H"
    severity = Severity.ERROR
    summary = "A tensor made under inference_mode is saved for backward (raises)."
    message = "{name} is made under `torch.inference_mode()`, and `{op}` (line {op_line}) saves it for a backward: raises (inference tensors cannot be saved for backward); use `torch.no_grad()` here, or `.clone()` it"
    NO_FIX = (0,)
    INVALID = (
        """
        import torch
        from torch import nn
        encoder, head = nn.Linear(8, 16), nn.Linear(16, 2)
        with torch.inference_mode():  # <-
            feats = encoder(torch.randn(4, 8))
        loss = head(feats).sum()
        loss.backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        encoder, head = nn.Linear(8, 16), nn.Linear(16, 2)
        with torch.no_grad():
            feats = encoder(torch.randn(4, 8))
        loss = head(feats).sum()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        encoder, head = nn.Linear(8, 16), nn.Linear(16, 2)
        with torch.inference_mode():
            feats = encoder(torch.randn(4, 8))
            preds = head(feats).argmax(1)
        """,
    )


class ZeroGradientOp(Rule):
    """A parameter reaches the loss only through ``round``, ``floor``, ``ceil``, ``trunc`` or
    ``sign``.

    These ops have a zero derivative everywhere, yet their output requires grad, so nothing
    raises: the backward gives the parameter an all-zero gradient and it never trains.
    Quantization-aware training and binarized layers need a straight-through estimator,
    ``w + (torch.round(w) - w).detach()`` (forward: the rounded value; backward: the identity);
    a loss should be computed on the unrounded prediction. Reported at the op, when the
    analysis sees every path from the loss to the parameter; a parameter that also reaches the
    loss another way (the fractional part of a coordinate) trains and is not reported.
    """

    event = "zero_gradient"
    code = "GW718"
    name = "zero-gradient-op"
    family = "H"
    severity = Severity.WARNING
    summary = "A parameter reaches the loss only through round/floor/ceil/trunc/sign (zero gradient)."
    message = "{names} {verb} the loss only through `{op}`, whose derivative is zero everywhere: the backward at line {line} gives a zero gradient and nothing trains through here{mode}; pass the gradient straight through (`x + (x.{op}() - x).detach()`) or keep `{op}` out of the loss"
    # the second: the loss belongs on the unrounded prediction (a choice the code does not state)
    NO_FIX = (1,)
    INVALID = (
        """
        import torch
        w = torch.randn(4, 8, requires_grad=True)
        x = torch.randn(16, 8)
        scale = w.detach().abs().max() / 7
        w_q = torch.round(w / scale) * scale  # <-
        loss = (x @ w_q.t()).pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(6, 1)
        feats, counts = torch.randn(8, 6), torch.randint(0, 5, (8, 1)).float()
        loss = ((model(feats).round() - counts) ** 2).mean()  # <-
        loss.backward()
        """,
    )
    VALID = (
        """
        import torch
        w = torch.randn(4, 8, requires_grad=True)
        x = torch.randn(16, 8)
        scale = w.detach().abs().max() / 7
        w_q = w + (torch.round(w / scale) * scale - w).detach()
        loss = (x @ w_q.t()).pow(2).mean()
        loss.backward()
        """,
        """
        import torch
        pos = torch.rand(4, requires_grad=True)
        table = torch.randn(8)
        lo = torch.floor(pos * 5)
        frac = pos * 5 - lo
        i = lo.long()
        (table[i] * (1 - frac) + table[i + 1] * frac).sum().backward()
        """,
    )
