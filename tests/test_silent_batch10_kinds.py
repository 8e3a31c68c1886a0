"""Static checks of the kinds batch 10 (tests/data/variants/BATCHES.md) missed at first contact,
written as other programs of the same kinds, one hazard and its correct twin per mechanism, each
also run under torch to show the hazard is what torch does: a straight-through estimator that detaches
the live value on both sides (GW718 at the estimator, not at the op); a forward *pre*-hook that keeps a
detached copy of the module's input for a loss term (GW722 at the hook's store); an evaluation helper
that switches the model to eval mode and never restores it, with no ``.train()`` anywhere (GW724 at the
switch); a hand-written zeroing loop ``p.grad = None`` over one module while the optimizer also steps
another (GW725 at the loop's assignment); ``weight_norm`` applied to a layer after the optimizer was
built over its old weight (GW719 at the call); an entropy ``p * logp`` of a softmax over ``-inf``-masked
logits, ``0 x -inf`` hidden by ``nan_to_num`` or a mask (GW720 where the ``-inf`` log-probabilities are
made), and the same product of the model's own distribution not read as a soft target (no GW505); and a
batch-9 leftover: the zero diagonal of a pairwise self-difference moved by `transpose`/`permute` (GW720).
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""

import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


# --- a straight-through estimator written around the detached value -------------------------------
STE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
enc, dec = nn.Linear(6, 3), nn.Linear(3, 6)
x = torch.randn(8, 6)
z = torch.sigmoid(enc(x)) * 4
q = Q
loss = (dec(q) - x).pow(2).mean()
loss.backward()
"""

STES = {
    "z.detach() + (z.round() - z.detach())  # <-": True,
    "z.detach() + (torch.floor(z) - z.detach())  # <-": True,
    "z + (z.round() - z).detach()": False,
    "z - z.detach() + z.round().detach()": False,
}

GRAD_PROBE = """
print("ZERO" if enc.weight.grad.abs().sum().item() == 0 else "LIVE")
"""


