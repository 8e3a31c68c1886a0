"""Static checks of the kinds batch 12 (tests/data/variants/BATCHES.md) missed at first contact, written as
other programs of the same kinds, one hazard and its correct twin per mechanism, each also run under torch
to show the hazard is what torch does: ``torch.set_grad_enabled(False)`` called as a statement inside a
helper leaves autograd off for the caller after the helper returns (the next backward raises: GW701 at the
statement), while a helper that restores the mode it saved, or scopes the switch with ``with``/a decorator,
leaves it on; ``acos``/``asin`` of ``E`` in the branch a ``torch.where`` guard ``E < 1`` (``E > -1``,
``E.abs() < 1``) rejects is at its singular point there, so the rejected elements' gradient is 0 x inf = NaN
(GW720 at the ``where``), while a clamp inside the op keeps it finite; ``.sample()`` of a reparameterisable
distribution (``Normal``, ``LogNormal``, also inside ``Independent``) built from values that require grad is
a constant to autograd, so a loss that uses it through a decoder gets no gradient to the distribution's
parameters through it (GW722 at the ``.sample()``), while ``.rsample()``, a sample scored by ``log_prob``
(REINFORCE) and a discrete sample used as an index stay clean; an item stored by subscript into a
``ParameterDict``/``ModuleDict`` in ``forward`` after the optimizer was built is a parameter no optimizer
holds (GW719 where it is made), while one stored in ``__init__`` is held; ``detach_()`` on the tensor a
training loop's loss then uses cuts the module it came from (GW719 at the ``detach_()``), while ``detach_()``
of a clone, or a ``detach()`` copy, leaves the loss's path alone; ``torch.func.functional_call(model, tensors,
args)`` runs the module on the given tensors, so a loss made from detached copies of its parameters reaches
no parameter of the meta-optimizer (GW719 at the copies), while the live parameters, or a differentiable
step from them, train it.
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


# --- a distribution's sample() where rsample() was needed ------------------------------------------
SAMPLE = """
import torch
import torch.nn as nn
from torch.distributions import Categorical, Independent, LogNormal, Normal
torch.manual_seed(0)
enc, dec = nn.Linear(6, 4), nn.Linear(2, 6)
x = torch.randn(8, 6)
mu, log_std = enc(x).chunk(2, dim=-1)
BODY
loss.backward()
"""

SAMPLES = {
    "Normal decoded": ("z = Normal(mu, log_std.exp()).sample()  # <-\n"
                       "term = (dec(z) - x).pow(2).mean()\n"
                       "loss = term + 0.1 * (mu.pow(2) + log_std.exp().pow(2) - 2 * log_std).mean()\n", True),
    "Independent(Normal) decoded": ("q = Independent(Normal(mu, log_std.exp()), 1)\nz = q.sample()  # <-\n"
                                    "term = (dec(z) - x).pow(2).mean()\nloss = term + mu.pow(2).mean()\n", True),
    "learned LogNormal scale": ("gain = LogNormal(mu, log_std.exp()).sample()  # <-\n"
                                "term = (dec(gain) - x).pow(2).mean()\nloss = term + log_std.pow(2).mean()\n", True),
    "Normal rsample": ("z = Normal(mu, log_std.exp()).rsample()\nterm = (dec(z) - x).pow(2).mean()\n"
                       "loss = term + 0.1 * mu.pow(2).mean()\n", False),
    "REINFORCE: scored by log_prob": ("pi = Normal(mu, log_std.exp())\na = pi.sample()\n"
                                      "term = -(pi.log_prob(a).sum(-1) * (dec(a) - x).pow(2).mean(-1).detach()).mean()\n"
                                      "loss = term\n", False),
    "Categorical sample as an index": ("k = Categorical(logits=enc(x)).sample()\n"
                                       "term = dec(mu)[torch.arange(8), k].pow(2).mean()\nloss = term\n", False),
}


def _sample(case: str) -> str:
    body, hazard = SAMPLES[case]
    src = SAMPLE.replace("BODY", body)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(SAMPLES))
def test_sample_where_rsample_was_needed(case):
    _check(_sample(case), "GW722")


@pytest.mark.parametrize("case", sorted(SAMPLES))
def test_sample_where_rsample_was_needed_under_torch(case):
    # does the term built from the sample send any gradient to the encoder? (re-run: backward freed the graph)
    src = _unmark(_sample(case)).replace("loss.backward()\n", "")
    probe = "g = torch.autograd.grad(term, enc.weight, allow_unused=True)[0]\n"
    probe += "print('CUT' if g is None or not g.abs().sum() else 'REACHES')\n"
    res = _run(src, probe)
    assert res.returncode == 0, res.stderr[-2000:]
    hazard = SAMPLES[case][1]
    # the twins' terms reach the encoder: through rsample, through log_prob, through `mu` (the index is not a path)
    assert res.stdout.split()[-1] == ("CUT" if hazard else "REACHES")


# --- items stored into a ModuleDict / ParameterDict after the optimizer was built -------------------
CONTAINER = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 3)
        self.extra = CONTAINER_CTOR
INIT_FILL
    def forward(self, x, key):
FORWARD_FILL
        return READ
model = Tagger()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(torch.randn(4, 5), "news" if step % 2 else "web").pow(2).mean().backward()
    opt.step()
late = model.extra["news"]
"""

