"""Static checks of the kinds batch 15 (tests/data/variants/BATCHES.md) missed at first contact, written as
other programs of the same kinds, one hazard and its correct twins per mechanism, each also run under torch to
show the hazard is what torch does: a gradient hook on a parameter that returns zeros of its gradient
(``zeros_like(g)``, ``g * 0``, a function returning ``g.mul(0)``) leaves the parameter where it started (GW742 at
the registration), while a hook that scales, masks or returns nothing trains it; ``clip_grad_value_``/
``clip_grad_norm_`` with a threshold known to be 0 zero every gradient (GW743 at the call), while a guarded call
or a positive threshold trains; ``StepLR``/``MultiStepLR``/``ExponentialLR`` with ``gamma=0`` stop training at
their first decay when the program steps after it (GW744 at the scheduler), while a factor in (0, 1] or a first
decay after the last step does not; ``zero_grad(); step(); loss.backward()`` never applies a gradient (GW740 at
the step, the statement out of place), while ``backward(); step()`` trains; a ``with torch.no_grad():`` block in
the body of a called function (a plain class's ``__call__``, a helper) that cuts a tensor it was handed is
reported at the block (GW722), not at a caller's use, and the same function without the block trains.
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""
import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


def _check(src: str, code: str) -> None:
    rows = _marked(src)
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == [(n, code) for n in rows]


MOVED = "print('MOVED' if not torch.equal(before, WATCH) else 'STILL')\n"


def _moved(src: str, watch: str) -> str:
    res = _run(_unmark(src), MOVED.replace("WATCH", watch))
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.split()[-1]


# --- a gradient hook that returns zeros -----------------------------------------------------------------
HOOKED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
HELPER
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
mask = torch.ones(8, 5)
mask[0] = 0
HOOK
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(12, 5), torch.randn(12, 1)
before = model[0].weight.detach().clone()
for step in range(3):
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()
"""
HOOKS = {
    "lambda zeros_like": ("", "model[0].weight.register_hook(lambda g: torch.zeros_like(g))  # <-\n", True),
    "lambda times zero": ("", "model[0].weight.register_hook(lambda grad: grad * 0)  # <-\n", True),
    "function returning mul(0)": ("def silence(g):\n    return g.mul(0.0)\n",
                                  "model[0].weight.register_hook(silence)  # <-\n", True),
    "lambda scales": ("", "model[0].weight.register_hook(lambda g: g * 0.1)\n", False),
    "lambda masks rows": ("", "model[0].weight.register_hook(lambda g: g * mask)\n", False),
    "function that only records": ("norms = []\ndef record(g):\n    norms.append(g.norm())\n",
                                   "model[0].weight.register_hook(record)\n", False),
}


def _hooked(case: str) -> str:
    helper, hook, hazard = HOOKS[case]
    src = HOOKED.replace("HELPER\n", helper).replace("HOOK\n", hook)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_gradient_hook_returns_zero(case):
    _check(_hooked(case), "GW742")


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_gradient_hook_returns_zero_under_torch(case):
    assert _moved(_hooked(case), "model[0].weight") == ("STILL" if HOOKS[case][2] else "MOVED")


# --- gradient clipping to a threshold of zero ----------------------------------------------------------
CLIPPED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
clip = VALUE
x, y = torch.randn(12, 5), torch.randn(12, 1)
before = model[0].weight.detach().clone()
for step in range(3):
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
CLIP
    opt.step()
"""
CLIPS = {
    "value clip of zero": ("0.0", "    nn.utils.clip_grad_value_(model.parameters(), clip)  # <-\n", True),
    "norm clip of zero": ("0", "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)  # <-\n", True),
    "guarded value clip": ("0.0", "    if clip > 0:\n        nn.utils.clip_grad_value_(model.parameters(), clip)\n", False),
    "value clip of one": ("1.0", "    nn.utils.clip_grad_value_(model.parameters(), clip)\n", False),
    "norm clip of one": ("1.0", "    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)\n", False),
}


def _clipped(case: str) -> str:
    value, clip, hazard = CLIPS[case]
    src = CLIPPED.replace("VALUE", value).replace("CLIP\n", clip)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(CLIPS))
def test_gradient_clipped_to_zero(case):
    _check(_clipped(case), "GW743")


@pytest.mark.parametrize("case", sorted(CLIPS))
def test_gradient_clipped_to_zero_under_torch(case):
    assert _moved(_clipped(case), "model[0].weight") == ("STILL" if CLIPS[case][2] else "MOVED")


# --- a step decay with gamma=0 ----------------------------------------------------------------------------
DECAYED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
SCHED
x, y = torch.randn(12, 5), torch.randn(12, 1)
before = None
for epoch in range(3):
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()
    sched.step()
    if before is None:
        before = model[0].weight.detach().clone()
"""
SCHEDS = {
    "StepLR gamma 0": ("sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.0)  # <-\n", True),
    "ExponentialLR gamma 0 positional": ("sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0)  # <-\n", True),
    "MultiStepLR gamma 0": ("sched = torch.optim.lr_scheduler.MultiStepLR(opt, [1, 2], gamma=0.0)  # <-\n", True),
    "StepLR gamma one half": ("sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)\n", False),
    "StepLR gamma 0 after the run": ("sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.0)\n", False),
    "MultiStepLR gamma 0 after the run": ("sched = torch.optim.lr_scheduler.MultiStepLR(opt, [4], gamma=0.0)\n", False),
}


