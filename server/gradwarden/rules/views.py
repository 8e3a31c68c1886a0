"""Family C and custom Functions: writes through views, expanded tensors, overlapping memory, grad_output."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class ExpandedWrite(Rule):
    """A write into a tensor made by ``expand``/``expand_as`` (or a view of one).

    An expanded tensor repeats one memory cell along the broadcast dimensions. Writing a
    region that spans them raises ``unsupported operation: more than one element of the
    written-to tensor refers to a single memory location``; a write through integer indices
    that remove every broadcast dimension (``x[i] = row`` into ``base.expand(q, *base.shape)``,
    ``i`` a literal or a loop index) does not raise: it silently changes every broadcast copy
    (and the source), a warning. Materialise it first with ``.clone()`` (or use ``repeat``).

    ``fill_``, ``zero_``, ``masked_fill_`` and ``index_fill_`` are the exceptions (measured, torch
    2.13): they write one value into every element, and torch allows them on an expanded tensor
    (the last two with a deprecation warning). A backward through the written tensor then raises
    the same error; that is when it is reported, at the write.
    """

    event = "expanded_write"
    code = "GW301"
    name = "expanded-write"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write into an expanded (broadcast) tensor."
    message = "in-place {op} writes into `{name}`, an expanded tensor (line {expand_line}) whose elements share memory{tail}"
    INVALID = (
        """
        import torch
        base = torch.zeros(2, 1, 3)
        mask = base.expand(2, 5, 3)
        mask[:, :, 0] = 1  # <-
        """,
    )
    VALID = (
        """
        import torch
        base = torch.zeros(2, 1, 3)
        mask = base.expand(2, 5, 3).clone()
        mask[:, :, 0] = 1
        """,
        """
        import torch
        feats = torch.randn(2, 3, 4)
        m = torch.zeros(2, 4, dtype=torch.bool)[:, None].expand(-1, 3, -1)
        feats[m] = 0
        """,
        """
        import torch
        w = torch.randn(3, 3, requires_grad=True)
        scale = w.sum(0, keepdim=True).expand(3, 3)
        scale.fill_(1.0)  # allowed; no backward goes through it
        (w * scale.detach()).sum().backward()
        """,
    )


class OverlappingAssign(Rule):
    """Assigning a view of a tensor into (an overlapping part of) the same tensor.

    ``x[1] = x[1].t()`` copies from memory that the copy itself overwrites: PyTorch refuses
    with ``unsupported operation: some elements of the input tensor and the written-to tensor
    refer to a single memory location``. The swap idiom ``x[:, :d], x[:, d:] = x[:, d:],
    x[:, :d]`` does not raise but is wrong: the right-hand side holds views, so the second
    copy reads values the first one already overwrote (reported as a warning). Clone the
    right-hand side, or build the result out of place (``torch.cat``).
    """

    event = "overlapping_assign"
    code = "GW302"
    name = "overlapping-assign"
    family = "C"
    severity = Severity.ERROR
    summary = "Slice assignment from a view that overlaps the destination."
    message = "{desc}"
    INVALID = (
        """
        import torch
        out = torch.randn(2, 3, 3)
        out[1] = out[1].transpose(0, 1)  # <-
        """,
    )
    VALID = (
        """
        import torch
        out = torch.randn(2, 3, 3)
        out[1] = out[1].transpose(0, 1).clone()
        """,
        """
        import torch
        x = torch.randn(4, 6)
        x = torch.cat([x[:, 3:], x[:, :3]], dim=1)
        """,
    )


class GradOutputInplace(Rule):
    """A custom ``autograd.Function.backward`` writes into ``grad_output`` (or a view of it).

    The incoming gradient is not yours: after ``.sum()`` or ``.mean()`` it is an expanded
    tensor whose elements share one memory cell, and a caller's ``grad_tensors`` is passed in
    unchanged. Writing into it raises (overlapping memory), zeroes the whole gradient, or
    changes the caller's tensor. Start from ``grad = grad_output.clone()``.
    """

    event = "grad_output_inplace"
    code = "GW303"
    name = "grad-output-inplace"
    family = "F"
    severity = Severity.WARNING
    summary = "Custom Function backward writes into grad_output."
    message = "in-place {op} writes into `{name}`, {alias_of}the incoming gradient of `{fn}.backward`; it may be expanded or shared with the caller"
    INVALID = (
        """
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                grad_input = grad_output
                grad_input[x < 0] = 0  # <-
                return grad_input
        """,
    )
    VALID = (
        """
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                grad_input = grad_output.clone()
                grad_input[x < 0] = 0
                return grad_input
        """,
    )


class ExpandedParameterData(Rule):
    """A parameter's storage is replaced by an expanded tensor (``p.data = t.expand(...)``).

    The parameter now has broadcast memory: the optimizer's next in-place update (or any
    in-place write) raises ``unsupported operation: more than one element of the written-to
    tensor refers to a single memory location``. Materialise with ``.clone()``.
    """

    event = "expanded_param_data"
    code = "GW304"
    name = "expanded-parameter-data"
    family = "C"
    severity = Severity.ERROR
    summary = "Parameter data replaced by an expanded (broadcast) tensor."
    message = "`{name}` gets the storage of an expanded tensor; its next in-place update (optimizer step) raises"
    INVALID = (
        """
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.rand(4, 3))
        mean = torch.rand(1, 3)
        p.data = mean.expand_as(p)  # <-
        opt = torch.optim.SGD([p], lr=0.1)
        (p * 2).sum().backward()
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.rand(4, 3))
        mean = torch.rand(1, 3)
        p.data = mean.expand_as(p).clone()
        opt = torch.optim.SGD([p], lr=0.1)
        (p * 2).sum().backward()
        opt.step()
        """,
    )


class CustomFunctionOutputInplace(Rule):
    """In-place write to the output of a custom Function that returned (a view of) its input.

    A ``Function.forward`` that returns one of its inputs, modified in place or not, without
    ``ctx.mark_dirty`` makes autograd treat the output as a view created inside a custom
    Function; modifying it in place raises ``Output 0 of ...Backward is a view and is being
    modified inplace``. Write out of place (``y = y * s``) or make the Function out of place.
    """

    event = "custom_out_inplace"
    code = "GW305"
    name = "custom-function-view-inplace"
    family = "F"
    severity = Severity.ERROR
    summary = "In-place write to a custom Function output that aliases its input."
    message = "in-place {op} on `{name}`, the output of `{fn}.apply` (line {apply_line}) which returns its own input: raises"
    INVALID = (
        """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x *= 2.0
                return x
            @staticmethod
            def backward(ctx, g):
                return g * 2.0
        a = torch.randn(3, requires_grad=True)
        y = Double.apply(a * 1.0)
        y *= 3  # <-
        """,
    )
    VALID = (
        """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2.0
            @staticmethod
            def backward(ctx, g):
                return g * 2.0
        a = torch.randn(3, requires_grad=True)
        y = Double.apply(a * 1.0)
        y *= 3
        """,
    )


class MultiViewInplace(Rule):
    """In-place write to an output of ``split``/``chunk``/``unbind`` that requires grad.

    These return several views at once; autograd forbids modifying any of them in place:
    ``Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the
    output of a function that returns multiple views.`` Use an out-of-place op.
    """

    event = "multi_view_inplace"
    code = "GW306"
    name = "multi-view-inplace"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write to one of several views returned by split/chunk/unbind."
    message = "in-place {op} on `{name}`, one of the views returned by `{viewop}` (line {view_line}): raises"
    INVALID = (
        """
        import torch
        x = torch.randn(4, 6, requires_grad=True)
        a, b = torch.split(x * 1.0, 3, -1)
        a *= 2  # <-
        """,
    )
    VALID = (
        """
        import torch
        x = torch.randn(4, 6, requires_grad=True)
        a, b = torch.split(x * 1.0, 3, -1)
        a = a * 2
        """,
    )


class BackwardGradientCount(Rule):
    """A custom ``autograd.Function.backward`` returns fewer gradients than ``forward`` has inputs.

    ``backward`` must return one value per input of ``forward`` (``None`` for inputs that need
    no gradient, such as a float hyper-parameter). Returning fewer raises ``function backward
    returned an incorrect number of gradients``. Return ``grad, None``.

    ``gradwarden debug`` reports the contract's other half under this code too: a gradient whose
    shape cannot be summed to its input's (``returned an invalid gradient at index 1 - got [6, 4]
    but expected shape compatible with [4, 6]``, a weight gradient returned transposed), at the
    ``return`` that ran, with the line that computed that gradient. The static analysis reports
    the count, and a returned gradient whose shape, known from the code (the shapes ``apply`` was
    given and the ops of the backward), cannot be summed to its input's (autograd sums a gradient
    the input expands to, such as an unreduced bias gradient, and raises otherwise), where that
    gradient is computed.
    """

    event = "backward_grad_count"
    code = "GW307"
    name = "backward-gradient-count"
    family = "F"
    severity = Severity.ERROR
    summary = "Custom Function backward returns fewer gradients than forward has inputs."
    message = "`{fn}.backward` {problem}: raises ({fix})"
    INVALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k
            @staticmethod
            def backward(ctx, g):
                return g * ctx.k  # <-
        x = torch.ones(2, requires_grad=True)
        k = torch.full((2,), 3.0, requires_grad=True)
        Scale.apply(x, k).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k
            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
        x = torch.ones(2, requires_grad=True)
        Scale.apply(x, 3.0).sum().backward()
        """,
    )


