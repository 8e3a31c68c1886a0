"""An in-place write on a tensor saved for backward, made inside a checkpointed function: what torch
does depends on the checkpoint. A reentrant one (``use_reentrant=True``) recomputes the forward in
the backward, under autograd, and raises the version-counter error; a non-reentrant one
(``use_reentrant=False``) recomputes the saved tensors, writes the recomputed value again, and the
backward passes its check and computes the gradients from the written values: nothing raises and the
gradients differ from the same network without checkpointing. GW201 is an error for the first and a
warning that says so for the second (``domain/torchsem.checkpointed`` records the non-reentrant call,
``checks/backward`` reads it). Each program also runs under torch."""
import pytest

from gradwarden.engine.diagnostic import Severity
from marked_cases import findings, run_under_torch

PROGRAM = """
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        g = torch.tanh(self.lin(x))
        g.mul_(0.5)
        return x * g
net = Gate()
x = torch.randn(3, 4, requires_grad=True)
y = checkpoint(net, x, use_reentrant=REENTRANT)
y.sum().backward()
"""
WRITE_ROW = 12

# the same network without checkpointing, out of place: the gradients it should get
PROBE = """
ref_x = x.detach().clone().requires_grad_()
(ref_x * (torch.tanh(net.lin(ref_x)) * 0.5)).sum().backward()
print("SAME" if torch.allclose(ref_x.grad, x.grad, atol=1e-6) else "DIFFERENT")
"""


@pytest.mark.parametrize("reentrant, severity", [("False", Severity.WARNING), ("True", Severity.ERROR)])
def test_write_inside_a_checkpoint(reentrant, severity):
    found = findings(PROGRAM.replace("REENTRANT", reentrant))
    assert [(row, code, sev) for row, code, sev in found] == [(WRITE_ROW, "GW201", severity)]


def test_non_reentrant_checkpoint_computes_wrong_gradients_silently_under_torch():
    res = run_under_torch(PROGRAM.replace("REENTRANT", "False"), PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == "DIFFERENT"


def test_reentrant_checkpoint_raises_under_torch():
    res = run_under_torch(PROGRAM.replace("REENTRANT", "True"))
    assert res.returncode != 0 and "modified by an inplace operation" in res.stderr
