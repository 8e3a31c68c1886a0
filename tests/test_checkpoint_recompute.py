"""An in-place write on a tensor saved for backward, made inside a checkpointed function: what torch
does depends on the checkpoint. A reentrant one (``use_reentrant=True``) recomputes the forward in
the backward, under autograd, and raises the version-counter error; a non-reentrant one
(``use_reentrant=False``) recomputes the saved tensors, writes the recomputed value again, and the
backward passes its check and computes the gradients from the written values: nothing raises and the
gradients differ from the same network without checkpointing. GW201 is an error for the first and a
warning that says so for the second (``domain/torchsem.checkpointed`` records the non-reentrant call,
``checks/backward`` reads it). Each program also runs under torch."""
import json
import subprocess
import sys

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


# The same write in a helper module, run by a script through a checkpoint: the helper analysed
# alone assumes a later backward of its callers and calls the write an error; the script's analysis
# runs the checkpoint the program runs. A project check shows the finding once, in the helper, with
# the program's severity (runner.merge_findings: a finding made with the backward its program runs
# outranks one that assumes a caller's).
HELPER = """
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        g = torch.tanh(self.lin(x))
        g.mul_(0.5)
        return x * g
"""
HELPER_WRITE_ROW = 12
SCRIPT = """
import torch
from torch.utils.checkpoint import checkpoint
from blocks import Gate

torch.manual_seed(0)
net = Gate()
x = torch.randn(3, 4, requires_grad=True)
y = checkpoint(net, x, use_reentrant=REENTRANT)
y.sum().backward()
"""


def _check(root, target):
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", target],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return [(d["filename"], d["location"]["row"], d["code"], d["severity"]) for d in json.loads(proc.stdout)]


def _project_check(tmp_path, reentrant):
    (tmp_path / "blocks.py").write_text(HELPER.lstrip("\n"))
    (tmp_path / "train.py").write_text(SCRIPT.lstrip("\n").replace("REENTRANT", reentrant))
    return _check(tmp_path, ".")


@pytest.mark.parametrize("reentrant, severity", [("False", "warning"), ("True", "error")])
def test_project_shows_the_programs_severity_once_in_the_helper(tmp_path, reentrant, severity):
    assert _project_check(tmp_path, reentrant) == [("blocks.py", HELPER_WRITE_ROW, "GW201", severity)]


def test_helper_alone_still_reports_the_write_for_its_callers(tmp_path):
    (tmp_path / "blocks.py").write_text(HELPER.lstrip("\n"))
    assert _check(tmp_path, "blocks.py") == [("blocks.py", HELPER_WRITE_ROW, "GW201", "error")]


def test_the_helper_runs_under_torch_as_labelled(tmp_path):
    (tmp_path / "blocks.py").write_text(HELPER.lstrip("\n"))
    for reentrant, raises in (("False", False), ("True", True)):
        (tmp_path / "train.py").write_text(SCRIPT.lstrip("\n").replace("REENTRANT", reentrant))
        res = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert (res.returncode != 0 and "modified by an inplace operation" in res.stderr) == raises, res.stderr[-2000:]
