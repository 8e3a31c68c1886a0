"""GW505 (target not detached) on a loss comparing two runs of the same computation.

A Pi-model or consistency loss compares two stochastic passes of one model through the same
ops and may differentiate both on purpose (the Pi-model does): the code cannot prove a slip, so
the finding is information. A bootstrap target (``r + gamma * net(s2).max(1).values``) is a
different computation through the same parameters: still a warning. Both run under torch; the
difference is what the gradient is meant to be, which only the method says."""
import textwrap

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity

HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
net = nn.Sequential(nn.Dropout(0.2), nn.Linear(4, 3))
x, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
"""


def _gw505(body: str):
    src = textwrap.dedent(HEAD) + textwrap.dedent(body)
    return [(d.row, d.severity) for d in analyze_source(src, "case.py") if d.code == "GW505"]


def test_two_passes_through_the_same_ops_are_information():
    found = _gw505("""
        a, b = net(x), net(x)
        F.mse_loss(F.softmax(a, 1), F.softmax(b, 1)).backward()
    """)
    assert found and all(sev == Severity.INFORMATION for _, sev in found), found


def test_a_bootstrap_target_is_still_a_warning():
    found = _gw505("""
        q = net(x).max(1).values
        target = r + 0.9 * net(s2).max(1).values
        F.smooth_l1_loss(q, target).backward()
    """)
    assert [sev for _, sev in found] == [Severity.WARNING], found


def test_a_target_through_other_ops_of_the_same_model_is_still_a_warning():
    found = _gw505("""
        pred = F.log_softmax(net(x), 1)
        target = F.softmax(net(x) * 2.0, 1)
        F.kl_div(pred, target, reduction="batchmean").backward()
    """)
    assert found and all(sev == Severity.WARNING for _, sev in found), found
