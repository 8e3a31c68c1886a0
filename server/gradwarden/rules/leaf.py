"""Family A: in-place operations on leaves that require grad."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class LeafInplace(Rule):
    """An in-place operation on a leaf tensor that requires grad (or on a view of one).

    Parameters and tensors created with ``requires_grad=True`` are leaves: autograd
    accumulates their ``.grad`` and refuses to let them be changed in place while it records,
    because the change could not be differentiated. This covers ``_``-suffixed methods
    (``w.normal_()``, ``p.add_(...)``), augmented assignment (``w += 1``), slice and index
    assignment (``w[0] = 1``, also through a view), ``out=`` and ``nn.init.*`` — and an
    in-place activation (``nn.ReLU(inplace=True)``) applied directly to a parameter.
    It raises ``RuntimeError: a leaf Variable that requires grad is being used in an in-place
    operation`` at once. Updates of parameters belong under ``with torch.no_grad():``.
    """

    event = "leaf_inplace"
    code = "GW101"
    name = "leaf-inplace"
    family = "A"
    severity = Severity.ERROR
    summary = "In-place operation on a leaf tensor that requires grad."
    message = "in-place {op} on {what} `{name}`, a leaf that requires grad: raises at once ({hint})"
    INVALID = (
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        w += 1  # <-
        """,
        """
        import torch
        import torch.nn as nn
        lin = nn.Linear(2, 2)
        for p in lin.parameters():
            p.add_(p, alpha=-0.1)  # <-
        """,
        """
        import torch
        w = torch.empty(10)
        w.requires_grad = True
        w.normal_()  # <-
        """,
    )
    VALID = (
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        with torch.no_grad():
            w += 1
        """,
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        w = w + 1
        """,
    )
