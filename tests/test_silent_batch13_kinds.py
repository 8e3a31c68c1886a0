"""Static checks of the kinds batch 13 (tests/data/variants/BATCHES.md) missed at first contact, written as
other programs of the same kinds, one hazard and its correct twin per mechanism, each also run under torch
to show the hazard is what torch does: modules kept in a plain Python ``list``/``tuple`` attribute of an
``nn.Module`` are not registered, so an optimizer over ``model.parameters()`` never holds them while the
loss gives them gradients (GW719 at the statement that makes the list), while ``nn.ModuleList``, a list whose
items are registered with ``add_module``, and ``nn.Sequential(*blocks)`` are held; ``setattr(container,
name, module)`` with the name of one of a ``Sequential``'s (``ModuleDict``'s) children replaces that child
(the forward runs the new module): a swap before the optimizer is clean (no freeze of the wrapped layer
leaks into the wrapper's own parameters), a swap after it leaves the new parameters held by no optimizer
(GW719 at the call that makes the module); ``loss.backward(); opt.zero_grad(); opt.step()`` (or
``model.zero_grad()`` there) clears the gradients before the step applies them, so the weights never move
(GW740 at the zeroing call), while zeroing before the backward or after the step, or gradients assigned by hand
after the zeroing, train; a ``@torch.no_grad()`` helper (a metric) whose result is added to a loss adds a
constant, so the loss's gradient is the other terms' alone (GW722 at the decorator), while the undecorated
helper, the metric only logged, or the helper's result used as a target stay clean; ``clip_grad_norm_`` over
``params = model.parameters()`` after the optimizer was built over the same generator clips nothing (GW739 where
the generator is made), while a list, or a new generator at the clipping call, clips; in a single step (no
loop), ``detach_()`` of the tensor the loss then uses leaves its producer's parameters without a gradient (GW719 at
the ``detach_()``), while ``detach_()`` of a clone or a ``detach()`` copy leaves the loss's path alone.
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""

import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


def _check(src: str, code: str) -> None:
    rows = _marked(src)
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == [(n, code) for n in rows]


# --- modules kept in a plain list attribute ----------------------------------------------------------
LISTED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self, d=6, depth=2):
        super().__init__()
        self.stem = nn.Linear(3, d)
BLOCKS
        self.head = nn.Linear(d, 1)
    def forward(self, x):
        h = self.stem(x)
        for layer in self.layers:
            h = torch.tanh(layer(h)) + h
        return self.head(h)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for step in range(2):
    opt.zero_grad()
    (model(x) - y).pow(2).mean().backward()
    opt.step()
"""

BLOCKS = {
    "list comprehension": ("        self.layers = [nn.Linear(d, d) for _ in range(depth)]  # <-\n", True),
    "list grown by append": ("        self.layers = []  # <-\n        for _ in range(depth):\n"
                             "            self.layers.append(nn.Linear(d, d))\n", True),
    "tuple": ("        self.layers = (nn.Linear(d, d), nn.Linear(d, d))  # <-\n", True),
    "ModuleList": ("        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])\n", False),
    "list registered with add_module": ("        self.layers = [nn.Linear(d, d) for _ in range(depth)]\n"
                                        "        for i, layer in enumerate(self.layers):\n"
                                        "            self.add_module(f'layer{i}', layer)\n", False),
    "list wrapped in Sequential": ("        self.layers = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth)])\n",
                                   False),
}


def _listed(case: str) -> str:
    blocks, hazard = BLOCKS[case]
    src = LISTED.replace("BLOCKS\n", blocks)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(BLOCKS))
def test_modules_in_a_plain_list_are_held_by_no_optimizer(case):
    _check(_listed(case), "GW719")


