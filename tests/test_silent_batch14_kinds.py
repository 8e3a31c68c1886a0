"""Static checks of the kinds batch 14 (tests/data/variants/BATCHES.md) missed at first contact, written as
other programs of the same kinds, one hazard and its correct twin per mechanism, each also run under torch
to show the hazard is what torch does: a parameter whose every used value goes through a non-differentiable
op (indices from ``argmax``/``argmin``/``topk``, a comparison's mask) before the loss never gets a gradient
(GW719 at that op: a hard router, a thresholded gate), while a differentiable relaxation (a softmax weighting,
``F.gumbel_softmax(..., hard=True)``, a straight-through mask), an index used only for a metric, or a second,
differentiable path to the same parameters (an auxiliary loss) trains them; ``ModuleDict.update({...})`` after
the optimizer adds modules no optimizer holds (GW719 at the update), before it they are held; a custom
``autograd.Function`` whose backward returns ``None`` at the position of an input that requires grad (a
learnable parameter passed to ``apply``) gives it no gradient (GW719 at that ``return``), while returning its
gradient, or ``None`` for an input that does not require grad (a mask), is clean; losses copied into a new leaf
by ``torch.tensor(losses, requires_grad=True)`` and then reduced leave every parameter they came from without a
gradient (GW719 at the re-wrap), while ``torch.stack``/``sum`` keep the graphs; a ``ModuleDict``'s ``items()``/
``keys()``/``values()`` are its known children, so ``{k: v.detach() for k, v in out.items()}`` over the dict a forward
built from them cuts each value the loss then reads by key (GW722 at the comprehension, batch 13's H140), while
detached copies kept under another name stay clean; a loop-carried recurrent state detached at every iteration of
the loop that builds it (``h = cell(x[:, t], h.detach())``), with the loss after the loop, backpropagates through the
last step only (GW733 at the statement, batch 13's H147; the runtime's code for the same hazard), while truncated
BPTT (detached per chunk, backward per chunk), a backward at every step, or every step's state in the loss, is clean;
a ``LambdaLR`` whose ``lr_lambda`` (a lambda or a function of the file) is 0 at the count every ``optimizer.step()``
sees multiplies every update by zero (GW741 at the scheduler, batch 14's H156), while a factor that is 0 at the first
step only, a floor-division warm-up shorter than the run, or a decay, moves the weights.
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""

import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


def _check(src: str, code: str) -> None:
    rows = _marked(src)
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == [(n, code) for n in rows]


# --- a parameter reached only through indices or a mask ----------------------------------------------
GATED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Gated(nn.Module):
    def __init__(self, d=6, n=3):
        super().__init__()
        self.scorer = nn.Linear(d, n)
        self.values = nn.Linear(d, n)
    def forward(self, x):
        scores = self.scorer(x)
GATE
        return (gate * self.values(x)).sum(-1)
model = Gated()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(10, 6), torch.randn(10)
for step in range(2):
    opt.zero_grad()
    out = model(x)
LOSS
    opt.step()
"""
PLAIN_LOSS = "    F.mse_loss(out, y).backward()\n"
GATES = {
    "one_hot of argmax": ("        gate = F.one_hot(scores.argmax(-1), 3).float()  # <-\n", PLAIN_LOSS, True),
    "one_hot of torch.argmin": ("        gate = F.one_hot(torch.argmin(scores, dim=-1), 3).float()  # <-\n",
                                PLAIN_LOSS, True),
    "scatter of topk indices": ("        idx = scores.topk(1, dim=-1).indices  # <-\n"
                                "        gate = torch.zeros_like(scores).scatter(-1, idx, 1.0)\n", PLAIN_LOSS, True),
    "comparison mask": ("        gate = (scores > 0).float()  # <-\n", PLAIN_LOSS, True),
    "softmax weighting": ("        gate = scores.softmax(-1)\n", PLAIN_LOSS, False),
    "gumbel softmax hard": ("        gate = F.gumbel_softmax(scores, tau=1.0, hard=True)\n", PLAIN_LOSS, False),
    "straight-through mask": ("        soft = torch.sigmoid(scores)\n"
                              "        gate = soft + ((soft > 0.5).float() - soft).detach()\n", PLAIN_LOSS, False),
    "argmax gate with an auxiliary loss on the scores": (
        "        gate = F.one_hot(scores.argmax(-1), 3).float()\n        self.aux = scores.logsumexp(-1).pow(2).mean()\n",
        "    (F.mse_loss(out, y) + 0.01 * model.aux).backward()\n", False),
}


