"""Static checks of the silent and gradient-flow kinds batch 8 (tests/data/variants/BATCHES.md)
missed at first contact, written as other programs of the same kinds: a second name bound to the
dict a forward hook fills, against the copies that keep the first call's values (GW721); a hook
that keeps a detached copy through ``dict.__setitem__`` or ``setattr`` (GW722); overlapping
``copy_`` between two windows of one tensor (GW713). Each case marks the line it must be reported
at (``# <-``) or must stay clean; what torch does on each kind is measured by the rules' examples
(tests/test_rule_examples_run.py)."""

import pytest

from marked_cases import findings as _findings, marked as _marked


HOOK_DICT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
gen = nn.Linear(4, 4)
disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
store = {}
def keep(module, inputs, output):
    store["h"] = output
disc[0].register_forward_hook(keep)
x, real = torch.randn(3, 4), torch.randn(3, 4)
disc(gen(x))
fake = KEEP
disc(real)
loss = F.l1_loss(fake["h"], store["h"].detach())
loss.backward()
"""

KEEPS = {
    # a second name for the dict: the real call overwrites what `fake` was meant to keep
    "store  # <-": True,
    "dict(store)": False,
    "{**store}": False,
    "store.copy()": False,
    "copy.copy(store)": False,
    "{k: v for k, v in store.items()}": False,
}


@pytest.mark.parametrize("keep", sorted(KEEPS))
def test_hook_dict_aliased_or_copied_between_calls(keep):
    src = HOOK_DICT.replace("KEEP", keep)
    if "copy.copy" in keep:
        src = "import copy\n" + src
    found = [(row, code) for row, code, _ in _findings(src)]
    if KEEPS[keep]:
        assert found == [(n, "GW721") for n in _marked(src)]
    else:
        assert found == []


def test_hook_dict_bound_before_the_first_call_is_reported_at_the_store():
    # `fake = store` before anything was stored is not a copy meant to keep the first call
    src = HOOK_DICT.replace("    store[\"h\"] = output", "    store[\"h\"] = output  # <-") \
        .replace("fake = KEEP\n", "").replace("store = {}\n", "store = {}\nfake = store\n")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW721") for n in _marked(src)]


HOOK_COPY = """
import torch
import torch.nn as nn
import torch.nn.functional as F
def net(width):
    return nn.Sequential(nn.Sequential(nn.Linear(4, width), nn.ReLU()), nn.Linear(width, 2))
teacher, student = net(8), net(3)
t_maps, s_maps = {}, {}
for name in ("0",):
    teacher.get_submodule(name).register_forward_hook(lambda m, i, o, name=name: t_maps.__setitem__(name, o.detach()))
    student.get_submodule(name).register_forward_hook(lambda m, i, o, name=name: s_maps.__setitem__(name, KEPT))
x = torch.randn(5, 4)
with torch.no_grad():
    teacher(x)
logits = student(x)
term = sum((s_maps[k].mean(1) - t_maps[k].mean(1)).pow(2).mean() for k in s_maps)
loss = logits.sum() + term
loss.backward()
"""


@pytest.mark.parametrize("kept", ["o.data", "o.detach()", "o"])
def test_lambda_hook_storing_a_cut_copy_beside_a_no_grad_teacher(kept):
    # `dict.__setitem__` in a lambda is the hook's store; the term mixes the student's copy with the
    # teacher's no_grad features, and the student's copy is the cut that loses the gradient
    src = HOOK_COPY.replace("KEPT", kept)
    found = [(row, code) for row, code, _ in _findings(src)]
    assert found == ([] if kept == "o" else [(11, "GW722")])


NARROW = """
import torch
x = torch.arange(24.).reshape(2, 3, 4)
T = x.shape[-1]
x.narrow(-1, 1, T - 1).copy_(x.narrow(-1, 0, T - 1))  # <-
b, c, t = x.shape
x.narrow(2, 2, t - 2).copy_(x.narrow(2, 0, t - 2))
x.narrow(1, 1, x.size(1) - 1).copy_(x.narrow(1, 0, x.size(1) - 1))  # <-
x.narrow(-1, 0, T - 1).copy_(x.narrow(-1, 1, T - 1))
y = x.reshape(6, 4)
n = y.shape[0]
"""


def test_narrow_windows_sized_from_the_shape():
    # measured (torch 2.13): lines 5 and 8 smear the first slice forward; line 7's windows do not
    # share an element (t - 2 == 2); line 9 copies towards the front and comes out right
    src = NARROW
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW713") for n in _marked(src)]


def test_narrow_shift_of_a_clone_in_a_helper():
    # the size read from the argument, the window taken on its clone (same shape): still the shift
    src = """
import torch
def shifted(spec):
    T = spec.shape[-1]
    prev = spec.clone()
    prev.narrow(-1, 1, T - 1).copy_(prev.narrow(-1, 0, T - 1))  # <-
    return prev
shifted(torch.randn(4, 8, 20, requires_grad=True)).sum().backward()
"""
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW713") for n in _marked(src)]


def test_new_leaf_made_in_a_helper_is_reported_where_it_is_made():
    # the `.item()` and the re-wrap sit in a helper; the fix goes there, not at the caller's line
    src = """
import torch
from torch import nn
def score_loss(out, target):
    s = (out - target).abs().mean().item()
    return torch.tensor(s, requires_grad=True)  # <-
net = nn.Linear(3, 1)
loss = score_loss(net(torch.randn(4, 3)), torch.randn(4, 1))
loss.backward()
"""
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW701") for n in _marked(src)]


GETATTR_FREEZE = """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.trunk(x))
def freeze_trunk(model):
    part = getattr(model, NAME, model)
    part.requires_grad_(False)  # MARK
    return model