@pytest.mark.parametrize("case", sorted(BLOCKS))
def test_modules_in_a_plain_list_under_torch(case):
    probe = "held = {id(p) for g in opt.param_groups for p in g['params']}\n"
    probe += "layer = list(model.layers)[0]\n"
    probe += "assert layer.weight.grad is not None\n"
    probe += "print('HELD' if id(layer.weight) in held else 'NOT_HELD')\n"
    res = _run(_unmark(_listed(case)), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NOT_HELD" if BLOCKS[case][1] else "HELD")


# --- a Sequential's child replaced by setattr (adapter injection) ------------------------------------
SWAP = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Adapter(nn.Module):
    def __init__(self, base, r=2):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.down = nn.Parameter(torch.randn(r, base.in_features) * 0.1)
        self.up = nn.Parameter(torch.zeros(base.out_features, r))
    def forward(self, x):
        return self.base(x) + x @ self.down.t() @ self.up.t()
model = nn.Sequential(nn.Linear(5, 7), nn.GELU(), nn.Linear(7, 2))
BEFORE
for name, child in list(model.named_children()):
    if isinstance(child, nn.Linear):
        setattr(model, name, Adapter(child))  # <-
AFTER
x, y = torch.randn(10, 5), torch.randn(10, 2)
for step in range(2):
    opt.zero_grad()
    (model(x) - y).pow(2).mean().backward()
    opt.step()
"""
OPT_WHOLE = "opt = torch.optim.Adam(model.parameters(), lr=1e-2)\n"
SWAPS = {
    # before the swap the optimizer holds only the wrapped layers, which the adapters freeze (GW707)
    "optimizer built before the swap": (OPT_WHOLE.replace("\n", "  # <-\n"), "", True),
    "optimizer built after the swap": ("", OPT_WHOLE, False),
}


def _swap(case: str) -> str:
    before, after, hazard = SWAPS[case]
    src = SWAP.replace("BEFORE\n", before).replace("AFTER\n", after)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(SWAPS))
def test_child_swapped_by_setattr(case):
    src = _swap(case)
    rows = _marked(src)
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == list(zip(rows, ["GW707", "GW719"]))


@pytest.mark.parametrize("case", sorted(SWAPS))
def test_child_swapped_by_setattr_under_torch(case):
    probe = "held = {id(p) for g in opt.param_groups for p in g['params']}\n"
    probe += "assert isinstance(model[0], Adapter) and model[0].up.grad is not None\n"
    probe += "print('HELD' if id(model[0].up) in held else 'NOT_HELD')\n"
    res = _run(_unmark(_swap(case)), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NOT_HELD" if SWAPS[case][2] else "HELD")


def test_last_layer_replaced_by_negative_index_is_the_child_the_forward_runs():
    # `model[-1] = head` on a frozen Sequential: the new head trains (no GW701/GW707/GW719), as torch does
    src = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
model.requires_grad_(False)
model[-1] = nn.Linear(8, 2)
opt = torch.optim.SGD(model[-1].parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(5, 4)).pow(2).mean().backward()
    opt.step()
"""
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == []
    res = _run(src, "print(tuple(model(torch.randn(1, 4)).shape), model[-1].weight.grad is not None)\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[-2] == "(1, 2) True"


# --- gradients cleared between the backward and the step ---------------------------------------------
CLEARED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
before = model[0].weight.detach().clone()
x, y = torch.randn(10, 4), torch.randn(10, 2)
for step in range(3):
BODY
"""
STEP = "    loss = (model(x) - y).pow(2).mean()\n"
CLEARS = {
    "opt.zero_grad between backward and step": (STEP + "    loss.backward()\n    opt.zero_grad()  # <-\n"
                                                "    opt.step()\n", True),
    "model.zero_grad between backward and step": (STEP + "    loss.backward()\n    model.zero_grad()  # <-\n"
                                                  "    opt.step()\n", True),
    "gradients assigned by hand after zero_grad": (STEP + "    loss.backward()\n    opt.zero_grad()\n"
                                                   "    for p in model.parameters():\n"
                                                   "        p.grad = torch.ones_like(p)\n    opt.step()\n", False),
    "zero_grad before the backward": ("    opt.zero_grad()\n" + STEP + "    loss.backward()\n    opt.step()\n", False),
    "zero_grad after the step": (STEP + "    loss.backward()\n    opt.step()\n    opt.zero_grad()\n", False),
    "zero_grad after the step, backward again": (STEP + "    loss.backward()\n    opt.step()\n    opt.zero_grad()\n"
                                                 "    (model(x) - y).abs().mean().backward()\n    opt.step()\n", False),
}


def _cleared(case: str) -> str:
    body, hazard = CLEARS[case]
    src = CLEARED.replace("BODY\n", body)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(CLEARS))
def test_gradients_cleared_before_the_step(case):
    _check(_cleared(case), "GW740")


@pytest.mark.parametrize("case", sorted(CLEARS))
def test_gradients_cleared_before_the_step_under_torch(case):
    res = _run(_unmark(_cleared(case)), "print('STILL' if torch.equal(before, model[0].weight) else 'MOVED')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("STILL" if CLEARS[case][1] else "MOVED")


# --- a @torch.no_grad() helper's result added to a loss (a metric reused as a loss term) -------------
METRIC = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
DECORATOR
def soft_iou(logits, target):
    prob = logits.sigmoid()
    inter = (prob * target).sum()
    return inter / (prob.sum() + target.sum() - inter + 1.0)
net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, target = torch.randn(4, 6), (torch.rand(4, 6) > 0.5).float()
for step in range(2):
    logits = net(x)
    bce = F.binary_cross_entropy_with_logits(logits, target)
LOSS
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
METRICS = {
    "decorated metric added to the loss": ("@torch.no_grad()  # <-", "    loss = bce + (1 - soft_iou(logits, target))",
                                           True),
    "decorated metric subtracted, weighted": ("@torch.no_grad()  # <-",
                                              "    loss = bce - 0.5 * soft_iou(logits, target)", True),
    "undecorated metric added to the loss": ("", "    loss = bce + (1 - soft_iou(logits, target))", False),
    "decorated metric only logged": ("@torch.no_grad()",
                                     "    loss = bce\n    print(float(soft_iou(logits, target)))", False),
    "decorated helper used as a target": ("@torch.no_grad()",
                                          "    loss = F.mse_loss(logits.sigmoid().mean(), soft_iou(logits, target))",
                                          False),
}


def _metric(case: str) -> str:
    deco, loss, hazard = METRICS[case]
    src = METRIC.replace("DECORATOR", deco).replace("LOSS", loss)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(METRICS))
def test_no_grad_helper_added_to_a_loss(case):
    _check(_metric(case), "GW722")


@pytest.mark.parametrize("case", sorted(METRICS))
def test_no_grad_helper_added_to_a_loss_under_torch(case):
    probe = "logits = net(x)\nbce = F.binary_cross_entropy_with_logits(logits, target)\n"
    probe += "\n".join(line.replace("    ", "", 1) for line in METRICS[case][1].splitlines() if "print" not in line) + "\n"
    probe += "g_all = torch.autograd.grad(loss, net[2].weight, retain_graph=True)[0]\n"
    probe += "g_bce = torch.autograd.grad(bce, net[2].weight)[0]\n"
    probe += "print('BCE_ONLY' if torch.allclose(g_all, g_bce) else 'MORE')\n"
    res = _run(_unmark(_metric(case)), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    hazard = METRICS[case][2]
    # the hazards' term adds nothing to the gradient; the undecorated term does (the logged/target twins: the
    # loss is bce alone, or a different loss, and their gradient is not bce's)
    if hazard:
        assert res.stdout.split()[-1] == "BCE_ONLY"
    elif case == "undecorated metric added to the loss":
        assert res.stdout.split()[-1] == "MORE"


# --- clipping over a parameters() generator something already read (batch 12's H135) -----------------
CLIP = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
MAKE
x, y = torch.randn(12, 4), torch.randn(12, 3)
opt.zero_grad()
(100.0 * (model(x) - y).pow(2).mean()).backward()
torch.nn.utils.clip_grad_norm_(CLIPPED, max_norm=1.0)
total = torch.stack([p.grad.norm() for p in model.parameters()]).norm().item()
opt.step()
"""
CLIPS = {
    "generator shared with the optimizer": ("params = model.parameters()  # <-\n"
                                            "opt = torch.optim.SGD(params, lr=0.1)\n", "params", True),
    "list shared with the optimizer": ("params = list(model.parameters())\n"
                                       "opt = torch.optim.SGD(params, lr=0.1)\n", "params", False),
    "a new generator at the clipping call": ("params = model.parameters()\n"
                                             "opt = torch.optim.SGD(params, lr=0.1)\n", "model.parameters()", False),
}


def _clip(case: str) -> str:
    make, clipped, hazard = CLIPS[case]
    src = CLIP.replace("MAKE\n", make).replace("CLIPPED", clipped)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(CLIPS))
def test_clipping_over_a_consumed_generator(case):
    _check(_clip(case), "GW739")


@pytest.mark.parametrize("case", sorted(CLIPS))
def test_clipping_over_a_consumed_generator_under_torch(case):
    res = _run(_unmark(_clip(case)), "print('UNCLIPPED' if total > 1.01 else 'CLIPPED')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("UNCLIPPED" if CLIPS[case][2] else "CLIPPED")


# --- detach_() in a single step on the tensor the loss then uses (batch 12's H131) ---------------------
DETACH = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
keys_net, query_net = nn.Linear(7, 5), nn.Linear(6, 5)
opt = torch.optim.SGD([*keys_net.parameters(), *query_net.parameters()], lr=0.1)
bank = []
keys = keys_net(torch.randn(4, 7))
CUT
loss = F.cross_entropy(query_net(torch.randn(4, 6)) @ keys.T, torch.arange(4))
opt.zero_grad()
loss.backward()
opt.step()
"""
DETACHES = {
    "detach_ inside the append": ("bank.append(keys.detach_())  # <-", True),
    "detach_ as a statement": ("keys.detach_()  # <-\nbank.append(keys)", True),
    "detach_ of a clone": ("bank.append(keys.clone().detach_())", False),
    "detach copy": ("bank.append(keys.detach())", False),
}


def _detach(case: str) -> str:
    cut, hazard = DETACHES[case]
    src = DETACH.replace("CUT", cut)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(DETACHES))
def test_detach_in_place_in_a_single_step(case):
    _check(_detach(case), "GW719")


@pytest.mark.parametrize("case", sorted(DETACHES))
def test_detach_in_place_in_a_single_step_under_torch(case):
    res = _run(_unmark(_detach(case)), "print('NONE' if keys_net.weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if DETACHES[case][1] else "GRAD")