def _gated(case: str) -> str:
    gate, loss, hazard = GATES[case]
    src = GATED.replace("GATE\n", gate).replace("LOSS\n", loss)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(GATES))
def test_parameter_reached_only_through_indices_or_a_mask(case):
    _check(_gated(case), "GW719")


@pytest.mark.parametrize("case", sorted(GATES))
def test_parameter_reached_only_through_indices_or_a_mask_under_torch(case):
    res = _run(_unmark(_gated(case)), "print('NONE' if model.scorer.weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if GATES[case][2] else "GRAD")


def test_index_used_only_for_a_metric_stays_clean():
    src = _unmark(GATED.replace("GATE\n", "        gate = scores.softmax(-1)\n        self.pred = scores.argmax(-1)\n")
                  .replace("LOSS\n", PLAIN_LOSS + "    acc = (model.pred == y.long()).float().mean()\n"))
    assert [c for c in _codes(src) if c[1].startswith("GW7")] == []


# --- ModuleDict.update after the optimizer ------------------------------------------------------------
UPDATE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 1)})
    def forward(self, x, k):
        return self.heads[k](torch.relu(self.trunk(x)))
model = Heads()
ORDER
x, y = torch.randn(6, 4), torch.randn(6, 1)
before = model.heads["b"].weight.detach().clone()
for step in range(2):
    opt.zero_grad()
    (F.mse_loss(model(x, "a"), y) + F.mse_loss(model(x, "b"), y)).backward()
    opt.step()
"""
ORDERS = {
    "update after the optimizer": ("opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                   "model.heads.update({'b': nn.Linear(8, 1)})  # <-\n", True),
    "update before the optimizer": ("model.heads.update({'b': nn.Linear(8, 1)})\n"
                                    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n", False),
    "update then add_param_group": ("opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                    "model.heads.update({'b': nn.Linear(8, 1)})\n"
                                    "opt.add_param_group({'params': model.heads['b'].parameters()})\n", False),
}


def _update(case: str) -> str:
    order, hazard = ORDERS[case]
    src = UPDATE.replace("ORDER\n", order)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(ORDERS))
def test_moduledict_update_after_the_optimizer(case):
    _check(_update(case), "GW719")


@pytest.mark.parametrize("case", sorted(ORDERS))
def test_moduledict_update_after_the_optimizer_under_torch(case):
    res = _run(_unmark(_update(case)), "print('SAME' if torch.equal(before, model.heads['b'].weight) else 'MOVED')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SAME" if ORDERS[case][1] else "MOVED")


# --- a custom Function's backward returns None for an input that requires grad ------------------------
FUNCTION = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, mask):
        t = torch.tanh(x)
        ctx.save_for_backward(t, scale, mask)
        return scale * t * mask
    @staticmethod
    def backward(ctx, g):
        t, scale, mask = ctx.saved_tensors
RETURN
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)
        self.scale = nn.Parameter(torch.ones(()))
    def forward(self, x):
        return ScaledTanh.apply(self.fc(x), self.scale, torch.ones(4))
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 5), torch.randn(8, 4)
for step in range(2):
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()
"""
RETURNS = {
    "None for the learnable scale": ("        return g * scale * mask * (1 - t * t), None, None  # <-\n", True),
    "the scale's gradient, None for the mask": (
        "        return g * scale * mask * (1 - t * t), (g * t * mask).sum().reshape(scale.shape), None\n", False),
}


def _function(case: str) -> str:
    ret, hazard = RETURNS[case]
    src = FUNCTION.replace("RETURN\n", ret)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(RETURNS))