PDICT_READ = "self.body(x) + self.extra[key]"
MDICT_READ = "self.extra[key](self.body(x))"
PDICT_NEW = "nn.Parameter(torch.zeros(3))"
MDICT_NEW = "nn.Linear(3, 3)"
CONTAINERS = {
    "ParameterDict filled in forward": ("nn.ParameterDict()", "",
                                        "        if key not in self.extra:\n"
                                        f"            self.extra[key] = {PDICT_NEW}  # <-\n", PDICT_READ, True),
    "ModuleDict filled in forward": ("nn.ModuleDict()", "",
                                     "        if key not in self.extra:\n"
                                     f"            self.extra[key] = {MDICT_NEW}  # <-\n", MDICT_READ, True),
    "ParameterDict filled in __init__": ("nn.ParameterDict()",
                                         "        for k in ('news', 'web'):\n"
                                         f"            self.extra[k] = {PDICT_NEW}\n", "", PDICT_READ, False),
    "ModuleDict filled in __init__": ("nn.ModuleDict()",
                                      "        for k in ('news', 'web'):\n"
                                      f"            self.extra[k] = {MDICT_NEW}\n", "", MDICT_READ, False),
}


def _container(case: str) -> str:
    ctor, init, fwd, read, hazard = CONTAINERS[case]
    src = CONTAINER.replace("CONTAINER_CTOR", ctor).replace("INIT_FILL\n", init).replace("FORWARD_FILL\n", fwd)
    src = src.replace("READ", read)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(CONTAINERS))
def test_container_item_made_after_the_optimizer(case):
    _check(_container(case), "GW719")


