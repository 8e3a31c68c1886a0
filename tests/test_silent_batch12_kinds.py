"""Static checks of the kinds batch 12 (tests/data/variants/BATCHES.md) missed at first contact, written as
other programs of the same kinds, one hazard and its correct twin per mechanism, each also run under torch
to show the hazard is what torch does: ``torch.set_grad_enabled(False)`` called as a statement inside a
helper leaves autograd off for the caller after the helper returns (the next backward raises: GW701 at the
statement), while a helper that restores the mode it saved, or scopes the switch with ``with``/a decorator,
leaves it on; ``acos``/``asin`` of ``E`` in the branch a ``torch.where`` guard ``E < 1`` (``E > -1``,
``E.abs() < 1``) rejects is at its singular point there, so the rejected elements' gradient is 0 x inf = NaN
(GW720 at the ``where``), while a clamp inside the op keeps it finite.
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""

import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


def _check(src: str, code: str) -> None:
    rows = _marked(src)
    assert _codes(src) == [(n, code) for n in rows]


# --- grad mode switched off by a statement in a helper, not restored --------------------------------
MODE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
HELPER
net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x, y = torch.randn(12, 5), torch.randn(12, 1)
for epoch in range(2):
    opt.zero_grad()
    loss = (net(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
    print(report(net, x, y))
"""

HELPERS = {
    "bare statement": ("def report(model, x, y):\n    torch.set_grad_enabled(False)  # <-\n"
                       "    return (model(x) - y).abs().mean().item()\n", True),
    "statement with torch.autograd": ("def report(model, x, y):\n    torch.autograd.set_grad_enabled(False)  # <-\n"
                                      "    err = (model(x) - y).abs().mean()\n    return err.item()\n", True),
    "saved mode restored": ("def report(model, x, y):\n    prev = torch.is_grad_enabled()\n"
                            "    torch.set_grad_enabled(False)\n    err = (model(x) - y).abs().mean().item()\n"
                            "    torch.set_grad_enabled(prev)\n    return err\n", False),
    "switched back on": ("def report(model, x, y):\n    torch.set_grad_enabled(False)\n"
                         "    err = (model(x) - y).abs().mean().item()\n    torch.set_grad_enabled(True)\n"
                         "    return err\n", False),
    "with block": ("def report(model, x, y):\n    with torch.set_grad_enabled(False):\n"
                   "        return (model(x) - y).abs().mean().item()\n", False),
    "decorated": ("@torch.no_grad()\ndef report(model, x, y):\n    torch.set_grad_enabled(False)\n"
                  "    return (model(x) - y).abs().mean().item()\n", False),
}


def _mode(case: str) -> str:
    helper, hazard = HELPERS[case]
    src = MODE.replace("HELPER", helper)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(HELPERS))
def test_grad_mode_left_off_by_a_helper(case):
    _check(_mode(case), "GW701")


@pytest.mark.parametrize("case", sorted(HELPERS))
def test_grad_mode_left_off_by_a_helper_under_torch(case):
    res = _run(_unmark(_mode(case)), "print('DONE')\n")
    if HELPERS[case][1]:
        assert res.returncode != 0 and "does not require grad" in res.stderr, res.stderr[-2000:]
    else:
        assert res.returncode == 0 and res.stdout.split()[-1] == "DONE", res.stderr[-2000:]


# --- acos / asin in the branch a guard rejects at +-1 ----------------------------------------------
ACOS = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
proj = nn.Linear(6, 4)
u = F.normalize(proj(torch.randn(5, 6)), dim=-1)
c = u @ u.T
EXPR
loss = ang.sum()
loss.backward()
"""

BRANCHES = {
    "acos rejected at 1": ("ang = torch.where(c < 1.0, torch.acos(c), torch.zeros_like(c))  # <-", True),
    "acos method, guard on |c|": ("ang = torch.where(c.abs() < 1, c.acos(), torch.zeros_like(c))  # <-", True),
    "asin rejected at |c| >= 1": ("ang = torch.where(c.abs() < 1, torch.asin(c), torch.zeros_like(c))  # <-", True),
    "acos of a clamped copy": ("ang = torch.where(c < 1.0, torch.acos(c.clamp(-1 + 1e-6, 1 - 1e-6)), torch.zeros_like(c))",
                               False),
    "acos clamped, no where": ("ang = torch.acos(c.clamp(-1 + 1e-6, 1 - 1e-6))", False),
}


def _acos(case: str) -> str:
    expr, hazard = BRANCHES[case]
    src = ACOS.replace("EXPR", expr)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(BRANCHES))
def test_unit_singular_branch_under_where(case):
    _check(_acos(case), "GW720")


@pytest.mark.parametrize("case", sorted(BRANCHES))
def test_unit_singular_branch_under_torch(case):
    res = _run(_unmark(_acos(case)), "print('NAN' if not torch.isfinite(proj.weight.grad).all() else 'FINITE')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    # the diagonal of c is 1 (or a hair above): the guard rejects it, and acos' derivative there is infinite
    assert res.stdout.split()[-1] == ("NAN" if BRANCHES[case][1] else "FINITE")
