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
    message = "in-place {op} through `.data` changes `{name}`, which `{saver}` (line {save_line}) saved for {backward}; .data bypasses the version check, so the gradients are silently wrong{cond}"
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