@pytest.mark.parametrize("case", sorted(CONTAINERS))
def test_container_item_made_after_the_optimizer_under_torch(case):
    probe = "held = {id(p) for g in opt.param_groups for p in g['params']}\n"
    probe += "print('HELD' if all(id(p) in held for p in late.parameters()) else 'NOT_HELD') if isinstance(late, nn.Module) \\\n"
    probe += "    else print('HELD' if id(late) in held else 'NOT_HELD')\n"
    res = _run(_unmark(_container(case)), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NOT_HELD" if CONTAINERS[case][4] else "HELD")


# --- a list container topped up in forward: the length the analysis knows decides whether it grows ------
# (`while len(self.protos) < n_cls:` appends only when __init__ left the container short; a container made
# full in __init__ grows by nothing, so no parameter is made after the optimizer)
GROWN = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Protos(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 3)
        self.protos = INIT
    def forward(self, x, n_cls):
        while len(self.protos) < n_cls:
            self.protos.append(nn.Parameter(torch.randn(3)))  # <-
        return self.enc(x) @ torch.stack(list(self.protos)).T
net = Protos()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = F.cross_entropy(net(torch.randn(6, 4), 3), torch.randint(0, 3, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
late = list(net.protos)
"""

GROWN_INITS = {
    "empty ParameterList": ("nn.ParameterList()", True),
    "ParameterList from a comprehension": ("nn.ParameterList([nn.Parameter(torch.randn(3)) for _ in range(3)])", False),
    "ParameterList from a literal list": ("nn.ParameterList([nn.Parameter(torch.randn(3)), nn.Parameter(torch.randn(3)), "
                                          "nn.Parameter(torch.randn(3))])", False),
}


def _grown(case: str) -> str:
    init, hazard = GROWN_INITS[case]
    src = GROWN.replace("INIT", init)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(GROWN_INITS))
def test_list_container_topped_up_in_forward(case):
    _check(_grown(case), "GW719")


@pytest.mark.parametrize("case", sorted(GROWN_INITS))
def test_list_container_topped_up_in_forward_under_torch(case):
    probe = "held = {id(p) for g in opt.param_groups for p in g['params']}\n"
    probe += "print('HELD' if all(id(p) in held for p in late) else 'NOT_HELD')\n"
    res = _run(_unmark(_grown(case)), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NOT_HELD" if GROWN_INITS[case][1] else "HELD")


# --- detach_() on the tensor the loss then uses: the tower it came from never trains -----------------
DETACH = """
import torch
import torch.nn as nn
torch.manual_seed(0)
tower, other = nn.Linear(4, 3), nn.Linear(4, 3)
opt = torch.optim.SGD([*tower.parameters(), *other.parameters()], lr=0.1)
index = []
for step in range(3):
    docs = tower(torch.randn(5, 4))
BODY
    loss = (other(torch.randn(5, 4)) @ docs.T).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

DETACHES = {
    "detach_ in place, then used": ("    index.append(docs.detach_())  # <-\n", True),
    "detach_ as a statement": ("    docs.detach_()  # <-\n", True),
    "detach_ of a clone for the index": ("    snap = docs.clone()\n    snap.detach_()\n    index.append(snap)\n", False),
    "detach() copy for the index": ("    index.append(docs.detach())\n", False),
}


def _detach(case: str) -> str:
    body, hazard = DETACHES[case]
    src = DETACH.replace("BODY\n", body)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(DETACHES))
def test_detach_in_place_cuts_the_tower(case):
    _check(_detach(case), "GW719")


@pytest.mark.parametrize("case", sorted(DETACHES))
def test_detach_in_place_cuts_the_tower_under_torch(case):
    res = _run(_unmark(_detach(case)), "print('NONE' if tower.weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if DETACHES[case][1] else "GRAD")


# --- torch.func.functional_call: the module run on the given tensors ------------------------------
FCALL = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for task in range(3):
PARAMS
    meta_opt.zero_grad()
    F.mse_loss(functional_call(model, fast, (torch.randn(5, 3),)), torch.randn(5, 1)).backward()
    meta_opt.step()
"""

FCALLS = {
    "detached copies": ("    fast = {n: p.detach().requires_grad_() for n, p in model.named_parameters()}  # <-\n", True),
    "clone().detach() copies": ("    fast = {n: p.clone().detach().requires_grad_(True) for n, p in model.named_parameters()}  # <-\n",
                                True),
    "the live parameters": ("    fast = dict(model.named_parameters())\n", False),
    "a differentiable step from them": ("    fast = {n: p - 0.1 * p.pow(2) for n, p in model.named_parameters()}\n", False),
}


def _fcall(case: str) -> str:
    body, hazard = FCALLS[case]
    src = FCALL.replace("PARAMS\n", body)
    return src if hazard else _unmark(src)


@pytest.mark.parametrize("case", sorted(FCALLS))
def test_functional_call_runs_on_the_given_tensors(case):
    _check(_fcall(case), "GW719")


@pytest.mark.parametrize("case", sorted(FCALLS))
def test_functional_call_runs_on_the_given_tensors_under_torch(case):
    res = _run(_unmark(_fcall(case)), "print('NONE' if model[0].weight.grad is None else 'GRAD')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if FCALLS[case][1] else "GRAD")
