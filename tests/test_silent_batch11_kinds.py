"""Static checks of the kinds batch 11 (tests/data/variants/BATCHES.md) missed or flagged wrongly at first
contact, written as other programs of the same kinds, one hazard and its correct twin per mechanism, each
also run under torch to show the hazard is what torch does: a forward hook's slot overwritten by a second
call of the module is reported only when code reads the slot after the overwrite (GW721; a second call
whose value nothing reads loses nothing); a mode switch written as the attribute store ``m.training =
False`` (over ``model.modules()``, or on the model) is the switch ``.train(False)`` makes (GW724 at the
store); ``load_state_dict(..., assign=True)`` after the optimizer was built puts new Parameter objects in
the module, and the optimizer keeps the old ones (GW719 at the call).
A line ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""

import pytest

from marked_cases import (marked as _marked, codes as _codes, run_under_torch as _run, unmark as _unmark)


def _check(src: str, code: str) -> None:
    rows = _marked(src)
    assert _codes(src) == [(n, code) for n in rows]


# --- a hook's slot overwritten by a second call: reported only when the slot is read after it -------
HOOK = """
import torch
import torch.nn as nn
torch.manual_seed(0)
STORE
enc, head = nn.Sequential(nn.Linear(6, 12), nn.ReLU()), nn.Linear(12, 1)
enc.register_forward_hook(keep)
a, b = torch.randn(8, 6), torch.randn(8, 6)
BODY
"""

ATTR_STORE = "def keep(module, inputs, output):\n    module.kept = output  # <-\n"
DICT_STORE = "acts = {}\ndef keep(module, inputs, output):\n    acts['h'] = output  # <-\n"
ATTR_READ, DICT_READ = "enc.kept", "acts['h']"

# two calls, then the read: the penalty sees the second call only
TWICE_THEN_READ = """
out = head(enc(a) - enc(b))
seen = READ
loss = out.pow(2).mean() + seen.abs().mean()
loss.backward()
"""
# one call, the read, the backward; the module runs again afterwards for a check nobody reads the slot of
READ_THEN_CALL_AGAIN = """
first = enc(a)
seen = READ
loss = head(first).pow(2).mean() + seen.abs().mean()
loss.backward()
check = head(enc(a)).pow(2).mean() + head(enc(b)).pow(2).mean()
"""

def _hook(store: str, read: str, body: str, hazard: bool) -> str:
    src = HOOK.replace("STORE", store).replace("BODY", body.replace("READ", read))
    return src if hazard else _unmark(src)


HOOK_CASES = {
    "attribute, two calls then read": (ATTR_STORE, ATTR_READ, TWICE_THEN_READ, True),
    "dict, two calls then read": (DICT_STORE, DICT_READ, TWICE_THEN_READ, True),
    "attribute, read before the next call": (ATTR_STORE, ATTR_READ, READ_THEN_CALL_AGAIN, False),
    "dict, read before the next call": (DICT_STORE, DICT_READ, READ_THEN_CALL_AGAIN, False),
}


@pytest.mark.parametrize("case", sorted(HOOK_CASES))
def test_hook_slot_overwrite_needs_a_read_after_it(case):
    _check(_hook(*HOOK_CASES[case]), "GW721")


@pytest.mark.parametrize("case", sorted(HOOK_CASES))
def test_hook_slot_overwrite_under_torch(case):
    hazard = HOOK_CASES[case][3]
    # what the read saw: the hazard's slot held the second call's output (the penalty never sees enc(a));
    # the twin's read is the output of the only call made before it
    probe = "print('SECOND' if torch.equal(seen, enc(b)) and not torch.equal(seen, enc(a)) else "
    probe += "'FIRST' if seen is first else 'OTHER')\n" if not hazard else "'OTHER')\n"
    res = _run(_unmark(_hook(*HOOK_CASES[case])), probe)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SECOND" if hazard else "FIRST")


# --- `m.training = False`: the switch `.train(False)` makes -----------------------------------------
MODES = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 12), nn.ReLU())
        self.main, self.aux = nn.Linear(12, 3), nn.Linear(12, 3)

    def forward(self, x):
        h = self.body(x)
        if self.training:
            return self.main(h), self.aux(h)
        return self.main(h)


def warm_up(model, x):
SWITCH
    with torch.no_grad():
        model(x)
RESTORE

model = TwoHeads()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
warm_up(model, x)
before = model.aux.weight.detach().clone()
for step in range(3):
    out = model(x)
    loss = F.cross_entropy(out[0], y) + 0.3 * F.cross_entropy(out[1], y) if isinstance(out, tuple) else F.cross_entropy(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

SWITCHES = {
    "loop over modules": "    for m in model.modules():\n        m.training = False  # <-",
    "the model itself": "    model.training = False  # <-",
}
MODE_PROBE = """
print("FROZEN" if torch.equal(before, model.aux.weight) else "TRAINED")
"""


@pytest.mark.parametrize("switch", sorted(SWITCHES))
@pytest.mark.parametrize("restored", [False, True])
def test_training_attribute_store_is_a_mode_switch(switch, restored):
    src = MODES.replace("SWITCH", SWITCHES[switch]).replace("RESTORE", "    model.train()" if restored else "")
    if restored:
        assert _codes(_unmark(src)) == []
    else:
        _check(src, "GW724")


@pytest.mark.parametrize("switch", sorted(SWITCHES))
@pytest.mark.parametrize("restored", [False, True])
def test_training_attribute_store_under_torch(switch, restored):
    src = _unmark(MODES.replace("SWITCH", SWITCHES[switch]).replace("RESTORE", "    model.train()" if restored else ""))
    res = _run(src, MODE_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("TRAINED" if restored else "FROZEN")


# --- load_state_dict(..., assign=True) after the optimizer -------------------------------------------
ASSIGN = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 2))
state = {k: v.clone() for k, v in nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 2)).state_dict().items()}
ORDER
start = state["2.weight"].clone()
x, y = torch.randn(12, 5), torch.randint(0, 2, (12,))
for _ in range(2):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
OPT = "opt = torch.optim.Adam(net.parameters(), lr=0.01)"
ORDERS = {
    "assign after the optimizer": (OPT + "\nnet.load_state_dict(state, assign=True)  # <-", True),
    "assign before the optimizer": ("net.load_state_dict(state, assign=True)\n" + OPT, False),
    "copy after the optimizer": (OPT + "\nnet.load_state_dict(state)", False),
    "strict=False, assign after the optimizer": (OPT + "\nnet.load_state_dict(state, False, True)  # <-", True),
}
ASSIGN_PROBE = """
print("UNCHANGED" if torch.equal(net[2].weight, start) else "TRAINED")
"""


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_load_state_dict_assign_after_the_optimizer(order):
    src = ASSIGN.replace("ORDER", ORDERS[order][0])
    if ORDERS[order][1]:
        _check(src, "GW719")
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_load_state_dict_assign_under_torch(order):
    res = _run(_unmark(ASSIGN.replace("ORDER", ORDERS[order][0])), ASSIGN_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("UNCHANGED" if ORDERS[order][1] else "TRAINED")


# --- the same slot read by the module's own backward hook: read in every backward --------------------
BACKWARD_HOOK = """
import torch
import torch.nn as nn
torch.manual_seed(0)
act = nn.ReLU()
seen = []
def keep(module, inputs, output):
    module.kept = inputs[0].detach()  # <-
def guide(module, grad_input, grad_output):
    seen.append(module.kept)
    return (grad_output[0].clamp(min=0) * (module.kept > 0).float(),)
act.register_forward_hook(keep)
act.register_full_backward_hook(guide)
l1, l2 = nn.Linear(4, 4), nn.Linear(4, 4)
x = torch.randn(3, 4)
h1 = l1(x)
h2 = l2(act(h1))
out = act(h2).sum()
out.backward()
"""


def test_hook_slot_read_by_a_backward_hook_is_read_after_the_overwrite():
    _check(BACKWARD_HOOK, "GW721")
    # under torch the backward of the first call (the second hook run) sees the second call's input
    res = _run(_unmark(BACKWARD_HOOK), "print('SECOND' if torch.equal(seen[1], h2) and not torch.equal(seen[1], h1) else 'OWN')\n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == "SECOND"