model = freeze_trunk(Net())
model(torch.randn(3, 4)).sum().backward()
"""


@pytest.mark.parametrize("name,raises", [('"backbone"', True), ('"trunk"', False)])
def test_getattr_default_of_a_missing_submodule_freezes_everything(name, raises):
    # measured: with "backbone" the default (the whole model) is frozen and the backward raises
    # "element 0 of tensors does not require grad"; with "trunk" the head still trains
    src = GETATTR_FREEZE.replace("NAME", name).replace("# MARK", "# <-" if raises else "")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW701") for n in _marked(src)]


def test_getattr_default_stays_unknown_when_the_class_sets_attributes_by_name():
    src = GETATTR_FREEZE.replace("NAME", '"backbone"').replace(
        "        self.head = nn.Linear(4, 2)\n", "        self.head = nn.Linear(4, 2)\n        setattr(self, 'back' + 'bone', self.trunk)\n")
    assert [code for _, code, _ in _findings(src)] == []


LATE_HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 6)
        self.head = None
    def forward(self, x):
        h = self.body(x)
        if self.head is None:
            self.head = nn.Linear(h.shape[1], 3)  # LAZY
        return self.head(h)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ATTACH
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
for _ in range(2):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

LATE_CASES = {
    # the head is made by the first forward, after the optimizer: never stepped
    "lazy": ("", "LAZY"),
    # attached by the script after the optimizer: never stepped either
    "script": ("model.head = nn.Linear(6, 3)  # <-", None),
    # handed to the optimizer: trained
    "param_group": ("model.head = nn.Linear(6, 3)\nopt.add_param_group({'params': model.head.parameters()})", None),
    # built by one forward before the optimizer: trained (the optimizer is built after it)
    "warmup": ("", None),
}


@pytest.mark.parametrize("case", sorted(LATE_CASES))
def test_module_attached_after_the_optimizer(case):
    attach, mark = LATE_CASES[case]
    src = LATE_HEAD.replace("ATTACH", attach)
    if mark:
        src = src.replace("# " + mark, "# <-")
    if case == "warmup":
        src = src.replace("opt = torch.optim", "model(torch.randn(1, 4))\nopt = torch.optim")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW719") for n in _marked(src)]


VTP = """
import torch
import torch.nn as nn
class Hyper(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target
        self.code = nn.Parameter(torch.randn(3))
        self.make = nn.Linear(3, 4 * 2 + 2)
    def forward(self, x):
        LOAD
        return self.target(x)
hyper = Hyper(nn.Linear(4, 2))
opt = torch.optim.SGD(hyper.parameters(), lr=0.1)
for _ in range(2):
    loss = hyper(torch.randn(6, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_vector_to_parameters_cuts_the_generator_off():
    # measured: `make` and `code` get `.grad` None, the target's parameters train
    src = VTP.replace("LOAD", "nn.utils.vector_to_parameters(self.make(self.code), self.target.parameters())  # <-")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW719") for n in _marked(src)]


def test_vector_to_parameters_under_no_grad_is_a_plain_load():
    # evolution strategies: candidates loaded without a graph, nothing meant to flow back
    src = VTP.replace("LOAD", "with torch.no_grad():\n            nn.utils.vector_to_parameters(torch.randn(10), self.target.parameters())") \
        .replace("hyper.parameters()", "hyper.target.parameters()")
    assert _findings(src) == []


SAVE = """
import torch
import torch.nn as nn
class Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, t):
        ctx.save_for_backward(x, t)  # MARK
        return x * (x > 0)
    @staticmethod
    def backward(ctx, g):
        x = ctx.saved_tensors[0]
        return g * (x > 0), None
class Net(nn.Module):
    def __init__(self, t=ARG):
        super().__init__()
        self.t = t
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        return Gate.apply(self.lin(x), self.t)
Net()(torch.randn(2, 3)).sum().backward()
"""


@pytest.mark.parametrize("arg,raises", [("0.5", True), ("3", True), ("None", False), ("torch.tensor(0.5)", False)])
def test_non_tensor_given_to_save_for_backward(arg, raises):
    # measured (torch 2.13): a float or an int raises TypeError at `apply`; None and tensors are saved
    src = SAVE.replace("ARG", arg).replace("# MARK", "# <-" if raises else "")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW738") for n in _marked(src)]


ZERO_SQRT = """
import torch
import torch.nn as nn
import some_lib
class Rot(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(2, 3))
    def forward(self, x):
        INIT
        n2 = (self.w * self.w).sum(dim=-1, keepdim=True)
        n = torch.sqrt(n2)  # MARK
        scale = torch.where(n2 < 1e-8, torch.ones_like(n), torch.sin(n) / n)
        return x * scale
Rot()(torch.randn(2, 3)).sum().backward()
"""


@pytest.mark.parametrize("init,nan", [("pass", True), ("nn.init.normal_(self.w)", False),
                                      ("some_lib.init(self.w)", False), ("self.w.data = torch.randn(2, 3)", False)])
def test_square_root_of_an_exact_zero(init, nan):
    # measured (torch 2.13): with the zero-initialised weight the gradient of `w` is NaN (sqrt's derivative
    # at 0 is infinite and the `where` multiplies it by 0); initialised otherwise it is finite
    src = ZERO_SQRT.replace("INIT", init).replace("# MARK", "# <-" if nan else "")
    assert [(row, code) for row, code, _ in _findings(src)] == [(n, "GW720") for n in _marked(src)]