class LegacyFunction(Rule):
    """A custom ``autograd.Function`` with a non-static ``forward`` (the legacy API).

    Since PyTorch 1.5 such a Function raises ``Legacy autograd function with non-static
    forward method is deprecated`` as soon as it is used. Make ``forward(ctx, ...)`` and
    ``backward(ctx, ...)`` static methods and call ``MyFn.apply(...)``.
    """

    event = "legacy_function"
    code = "GW308"
    name = "legacy-function"
    family = "F"
    severity = Severity.ERROR
    summary = "autograd.Function with a non-static forward (legacy API): raises when used."
    message = "`{fn}.forward` is not a @staticmethod: the legacy Function API raises when used (use static forward(ctx, ...) and `{fn}.apply`)"
    INVALID = (
        """
        import torch
        class Sign(torch.autograd.Function):
            def forward(self, x):  # <-
                return x.sign()
            def backward(self, g):
                return g
        x = torch.ones(2, requires_grad=True)
        Sign()(x)
        """,
    )
    VALID = (
        """
        import torch
        class Sign(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sign()
            @staticmethod
            def backward(ctx, g):
                return g
        x = torch.ones(2, requires_grad=True)
        Sign.apply(x).sum().backward()
        """,
    )


class GradientForNonTensorInput(Rule):
    """A custom Function's ``backward`` returns a tensor for a forward input that was not a tensor.

    ``backward`` must return one gradient per ``forward`` input, and ``None`` for every input
    that is not a tensor (a float hyper-parameter, a flag, ``None``). Returning a tensor there
    (``torch.zeros(())`` "for completeness") makes the backward raise ``returned a gradient
    different than None at position N, but the corresponding forward input was not a
    Variable``. Checked with the arguments the file actually passes to ``apply``.
    """

    event = "grad_for_non_tensor"
    code = "GW309"
    name = "gradient-for-non-tensor-input"
    family = "F"
    severity = Severity.ERROR
    summary = "Custom Function backward returns a gradient for a non-tensor forward input."
    message = ("`{fn}.backward` returns a tensor at position {position}, where `forward` got a non-tensor "
               "argument: backward raises (return None there)")
    INVALID = (
        """
        import torch
        class Focal(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, gamma):
                ctx.gamma = gamma
                return x ** gamma
            @staticmethod
            def backward(ctx, g):
                return g * 2, torch.zeros(())  # <-
        x = torch.ones(2, requires_grad=True)
        Focal.apply(x, 2.0).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        class Focal(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, gamma):
                ctx.gamma = gamma
                return x ** gamma
            @staticmethod
            def backward(ctx, g):
                return g * 2, None
        x = torch.ones(2, requires_grad=True)
        Focal.apply(x, 2.0).sum().backward()
        """,
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k
            @staticmethod
            def backward(ctx, g):
                return g * 2, torch.zeros(())
        x = torch.ones(2, requires_grad=True)
        k = torch.tensor(2.0)
        Scale.apply(x, k).sum().backward()
        """,
    )


class SaveForBackwardNonTensor(Rule):
    """A custom Function's ``forward`` passes a value that is not a tensor to ``ctx.save_for_backward``.

    ``save_for_backward`` keeps tensors (and ``None``) only: an int, a float, a bool, a string or a
    tuple handed to it (the ``k`` of a top-k, a scale, a flag that ``forward`` received as an
    argument) makes ``Function.apply`` raise ``TypeError: save_for_backward can only save
    variables, but argument N is of type int`` as soon as ``forward`` returns. Keep such values
    on ``ctx`` as attributes (``ctx.k = k``) and save only the tensors. Checked with the values the
    file actually passes to ``apply``.
    """

    event = "save_non_tensor"
    code = "GW738"
    name = "save-for-backward-non-tensor"
    family = "F"
    severity = Severity.ERROR
    raises = "TypeError"
    summary = "ctx.save_for_backward is given a value that is not a tensor."
    message = ("`ctx.save_for_backward` gets {what} at position {position}, which is not a tensor: "
               "`{fn}.apply` raises TypeError when `forward` returns (keep it on ctx: `ctx.{name} = {name}`)")
    NO_FIX = (0,)
    INVALID = (
        """
        import torch
        class TopK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                values, idx = x.topk(k, dim=-1)
                ctx.save_for_backward(idx, k)  # <-
                return torch.zeros_like(x).scatter(-1, idx, values)
            @staticmethod
            def backward(ctx, g):
                idx, = ctx.saved_tensors[:1]
                return torch.zeros_like(g).scatter(-1, idx, g.gather(-1, idx)), None
        x = torch.randn(3, 6, requires_grad=True)
        TopK.apply(x, 2).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        class TopK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                values, idx = x.topk(k, dim=-1)
                ctx.save_for_backward(idx)
                ctx.k = k
                return torch.zeros_like(x).scatter(-1, idx, values)
            @staticmethod
            def backward(ctx, g):
                idx, = ctx.saved_tensors
                return torch.zeros_like(g).scatter(-1, idx, g.gather(-1, idx)), None
        x = torch.randn(3, 6, requires_grad=True)
        TopK.apply(x, 2).sum().backward()
        """,
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w=None):
                ctx.save_for_backward(x, w)  # None is allowed
                return x * 2 if w is None else x * w
            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * 2, None
        Scale.apply(torch.randn(3, requires_grad=True)).sum().backward()
        """,
    )
