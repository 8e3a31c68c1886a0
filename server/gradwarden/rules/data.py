"""Family F: writes through .data that autograd cannot see."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class DataWriteToSaved(Rule):
    """A write through ``.data`` to a tensor that a graph still needs for backward.

    ``.data`` shares storage but not the version counter, so autograd cannot notice: the
    backward silently uses the modified values and the gradients are wrong. Clone before the
    write (``snap = out.detach().clone()``), or use ``.detach()`` so autograd checks it, or
    move the update after the backward that needs the old values.
    """

    event = "data_write"
    code = "GW601"
    name = "data-write-to-saved"
    family = "F"
    severity = Severity.WARNING
    summary = "Write through .data to a tensor saved for backward (silently wrong gradients)."
    message = "{how} changes `{name}`, which `{saver}` (line {save_line}) saved for {backward}; .data bypasses the version check, so the gradients are silently wrong{cond}"
    INVALID = (
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        d_ = d.data
        f = torch.matmul(d, w2)
        d_[:] = 1  # <-
        f.backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        f = torch.matmul(d, w2)
        f.backward()
        d.data[:] = 1
        """,
    )


class HiddenWrite(Rule):
    """An in-place write through a ``.detach()`` or ``.data`` alias of a tensor that is part of
    a graph, which a later backward differentiates.

    The alias shares the tensor's memory, so every later op reads the new values; but autograd
    recorded the computation that produced the old ones and differentiates that. Gradients
    through the tensor ignore the write (rows zeroed through ``x.detach()[mask] = 0`` still get
    gradient). Express the change in the graph instead: ``x = torch.where(mask, 0.0, x)``,
    ``x = x * keep``.
    """

    event = "hidden_write"
    code = "GW602"
    name = "write-hidden-from-autograd"
    family = "F"
    severity = Severity.WARNING
    summary = "Writing a graph tensor through .detach()/.data: the backward differentiates the unmodified values."
    message = "in-place {op} through a detached alias changes `{orig}`, but autograd does not see it: the backward at line {backward_line} differentiates the values before the write (silently wrong gradients)"
    INVALID = (
        """
        import torch
        a = torch.randn(4, 3, requires_grad=True)
        x = a * 2
        x.detach()[0] = 0.0  # <-
        (x * torch.randn(4, 3)).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        a = torch.randn(4, 3, requires_grad=True)
        x = a * 2
        keep = torch.ones(4, 1)
        keep[0] = 0.0
        x = x * keep
        (x * torch.randn(4, 3)).sum().backward()
        """,
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        w.data -= 0.1 * w.grad  # a leaf updated by hand: not part of a graph
        """,
    )


class AnchorAliasesParameter(Rule):
    """A reference copy of the weights kept as ``p.data`` (or ``p.detach()``), then compared with
    the parameter: ``(p - anchor) ** 2``.

    ``.data`` and ``.detach()`` share the parameter's memory: every optimizer step moves the
    anchor with the weights, so the difference is always zero and the penalty (EWC, L2-SP, a
    proximal term) pulls towards nothing, silently. Keep a snapshot: ``p.detach().clone()``.
    """

    event = "anchor_aliases_param"
    code = "GW603"
    name = "anchor-aliases-parameter"
    family = "F"
    severity = Severity.WARNING
    summary = "A kept p.data / p.detach() compared with p: an alias that moves with the weights, the difference is always zero."
    NO_FIX = (0,)  # no automatic fix yet: the snapshot's `.clone()` is written by hand
    message = "`{name}` is the parameter's memory through {how}, not a copy: every update of `{param}` moves it too, so the difference at line {line} is always zero and that term gives no gradient (keep `.detach().clone()`)"
    INVALID = (
        """
        import torch
        w = torch.nn.Parameter(torch.randn(3))
        opt = torch.optim.SGD([w], lr=0.1)
        anchor = w.data  # <-
        for _ in range(3):
            loss = w.pow(2).sum() + ((w - anchor) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        w = torch.nn.Parameter(torch.randn(3))
        opt = torch.optim.SGD([w], lr=0.1)
        anchor = w.detach().clone()
        for _ in range(3):
            loss = w.pow(2).sum() + ((w - anchor) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        w = torch.nn.Parameter(torch.randn(3))
        opt = torch.optim.SGD([w], lr=0.1)
        for _ in range(3):
            loss = (w - w.detach()).sum() * 2.0 + w.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )


class UnregisteredTensor(Rule):
    """A module keeps a tensor that requires grad as a plain attribute, not an ``nn.Parameter``.

    ``self.log_vars = torch.zeros(n, requires_grad=True)`` is a leaf the loss gives a gradient, but
    ``nn.Module`` registers only ``Parameter``s (and buffers): ``module.parameters()`` does not list
    it, so an optimizer built over the modules' parameters never holds it, and every step leaves it
    unchanged, silently (it is not moved by ``.to(device)`` nor saved in the ``state_dict`` either).
    Wrap it: ``self.log_vars = nn.Parameter(torch.zeros(n))``.
    """

    event = "unregistered_tensor"
    code = "GW604"
    name = "tensor-attribute-not-parameter"
    family = "H"
    severity = Severity.WARNING
    summary = "A module's tensor attribute that requires grad is not an nn.Parameter: .parameters() misses it, no optimizer steps it."
    NO_FIX = (0,)
    message = "`{name}` requires grad but is a plain tensor, not an `nn.Parameter`: the module does not register it, so `.parameters()` leaves it out and no optimizer holds it; the loss gives it a gradient that the step at {step} never applies (wrap it in `nn.Parameter`)"
    INVALID = (
        """
        import torch
        from torch import nn

        class Weighted(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
                self.log_var = torch.zeros(1, requires_grad=True)  # <-

            def forward(self, x):
                return (torch.exp(-self.log_var) * self.fc(x).pow(2)).mean() + self.log_var.sum()

        model = Weighted()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(4, 3))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn

        class Weighted(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
                self.log_var = nn.Parameter(torch.zeros(1))

            def forward(self, x):
                return (torch.exp(-self.log_var) * self.fc(x).pow(2)).mean() + self.log_var.sum()

        model = Weighted()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(4, 3))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        """
        import torch
        from torch import nn

        class Weighted(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
                self.log_var = torch.zeros(1, requires_grad=True)

            def forward(self, x):
                return (torch.exp(-self.log_var) * self.fc(x).pow(2)).mean() + self.log_var.sum()

        model = Weighted()
        opt = torch.optim.SGD(list(model.parameters()) + [model.log_var], lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(4, 3))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