def test_function_backward_returns_none_for_a_parameter(case):
    _check(_function(case), "GW719")


@pytest.mark.parametrize("case", sorted(RETURNS))
def test_function_backward_returns_none_for_a_parameter_under_torch(case):
    res = _run(_unmark(_function(case)), "print('NONE' if model.scale.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if RETURNS[case][1] else "GRAD")


# --- losses re-wrapped by torch.tensor(..., requires_grad=True) ---------------------------------------
REWRAP = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
towers = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])
opt = torch.optim.SGD(towers.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(2):
    opt.zero_grad()
COMBINE
    total.backward()
    opt.step()
"""
COMBINES = {
    "a comprehension's losses, mean": ("    losses = [F.mse_loss(t(x), y) for t in towers]\n"
                                       "    total = torch.tensor(losses, requires_grad=True).mean()  # <-\n", True),
    "two named losses, weighted sum": ("    la, lb = F.mse_loss(towers[0](x), y), F.l1_loss(towers[1](x), y)\n"
                                       "    w = torch.tensor([la, lb], requires_grad=True)  # <-\n"
                                       "    total = (w * torch.tensor([1.0, 0.5])).sum()\n", True),
    "stacked": ("    losses = [F.mse_loss(t(x), y) for t in towers]\n    total = torch.stack(losses).mean()\n", False),
    "summed": ("    total = sum(F.mse_loss(t(x), y) for t in towers)\n", False),
}


def _rewrap(case: str) -> str:
    combine, hazard = COMBINES[case]
    src = REWRAP.replace("COMBINE\n", combine)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(COMBINES))
def test_losses_rewrapped_by_torch_tensor(case):
    _check(_rewrap(case), "GW719")


@pytest.mark.parametrize("case", sorted(COMBINES))
def test_losses_rewrapped_by_torch_tensor_under_torch(case):
    res = _run(_unmark(_rewrap(case)), "print('NONE' if towers[0].weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if COMBINES[case][1] else "GRAD")


# --- a dict comprehension over a ModuleDict's outputs whose values are detached ------------------------
DICTCOMP = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Towers(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 8)
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 1)})
    def forward(self, x):
        h = torch.relu(self.body(x))
        return {k: head(h) for k, head in self.heads.items()}
model = Towers()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, ya, yb = torch.randn(6, 5), torch.randint(0, 2, (6,)), torch.randn(6, 1)
for step in range(2):
    out = model(x)
DETACH
    loss = F.cross_entropy(out["a"], ya) + F.mse_loss(out["b"], yb) + 1e-4 * model.body.weight.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
DICTCOMPS = {
    "values detached, name rebound": ("    out = {k: v.detach() for k, v in out.items()}  # <-\n", True),
    "detached copies kept for logging": ("    logged = {k: v.detach() for k, v in out.items()}\n", False),
    "values kept": ("    out = {k: v.float() for k, v in out.items()}\n", False),
}


def _dictcomp(case: str) -> str:
    detach, hazard = DICTCOMPS[case]
    src = DICTCOMP.replace("DETACH\n", detach)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(DICTCOMPS))
def test_dict_comprehension_detaches_the_outputs_the_loss_reads(case):
    src = _dictcomp(case)
    want = [(n, "GW722") for n in _marked(src)]
    assert [c for c in _codes(src) if c[1] == "GW722"] == want
    if not DICTCOMPS[case][1]:
        assert [c for c in _codes(src) if c[1].startswith("GW7")] == []


@pytest.mark.parametrize("case", sorted(DICTCOMPS))
def test_dict_comprehension_detaches_the_outputs_the_loss_reads_under_torch(case):
    res = _run(_unmark(_dictcomp(case)), "print('NONE' if model.heads['a'].weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if DICTCOMPS[case][1] else "GRAD")


# --- a loop-carried state detached at every step of the loop that builds it (GW733) --------------------
UNROLL = """
import torch
import torch.nn as nn
torch.manual_seed(0)
cell, head = CELL, nn.Linear(5, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
x = torch.randn(3, 4, 2, requires_grad=True)
LOOP
"""
RNN = "nn.RNNCell(2, 5)"
LSTM = "nn.LSTMCell(2, 5)"
UNROLLS = {
    "RNNCell, state detached in the call": (RNN, """h = torch.zeros(3, 5)
for t in range(4):
    h = cell(x[:, t], h.detach())  # <-
loss = head(h).pow(2).mean()
loss.backward()
opt.step()
""", True),
    "LSTMCell, both states detached": (LSTM, """h, c = torch.zeros(3, 5), torch.zeros(3, 5)
for t in range(4):
    h, c = cell(x[:, t], (h.detach(), c.detach()))  # <-
loss = head(h).pow(2).mean()
loss.backward()
opt.step()
""", True),
    "no detach": (RNN, """h = torch.zeros(3, 5)
for t in range(4):
    h = cell(x[:, t], h)
loss = head(h).pow(2).mean()
loss.backward()
opt.step()
""", False),
    "truncated BPTT: detached per chunk, backward per chunk": (RNN, """h = torch.zeros(3, 5)
for chunk in range(2):
    h = h.detach()
    for t in range(2):
        h = cell(x[:, 2 * chunk + t], h)
    opt.zero_grad()
    head(h).pow(2).mean().backward()
    opt.step()
""", False),
    "a backward at every step": (RNN, """h = torch.zeros(3, 5)
for t in range(4):
    h = cell(x[:, t], h.detach())
    opt.zero_grad()
    head(h).pow(2).mean().backward()
    opt.step()
""", False),
    "every step's state in the loss": (RNN, """h = torch.zeros(3, 5)
outs = []
for t in range(4):
    h = cell(x[:, t], h.detach())
    outs.append(head(h))
loss = torch.stack(outs).pow(2).mean()
loss.backward()
opt.step()
""", False),
}


def _unroll(case: str) -> str:
    cell, loop, hazard = UNROLLS[case]
    src = UNROLL.replace("CELL", cell).replace("LOOP\n", loop)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(UNROLLS))
def test_state_detached_every_step(case):
    _check(_unroll(case), "GW733")


@pytest.mark.parametrize("case", ["RNNCell, state detached in the call", "LSTMCell, both states detached", "no detach"])
def test_state_detached_every_step_under_torch(case):
    res = _run(_unmark(_unroll(case)), "print('ZERO' if x.grad[:, 0].abs().sum() == 0 else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("ZERO" if UNROLLS[case][2] else "GRAD")


# --- a LambdaLR whose factor is zero at every step taken (GW741) --------------------------------------
SCHEDULE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
before = model.weight.detach().clone()
LAMBDA
for step in range(STEPS):
    opt.zero_grad()
    model(torch.randn(6, 3)).pow(2).mean().backward()
    opt.step()
    sched.step()
"""
SCHEDULES = {
    "floor division, run shorter than the warm-up": (
        "warmup = 10\nsched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s // warmup))  # <-\n", 4, True),
    "a function of the file, keyword argument": (
        "def factor(epoch):\n    return 0 if epoch < 5 else 1.0\n"
        "sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=factor)  # <-\n", 3, True),
    "true division from zero": (
        "warmup = 10\nsched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warmup))\n", 4, False),
    "floor division, run longer than the warm-up": (
        "warmup = 2\nsched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s // warmup))\n", 4, False),
    "exponential decay": ("sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.9 ** e)\n", 4, False),
}


def _schedule(case: str) -> str:
    lam, steps, hazard = SCHEDULES[case]
    src = SCHEDULE.replace("LAMBDA\n", lam).replace("STEPS", str(steps))
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_learning_rate_zero_at_every_step(case):
    _check(_schedule(case), "GW741")


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_learning_rate_zero_at_every_step_under_torch(case):
    res = _run(_unmark(_schedule(case)), "print('SAME' if torch.equal(before, model.weight) else 'MOVED')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SAME" if SCHEDULES[case][2] else "MOVED")