def _decayed(case: str) -> str:
    sched, hazard = SCHEDS[case]
    src = DECAYED.replace("SCHED\n", sched)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(SCHEDS))
def test_learning_rate_decayed_to_zero(case):
    _check(_decayed(case), "GW744")


@pytest.mark.parametrize("case", sorted(SCHEDS))
def test_learning_rate_decayed_to_zero_under_torch(case):
    assert _moved(_decayed(case), "model[0].weight") == ("STILL" if SCHEDS[case][1] else "MOVED")


# --- the step before the backward of its iteration -------------------------------------------------------
ORDERED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(3)]
before = model[0].weight.detach().clone()
for x, y in batches:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
ORDER
"""
ORDERS = {
    "step before backward": ("    opt.step()  # <-\n    loss.backward()\n", True),
    "backward then step": ("    loss.backward()\n    opt.step()\n", False),
}


def _ordered(case: str) -> str:
    order, hazard = ORDERS[case]
    src = ORDERED.replace("ORDER\n", order)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(ORDERS))
def test_step_before_backward_reported_at_the_step(case):
    _check(_ordered(case), "GW740")


@pytest.mark.parametrize("case", sorted(ORDERS))
def test_step_before_backward_under_torch(case):
    assert _moved(_ordered(case), "model[0].weight") == ("STILL" if ORDERS[case][1] else "MOVED")


# --- a no_grad block inside a called function's body -------------------------------------------------------
WRAPPED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
WRAPPER
encoder = nn.Linear(6, 8)
layer = nn.Linear(8, 3)
opt = torch.optim.SGD(list(encoder.parameters()) + list(layer.parameters()), lr=0.1)
x, y = torch.randn(10, 6), torch.randn(10, 3)
before = layer.weight.detach().clone()
for step in range(3):
    opt.zero_grad()
    h = encoder(x)
    loss = F.mse_loss(CALL, y) + 0.01 * h.pow(2).mean()
    loss.backward()
    opt.step()
"""
WRAPPERS = {
    "plain class __call__ under no_grad": (
        "class Head:\n    def __init__(self, layer):\n        self.layer = layer\n    def __call__(self, h):\n"
        "        with torch.no_grad():  # <-\n            return torch.tanh(self.layer(h))\nhead = None\n",
        "Head(layer)(h)", True),
    "helper function under no_grad": (
        "def project(layer, h):\n    with torch.no_grad():  # <-\n        return torch.tanh(layer(h))\n",
        "project(layer, h)", True),
    "plain class __call__ without no_grad": (
        "class Head:\n    def __init__(self, layer):\n        self.layer = layer\n    def __call__(self, h):\n"
        "        return torch.tanh(self.layer(h))\n", "Head(layer)(h)", False),
}


def _wrapped(case: str) -> str:
    wrapper, call, hazard = WRAPPERS[case]
    src = WRAPPED.replace("WRAPPER\n", wrapper).replace("CALL", call)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(WRAPPERS))
def test_no_grad_block_in_a_called_function_reported_at_the_block(case):
    _check(_wrapped(case), "GW722")


@pytest.mark.parametrize("case", sorted(WRAPPERS))
def test_no_grad_block_in_a_called_function_under_torch(case):
    assert _moved(_wrapped(case), "layer.weight") == ("STILL" if WRAPPERS[case][2] else "MOVED")


# --- a custom backward's gradient whose shape cannot be summed to its input's (batch 14's F208, batch 10's F206) --
SHAPED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x.mm(weight.t()) + bias
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
GRADS
        return grad_out.mm(weight), grad_w, grad_b
weight = nn.Parameter(torch.randn(4, 6))
bias = nn.Parameter(torch.zeros(4))
x = torch.randn(8, 6)
Affine.apply(x, weight, bias).pow(2).mean().backward()
"""
SHAPES = {
    "bias gradient summed over the features": (
        "        grad_w = grad_out.t().mm(x)\n        grad_b = grad_out.sum(1)  # <-\n", True),
    "weight gradient transposed": ("        grad_w = x.t().mm(grad_out)  # <-\n        grad_b = grad_out.sum(0)\n", True),
    "bias gradient summed over the batch": ("        grad_w = grad_out.t().mm(x)\n        grad_b = grad_out.sum(0)\n", False),
    "bias gradient left unreduced (autograd sums it)": (
        "        grad_w = grad_out.t().mm(x)\n        grad_b = grad_out\n", False),
}


def _shaped(case: str) -> str:
    grads, hazard = SHAPES[case]
    src = SHAPED.replace("GRADS\n", grads)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_custom_backward_gradient_shape(case):
    rows = _marked(_shaped(case))
    assert [c for c in _codes(_shaped(case)) if c[1].startswith("GW3")] == [(n, "GW307") for n in rows]


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_custom_backward_gradient_shape_under_torch(case):
    res = _run(_unmark(_shaped(case)), "print('OK', tuple(bias.grad.shape))\n")
    if SHAPES[case][1]:
        assert res.returncode != 0 and "returned an invalid gradient" in res.stderr, res.stderr[-2000:]
    else:
        assert res.returncode == 0 and res.stdout.split()[-2:] == ["OK", "(4,)"], res.stderr[-2000:]