@pytest.mark.parametrize("q", sorted(STES))
def test_straight_through_with_both_sides_detached_is_reported_at_the_estimator(q):
    src = STE.replace("Q", q)
    if STES[q]:
        assert _codes(src) == [(n, "GW718") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("q", sorted(STES))
def test_straight_through_with_both_sides_detached_under_torch(q):
    res = _run(_unmark(STE.replace("Q", q)), GRAD_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("ZERO" if STES[q] else "LIVE")


# --- a forward pre-hook keeps a detached copy of the module's input -------------------------------
PRE_HOOK = """
import torch
import torch.nn as nn
torch.manual_seed(0)
body, head = nn.Linear(5, 8), nn.Linear(8, 2)
kept = {}
def keep_input(module, args):
    kept["x"] = STORE
head.register_forward_pre_hook(keep_input)
x, y = torch.randn(6, 5), torch.randint(0, 2, (6,))
task = nn.functional.cross_entropy(head(torch.tanh(body(x))), y)
loss = task + 0.1 * kept["x"].pow(2).mean()
loss.backward()
"""

PRE_STORES = {
    "args[0].detach()  # <-": True,
    "args[0].detach().clone()  # <-": True,
    "args[0]": False,
}

PENALTY_PROBE = """
alone = torch.autograd.grad(nn.functional.cross_entropy(head(torch.tanh(body(x))), y), body.weight)[0]
print("SAME" if torch.allclose(body.weight.grad, alone) else "DIFFERENT")
"""


@pytest.mark.parametrize("store", sorted(PRE_STORES))
def test_pre_hook_detached_input_is_a_dead_term(store):
    src = PRE_HOOK.replace("STORE", store)
    if PRE_STORES[store]:
        assert _codes(src) == [(n, "GW722") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("store", sorted(PRE_STORES))
def test_pre_hook_detached_input_under_torch(store):
    res = _run(_unmark(PRE_HOOK.replace("STORE", store)), PENALTY_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SAME" if PRE_STORES[store] else "DIFFERENT")


# --- an evaluation helper leaves the model in eval mode; no .train() anywhere ----------------------
EVAL_HELPER = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.side = nn.Linear(8, 2)
        self.out = nn.Linear(8, 2)
    def forward(self, x):
        h = torch.relu(self.body(x))
        if self.training:
            return self.out(h) + self.side(h)
        return self.out(h)
def evaluate(net, x):
    SWITCH
    with torch.no_grad():
        score = net(x).sum().item()
    RESTORE
    return score
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
start = net.side.weight.detach().clone()
for epoch in range(2):
    evaluate(net, torch.randn(3, 4))
    loss = net(torch.randn(5, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

EVAL_CASES = {
    ("net.eval()  # <-", "pass"): True,
    ("net.train(mode=False)  # <-", "pass"): True,
    ("was = net.training; net.eval()", "net.train(was)"): False,
    ("net.eval()", "net.train()"): False,
}

MOVED_PROBE = """
print("STILL" if torch.equal(start, net.side.weight) else "MOVED")
"""


@pytest.mark.parametrize("case", sorted(EVAL_CASES))
def test_evaluation_helper_left_in_eval_mode(case):
    src = EVAL_HELPER.replace("SWITCH", case[0]).replace("RESTORE", case[1])
    if EVAL_CASES[case]:
        assert _codes(src) == [(n, "GW724") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("case", sorted(EVAL_CASES))
def test_evaluation_helper_left_in_eval_mode_under_torch(case):
    res = _run(_unmark(EVAL_HELPER.replace("SWITCH", case[0]).replace("RESTORE", case[1])), MOVED_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("STILL" if EVAL_CASES[case] else "MOVED")


def test_eval_without_a_no_grad_helper_stays_silent():
    """An `.eval()` in the loop itself with no `.train()` anywhere: the program may mean it (a model
    fine-tuned with its running statistics frozen); only an evaluation helper's leak is reported."""
    src = EVAL_HELPER.replace("SWITCH", "pass").replace("RESTORE", "pass").replace(
        "    evaluate(net, torch.randn(3, 4))\n", "    net.eval()\n")
    assert _codes(src) == []


# --- a hand-written zeroing loop over one module, an optimizer over two ----------------------------
MANUAL_ZERO = """
import torch
import torch.nn as nn
torch.manual_seed(0)
student, proj = nn.Linear(6, 4), nn.Linear(4, 3)
opt = torch.optim.SGD(list(student.parameters()) + list(proj.parameters()), lr=0.1)
for step in range(3):
    x = torch.randn(5, 6)
    for p in MODULE.parameters():
        p.grad = None  # <-
    loss = proj(student(x)).pow(2).mean()
    loss.backward()
    opt.step()
"""

ACCUM_PROBE = """
own = torch.autograd.grad(proj(student(x)).pow(2).mean(), proj.weight)[0]
print("OWN" if torch.allclose(proj.weight.grad, own) else "SUMMED")
"""

MODULES = {"student": True, "nn.ModuleList([student, proj])": False}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_manual_zeroing_loop_that_misses_a_module(module):
    src = MANUAL_ZERO.replace("MODULE", module)
    if MODULES[module]:
        assert _codes(src) == [(n, "GW725") for n in _marked(src)]
    else:
        assert _codes(src) == []


def test_manual_zeroing_loop_under_torch():
    """The probe takes the last step's own gradient at the weights after that step, so it is run on a
    copy of the program that stops before the last `opt.step()`."""
    for module, summed in MODULES.items():
        src = _unmark(MANUAL_ZERO.replace("MODULE", module)).replace("    opt.step()\n", "    if step < 2:\n        opt.step()\n")
        res = _run(src, ACCUM_PROBE)
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.split()[-1] == ("SUMMED" if summed else "OWN")


# --- weight_norm applied after the optimizer was built (its new parameters replace the weight) ----
REPARAM = """
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))
FIRST
SECOND
x, y = torch.randn(6, 5), torch.randn(6, 2)
for step in range(2):
    opt.zero_grad()
    loss = (net(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
"""

BUILD = "opt = torch.optim.SGD(net.parameters(), lr=0.1)"
REPARAMS = {
    (BUILD, "net[2] = parametrizations.weight_norm(net[2])  # <-"): True,
    # spectral_norm keeps the old Parameter object as `parametrizations.weight.original` (measured)
    (BUILD, "parametrizations.spectral_norm(net[0])"): False,
    (BUILD, "net[2] = torch.nn.utils.weight_norm(net[2])  # <-"): True,
    ("net[2] = parametrizations.weight_norm(net[2])", BUILD): False,
    ("parametrizations.spectral_norm(net[0])", BUILD): False,
}

UNUSED_PROBE = """
held = [p for g in opt.param_groups for p in g["params"]]
print("NONE" if any(p.grad is None for p in held) else "ALL")
"""


@pytest.mark.parametrize("order", sorted(REPARAMS))
def test_reparametrization_after_the_optimizer(order):
    src = REPARAM.replace("FIRST", order[0]).replace("SECOND", order[1])
    if REPARAMS[order]:
        assert _codes(src) == [(n, "GW719") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("order", sorted(REPARAMS))
def test_reparametrization_after_the_optimizer_under_torch(order):
    res = _run(_unmark(REPARAM.replace("FIRST", order[0]).replace("SECOND", order[1])), UNUSED_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if REPARAMS[order] else "ALL")


# --- an entropy of a softmax over -inf-masked logits: 0 x -inf, hidden by nan_to_num ----------------
MASKED_ENTROPY = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 5)
legal = torch.tensor([[True, True, False, True, False]] * 3)
logits = net(torch.randn(3, 4)).masked_fill(~legal, float("-inf"))
ENTROPY
ent.backward()
"""

ENTROPIES = {
    "logp = logits.log_softmax(-1)  # <-\nent = -(logp.exp() * logp).nan_to_num(0.0).sum()": True,
    "logp = torch.log_softmax(logits, dim=-1)  # <-\np = logits.softmax(-1)\n"
    "ent = -(p * logp).masked_fill(~legal, 0.0).sum()": True,
    "logp = logits.log_softmax(-1).clamp_min(-1e4)\nent = -(logp.exp() * logp).sum()": False,
    "logp = logits.log_softmax(-1)\nent = -(logp.exp() * logp.clamp_min(-1e4)).sum()": False,
    "logp = logits.log_softmax(-1)\nent = -logp.gather(1, torch.zeros(3, 1, dtype=torch.long)).sum()": False,
}

NAN_PROBE = """
print("NAN" if not torch.isfinite(net.weight.grad).all() else "FINITE")
"""


@pytest.mark.parametrize("entropy", sorted(ENTROPIES))
def test_entropy_of_a_masked_softmax(entropy):
    src = MASKED_ENTROPY.replace("ENTROPY", entropy)
    if ENTROPIES[entropy]:
        assert _codes(src) == [(n, "GW720") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("entropy", sorted(ENTROPIES))
def test_entropy_of_a_masked_softmax_under_torch(entropy):
    res = _run(_unmark(MASKED_ENTROPY.replace("ENTROPY", entropy)), NAN_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NAN" if ENTROPIES[entropy] else "FINITE")


def test_entropy_of_the_models_own_distribution_is_not_a_soft_target():
    """`p * logp` with `p = logp.exp()` or `softmax` of the logits `logp` is the `log_softmax` of:
    an entropy term (GW505 would call `p` a target that should be detached)."""
    for p in ("logp.exp()", "logits.softmax(-1)"):
        src = f"""
import torch
import torch.nn as nn
net = nn.Linear(4, 3)
logits = net(torch.randn(5, 4))
logp = logits.log_softmax(-1)
ent = -({p} * logp).sum(-1).mean()
ent.backward()
"""
        assert _codes(src) == []


# --- (batch 9 leftover) the zero diagonal of a pairwise self-difference moved by transpose/permute --
PAIR_MOVED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 3)
pos = net(torch.randn(6, 4))
rel = pos.unsqueeze(1) - pos.unsqueeze(0)
dist = DIST
dist.sum().backward()
"""

MOVED = {
    "rel.permute(2, 0, 1).pow(2).sum(0).sqrt()  # <-": True,
    "rel.transpose(0, 2).pow(2).sum(0).sqrt()  # <-": True,
    "rel.transpose(1, 2).pow(2).sum(1).sqrt()  # <-": True,
    "rel.permute(2, 0, 1).pow(2).sum(1).sqrt()": False,
    "(rel.permute(2, 0, 1).pow(2).sum(0) + 1e-12).sqrt()": False,
}


@pytest.mark.parametrize("dist", sorted(MOVED))
def test_pair_zeros_moved_by_transpose_or_permute(dist):
    src = PAIR_MOVED.replace("DIST", dist)
    if MOVED[dist]:
        assert _codes(src) == [(n, "GW720") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("dist", sorted(MOVED))
def test_pair_zeros_moved_by_transpose_or_permute_under_torch(dist):
    res = _run(_unmark(PAIR_MOVED.replace("DIST", dist)), NAN_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NAN" if MOVED[dist] else "FINITE")
