"""Family C, the rest of torch's view checks: views made under no_grad, ``detach_()`` of a
view, writes whose source overlaps the destination, writes into overlapping unfold windows."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class NoGradViewInplace(Rule):
    """An in-place write, with grad mode on, to a view created under ``torch.no_grad()``.

    A view made while gradients were disabled cannot be tracked through an in-place op later:
    PyTorch raises ``RuntimeError: A view was created in no_grad mode and is being modified
    inplace with grad mode enabled`` (also for views of that view) when the write needs a
    history — always when the view's base requires grad, and, when it does not, as soon as
    the value written requires grad (filling a crop of the input with a learnable patch).
    A custom ``autograd.Function`` whose ``forward`` returns an input as-is, called on inputs
    that do not require grad, hands back the same kind of view.

    When the base requires grad, make the view and the write both inside ``no_grad`` (the
    write is then not recorded) or both outside it; when the value written requires grad,
    make the view a tensor of its own (``.clone()``) before writing into it.
    """

    event = "nograd_view_inplace"
    code = "GW711"
    name = "no-grad-view-inplace"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write with grad on to a view created under no_grad."
    message = "in-place {op} on `{name}`{at}, {what}{view_at}, with grad mode on: raises{cond}"
    INVALID = (
        """
        import torch
        h = torch.randn(4, 3, requires_grad=True) * 1.0
        with torch.no_grad():
            first = h[0]
        first.mul_(2)  # <-
        """,
        """
        import torch
        patch = torch.zeros(2, 3, requires_grad=True)
        volume = torch.randn(4, 2, 3)
        with torch.no_grad():
            crop = volume[:2]  # <-
        crop[0] = crop[0] + patch
        """,
        """
        import torch
        class Scatter(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x
            @staticmethod
            def backward(ctx, grad):
                return grad
        patch = torch.zeros(3, requires_grad=True)
        x = Scatter.apply(torch.randn(4, 3))  # <-
        x[0] = x[0] * 0.5 + patch
        """,
    )
    VALID = (
        """
        import torch
        h = torch.randn(4, 3, requires_grad=True) * 1.0
        with torch.no_grad():
            first = h[0]
            first.mul_(2)
        """,
        """
        import torch
        w = torch.randn(4, 3, requires_grad=True)
        with torch.no_grad():
            row = w[0]
        row = row * 2
        """,
        """
        import torch
        patch = torch.zeros(2, 3, requires_grad=True)
        volume = torch.randn(4, 2, 3)
        with torch.no_grad():
            crop = volume[:2]
        crop[0] = 0.0
        crop = crop.clone()
        crop[1] = crop[1] + patch
        """,
    )


class DetachViewInplace(Rule):
    """``.detach_()`` on a view.

    ``detach_()`` changes the tensor object in place, which a view (a slice, ``x.t()``,
    ``x.view(...)``, an output of ``split``) cannot do: PyTorch raises ``RuntimeError: Can't
    detach views in-place. Use detach() instead``. Rebind instead: ``h = h.detach()``.
    """

    event = "detach_view"
    code = "GW712"
    name = "detach-view-inplace"
    family = "C"
    severity = Severity.ERROR
    summary = ".detach_() on a view."
    message = "`{name}.detach_()` on a view: raises (views cannot be detached in place; use `{name} = {name}.detach()`){cond}"
    INVALID = (
        """
        import torch
        from torch import nn
        rnn = nn.GRU(4, 8, batch_first=True)
        out, _ = rnn(torch.randn(2, 5, 4))
        h = out[:, -1]
        h.detach_()  # <-
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        rnn = nn.GRU(4, 8, batch_first=True)
        out, _ = rnn(torch.randn(2, 5, 4))
        h = out[:, -1]
        h = h.detach()
        """,
    )


class SelfOverlappingWrite(Rule):
    """A write whose source (or index) shares memory with its destination.

    ``x.copy_(x.t())``, ``x[1:] = x[:-1]`` on a contiguous tensor, ``idx[idx] = 0`` or
    ``x[i] = x[1:3]`` (index_put_ with values that view the destination) make PyTorch refuse
    with ``RuntimeError: unsupported operation: some elements of the input tensor and the
    written-to tensor refer to a single memory location. Please clone() the tensor before
    performing the operation.`` Clone the source (``x[1:] = x[:-1].clone()``).

    The same shift along a later dimension (``frames[:, 1:] = frames[:, :-1]``, a temporal
    shift ``x[:, 1:, :fold] = x[:, :-1, :fold]``, the last dim ``taps[..., 1:] = taps[..., :-1]``,
    ``x.narrow(-1, 1, n - 1).copy_(x.narrow(-1, 0, n - 1))``) does not raise: PyTorch cannot see the overlap
    of these strided views and copies element by element in memory order, so each element reads
    a value this copy already overwrote, and the first slice is smeared over the whole window
    (measured, torch 2.13; the shift towards the front, ``x[:, :-1] = x[:, 1:]``, reads before it
    writes and comes out right). Nothing raises: reported as a warning.
    """

    event = "self_overlap"
    code = "GW713"
    name = "self-overlapping-write"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write whose source or index shares memory with the destination."
    message = "`{op}` into `{name}`: {desc}; {outcome}"
    INVALID = (
        """
        import torch
        buf = torch.zeros(6)
        buf[1:] = buf[:-1]  # <-
        """,
        """
        import torch
        m = torch.randn(3, 3)
        m.copy_(m.t())  # <-
        """,
        """
        import torch
        perm = torch.tensor([2, 0, 1])
        perm[perm] = torch.tensor([0, 1, 2])  # <-
        """,
    )
    VALID = (
        """
        import torch
        buf = torch.zeros(6)
        buf[1:] = buf[:-1].clone()
        buf[:3] = buf[3:]
        """,
        """
        import torch
        m = torch.randn(3, 3)
        m.copy_(m.t().clone())
        """,
        """
        import torch
        frames = torch.zeros(4, 3, 5)
        frames[:, 1:] = frames[:, :-1].clone()
        frames[:, :-1] = frames[:, 1:]  # towards the front: reads before it writes
        """,
        """
        import torch
        taps = torch.zeros(2, 5)
        taps[..., 1:] = taps[..., :-1].clone()
        taps.narrow(-1, 0, 4).copy_(taps.narrow(-1, 1, 4))  # towards the front
        """,
        """
        import torch
        x = torch.zeros(2, 3, 4)
        t = x.shape[-1]
        x.narrow(-1, 2, t - 2).copy_(x.narrow(-1, 0, t - 2))  # side by side: no element shared
        x.narrow(-1, 0, t - 1).copy_(x.narrow(-1, 1, t - 1))  # towards the front
        """,
    )


class UnfoldWindowWrite(Rule):
    """An in-place write into the windows of ``x.unfold(dim, size, step)`` with ``step < size``.

    ``unfold`` returns a strided view whose neighbouring windows share elements of ``x``.
    Writing into it raises nothing: each write lands in ``x`` and shows up in every window
    that shares the element, so per-window updates silently corrupt each other (and ``x``).
    Work on a copy (``x.unfold(...).clone()``) or write the result out of place.
    """

    event = "unfold_write"
    code = "GW714"
    name = "unfold-window-write"
    family = "C"
    severity = Severity.WARNING
    summary = "In-place write into overlapping unfold windows (silent corruption)."
    message = "in-place {op} into `{name}`, overlapping windows of `unfold` (line {unfold_line}): every window sharing an element sees the write, and so does the source{cond}"
    INVALID = (
        """
        import torch
        signal = torch.arange(10.0)
        frames = signal.unfold(0, 4, 2)
        frames[:, 0] = 0.0  # <-
        """,
    )
    VALID = (
        """
        import torch
        signal = torch.arange(10.0)
        frames = signal.unfold(0, 4, 2).clone()
        frames[:, 0] = 0.0
        """,
        """
        import torch
        signal = torch.arange(12.0)
        frames = signal.unfold(0, 4, 4)
        frames *= 2.0
        """,
    )
