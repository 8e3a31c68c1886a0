"""Family B: in-place writes to tensors saved for backward (version counters)."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class SavedTensorModified(Rule):
    """An in-place write to a tensor that autograd saved for backward.

    Many ops keep their inputs or their output to compute the gradient later: ``sigmoid``,
    ``exp`` and ``relu`` keep their *output*, ``matmul``/``mm``/``linear`` keep the *other*
    operand, ``conv2d`` keeps input and weight, ``batch_norm`` its input and running stats.
    Every tensor carries a version counter that each in-place write bumps (through any view
    or ``.detach()`` alias too — they share the counter). When ``backward()`` reaches the op,
    it compares the saved version with the current one and raises ``one of the variables
    needed for gradient computation has been modified by an inplace operation``. PyTorch names
    the op whose backward failed, never the line that wrote: this rule names both.

    In a function nobody in the file calls, whether its inputs require grad is unknown: the
    finding is information ("if its inputs require grad"), and it is made only where the
    function computes an objective - a value reduced from its inputs (a loss, a metric, a
    log-probability), which is what gets differentiated. A function that returns a transformed
    tensor (an image, boxes, a schedule, an optimizer's update) is not reported that way.
    Arithmetic with a Python number (``x / float(n)``, ``x * (y / size)``, a divisor annotated
    ``int``) saves nothing, as measured under torch.
    """

    event = "version_mismatch"
    code = "GW201"
    name = "saved-tensor-modified"
    family = "B"
    severity = Severity.ERROR
    summary = "In-place write to a tensor that a graph node saved for backward."
    message = ("in-place {op} modifies `{name}`, which `{saver}` (line {save_line}) saved for backward "
               "at version {version}; {backward} {outcome}{cond}")
    INVALID = (
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.sigmoid(x)
        y += 1  # <-
        y.sum().backward()
        """,
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        f = torch.matmul(d, w2)
        d_ = d.detach()
        d_[:] = 1  # <-
        f.backward()
        """,
        """
        import torch
        import torch.nn as nn
        act = nn.Sigmoid()
        def zero_first(module, inputs, output):
            output[:, 0] = 0.0  # <-
        act.register_forward_hook(zero_first)
        x = torch.randn(2, 3, requires_grad=True)
        act(x).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y += 1
        y.sum().backward()
        """,
        """
        import torch
        import torch.nn as nn
        act = nn.Sigmoid()
        def zero_first(module, inputs, output):
            output = output.clone()
            output[:, 0] = 0.0
            return output
        act.register_forward_hook(zero_first)
        x = torch.randn(2, 3, requires_grad=True)
        act(x).sum().backward()
        """,
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        d[:] = 1
        f = torch.matmul(d, w2)
        f.backward()
        """,
    )


class SavedTensorModifiedInBackward(Rule):
    """A custom ``autograd.Function.backward`` modifies a tensor from ``ctx.saved_tensors``.

    The saved tensor belongs to the graph: a second backward through the same node (with
    ``retain_graph=True``, double backward, or ``autograd.grad`` then ``backward``) finds it
    modified and raises, or silently computes with the changed values. Compute out of place.
    """

    event = "ctx_saved_inplace"
    code = "GW202"
    name = "saved-tensor-modified-in-backward"
    family = "F"
    severity = Severity.WARNING
    summary = "Custom Function backward modifies a tensor restored from ctx.saved_tensors."
    message = "`{name}` comes from ctx.saved_tensors; in-place {op} changes what every later backward through this node sees"
    INVALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                g = x * 2
                ctx.save_for_backward(g)
                return x * 2
            @staticmethod
            def backward(ctx, grad_output):
                g, = ctx.saved_tensors
                g.mul_(grad_output)  # <-
                return g
        """,
    )
    VALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                g = x * 2
                ctx.save_for_backward(g)
                return x * 2
            @staticmethod
            def backward(ctx, grad_output):
                g, = ctx.saved_tensors
                return g * grad_output
        """,
    )


class CtxStashModified(Rule):
    """A tensor that a custom Function kept as a ``ctx`` attribute is modified before backward.

    ``ctx.x = x`` keeps the tensor without the version check ``ctx.save_for_backward`` gives:
    an in-place write to it (or to any alias) before backward goes unnoticed, and the
    backward silently computes with the new values. Use ``ctx.save_for_backward(x)`` (then the
    write raises) and write out of place.
    """

    event = "ctx_stash_modified"
    code = "GW203"
    name = "ctx-attribute-modified"
    family = "F"
    severity = Severity.WARNING
    summary = "In-place write to a tensor a custom Function kept as a ctx attribute (silently wrong)."
    message = "in-place {op} modifies `{name}`, which `{fn}` kept as a ctx attribute (no version check); {backward} silently uses the new values"
    INVALID = (
        """
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.x = x
                return x * x
            @staticmethod
            def backward(ctx, g):
                return 2 * ctx.x * g
        w = torch.randn(3, requires_grad=True)
        h = w * 1.0
        y = Square.apply(h)
        h += 1  # <-
        y.sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.x = x
                return x * x
            @staticmethod
            def backward(ctx, g):
                return 2 * ctx.x * g
        w = torch.randn(3, requires_grad=True)
        h = w * 1.0
        y = Square.apply(h)
        h = h + 1
        y.sum().backward()
        """,
    )


class DoubleBackwardConstant(Rule):
    """A custom Function's backward reads a tensor that is neither an input nor an output of
    its forward, and a gradient taken through it with ``create_graph=True`` is backwarded again.

    Autograd can differentiate a custom backward only through what forward received or
    returned: an intermediate kept on ``ctx`` (or saved with ``save_for_backward``) enters the
    double backward as a constant, and second-order terms through it are silently dropped
    (a gradient penalty through such an activation trains the model with wrong gradients).
    Save the input and recompute the intermediate inside ``backward``, or return the
    intermediate as an extra output of forward.
    """

    event = "double_backward_constant"
    code = "GW310"
    name = "double-backward-through-intermediate"
    family = "F"
    severity = Severity.WARNING
    summary = "Double backward through a custom Function that kept an intermediate (second-order terms silently dropped)."
    NO_FIX = (0,)  # the backward must recompute the intermediate from a saved input: a rewrite
    message = "`{fn}` keeps an intermediate of forward here for its backward; the create_graph=True gradient at line {grad_line}, backwarded at line {backward_line}, treats it as a constant and silently drops its second-order terms"
    INVALID = (
        """
        import torch
        class SquarePlus(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                t = x * 2
                ctx.t = t  # <-
                return t ** 2 / 4 + x
            @staticmethod
            def backward(ctx, g):
                return (ctx.t + 1) * g
        x = torch.randn(4, requires_grad=True)
        w = torch.randn(4, requires_grad=True)
        y = SquarePlus.apply(x) * w
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        g.pow(2).sum().backward()  # x.grad misses the second-order term
        """,
    )
    VALID = (
        """
        import torch
        class SquarePlus(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return (x * 2) ** 2 / 4 + x
            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return (x * 2 + 1) * g
        x = torch.randn(4, requires_grad=True)
        w = torch.randn(4, requires_grad=True)
        y = SquarePlus.apply(x) * w
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        """,
        """
        import torch
        class SquarePlus(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                t = x * 2
                ctx.t = t
                return t ** 2 / 4 + x
            @staticmethod
            def backward(ctx, g):
                return (ctx.t + 1) * g
        x = torch.randn(4, requires_grad=True)
        SquarePlus.apply(x).sum().backward()  # first order only: the intermediate is fine
        """,
    )
