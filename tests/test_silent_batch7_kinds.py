"""Static checks of the silent and gradient-flow kinds batch 7 (tests/data/variants/BATCHES.md)
missed at first contact, written as other programs of the same kinds: overlapping self-copies along
any later dim (GW713), hook objects storing into one slot (GW721), per-sample losses made in a helper
(GW702), a helper freezing a whole module (GW701). Each case marks the line it must be reported at
(``# <-``) or must stay clean; what torch does on each kind is measured by the rules' examples
(tests/test_rule_examples_run.py)."""

import pytest

from gradwarden.engine.diagnostic import Severity
from marked_cases import findings as _findings, marked as _marked


SHIFTS = {
    "last dim through Ellipsis": """
import torch
taps = torch.zeros(3, 8)
taps[..., 1:] = taps[..., :-1]  # <-
""",
    "third dim spelled out": """
import torch
x = torch.randn(2, 3, 5)
x[:, :, 2:] = x[:, :, :-2]  # <-
""",
    "middle dim after Ellipsis": """
import torch
x = torch.randn(2, 5, 3)
x[..., 1:, :] = x[..., :-1, :]  # <-
""",
    "bounded window": """
import torch
x = torch.randn(4, 6)
x[:, 1:4] = x[:, 0:3]  # <-
""",
    "narrow on a negative dim": """
import torch
x = torch.randn(4, 6)
x.narrow(-1, 1, 5).copy_(x.narrow(-1, 0, 5))  # <-
""",
    "bounds held by names": """
import torch
class History:
    def __init__(self, k):
        self.k = k
        self.h = torch.zeros(5, 8)
    def push(self, v):
        self.h[:, self.k:] = self.h[:, :-self.k]  # <-
        self.h[:, :self.k] = v
hist = History(2)
for t in range(3):
    hist.push(torch.randn(5, 2))
""",
    "copy_ between slices": """
import torch
x = torch.randn(4, 6)
x[:, 1:].copy_(x[:, :-1])  # <-
""",
    "attribute buffer in a class": """
import torch
class Line:
    def __init__(self, c, n):
        self.buf = torch.zeros(c, n)
    def push(self, v):
        self.buf[..., 1:] = self.buf[..., :-1]  # <-
        self.buf[..., 0] = v
line = Line(2, 4)
for t in range(3):
    line.push(torch.randn(2))
""",
}

SHIFTS_CLEAN = {
    "towards the front": """
import torch
taps = torch.zeros(3, 8)
taps[..., :-1] = taps[..., 1:]
taps.narrow(-1, 0, 7).copy_(taps.narrow(-1, 1, 7))
""",
    "source cloned": """
import torch
taps = torch.zeros(3, 8)
taps[..., 1:] = taps[..., :-1].clone()
taps[:, 1:].copy_(taps[:, :-1].clone())
""",
    "disjoint windows held by names": """
import torch
K = 4
x = torch.randn(5, 8)
x[:, K:] = x[:, :K]
""",
    "disjoint windows": """
import torch
x = torch.randn(4, 8)
x[:, 4:] = x[:, :4]
""",
}


@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_overlapping_shift_along_a_later_dim_is_a_silent_warning(name):
    src = SHIFTS[name]
    got = _findings(src)
    assert [(row, code, sev) for row, code, sev in got] == [(r, "GW713", Severity.WARNING) for r in _marked(src)], got


@pytest.mark.parametrize("name", sorted(SHIFTS_CLEAN))
def test_shift_lookalike_is_clean(name):
    assert _findings(SHIFTS_CLEAN[name]) == []


def test_dense_shift_is_not_called_silent():
    # measured: a shift whose leading dims are all of size one (or along the first dim) is a dense
    # view, torch sees the overlap and raises: it must not be worded as a silent smear
    for src in ("import torch\nx = torch.randn(1, 5)\nx[:, 1:] = x[:, :-1]\n",
                "import torch\nx = torch.randn(5, 3)\nx.narrow(0, 1, 4).copy_(x.narrow(0, 0, 4))\n"):
        assert all(sev != Severity.WARNING for _, _, sev in _findings(src)), src


# ------------------------------------------------------------------ GW721: a hook object
HOOK_OBJECT = """
import torch
from torch import nn
class Tap:
    def __init__(self, module):
        self.seen = {}
        module.register_forward_hook(self)
    def __call__(self, module, inputs, output):
        self.seen["out"] = output  # <-
head = nn.Linear(4, 4)
tap = Tap(head)
for crop in (torch.randn(3, 4), torch.randn(3, 4)):
    head(crop)
loss = tap.seen["out"].pow(2).mean()
loss.backward()
"""

HOOK_OBJECT_CLEAN = {
    "called once": HOOK_OBJECT.replace("for crop in (torch.randn(3, 4), torch.randn(3, 4)):\n    head(crop)",
                                       "head(torch.randn(3, 4))"),
    "appends every call": HOOK_OBJECT.replace('self.seen["out"] = output  # <-',
                                              'self.seen.setdefault("out", []).append(output)')
                                     .replace('tap.seen["out"].pow(2).mean()', 'sum(o.pow(2).mean() for o in tap.seen["out"])'),
    "store cleared between the calls": HOOK_OBJECT.replace(
        "for crop in (torch.randn(3, 4), torch.randn(3, 4)):\n    head(crop)",
        "head(torch.randn(3, 4))\nfirst = tap.seen.pop('out')\ntap.seen.clear()\nhead(torch.randn(3, 4))")
                                                  .replace('tap.seen["out"].pow(2).mean()',
                                                           '(first - tap.seen["out"]).pow(2).mean()'),
}


def test_hook_object_storing_into_one_slot_is_flagged():
    got = _findings(HOOK_OBJECT)
    assert [(r, c) for r, c, _ in got] == [(r, "GW721") for r in _marked(HOOK_OBJECT)], got


@pytest.mark.parametrize("name", sorted(HOOK_OBJECT_CLEAN))
def test_hook_object_lookalike_is_clean(name):
    assert _findings(HOOK_OBJECT_CLEAN[name]) == []


# ------------------------------------------------------------------ GW702: a per-sample loss from a helper
PER_SAMPLE = """
import torch
from torch import nn
import torch.nn.functional as F
def elbo_terms(x_hat, x, mu, logvar):
    rec = F.mse_loss(x_hat, x, reduction="none").sum(dim=1)
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
    return rec + kl  # <-
enc, dec = nn.Linear(12, 6), nn.Linear(3, 12)
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()])
for step in range(2):
    x = torch.randn(5, 12)
    mu, logvar = enc(x).chunk(2, dim=1)
    loss = elbo_terms(dec(mu), x, mu, logvar)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_per_sample_loss_from_a_helper_is_reported_where_it_is_returned():
    got = _findings(PER_SAMPLE)
    assert [(r, c) for r, c, _ in got] == [(r, "GW702") for r in _marked(PER_SAMPLE)], got


def test_per_sample_loss_reduced_in_the_helper_is_clean():
    assert _findings(PER_SAMPLE.replace("return rec + kl  # <-", "return (rec + kl).mean()")) == []


def test_chunk_pieces_carry_their_shape():
    # `chunk` of a (5, 6) tensor along dim 1 gives (5, 3) pieces: their per-row sums are vectors
    src = PER_SAMPLE.replace("return rec + kl  # <-", "return logvar.exp().sum(dim=1)  # <-")
    got = _findings(src)
    assert [(r, c) for r, c, _ in got] == [(r, "GW702") for r in _marked(src)], got


def test_per_sample_output_of_a_module_forward_is_reported_at_the_backward():
    src = """
import torch
from torch import nn
class PerRow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x).sum(dim=1)
m = PerRow()
out = m(torch.randn(3, 4))
out.backward()  # <-
"""
    assert [(r, c) for r, c, _ in _findings(src)] == [(r, "GW702") for r in _marked(src)]


# ------------------------------------------------------------------ GW701: a helper freezing a module
FREEZE = """
import torch
from torch import nn
def toggle(nets, flag=False):
    for net in nets if isinstance(nets, list) else [nets]:
        for p in net.parameters():
            p.requires_grad = flag
gen = nn.Linear(4, 4)
critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt_c = torch.optim.Adam(critic.parameters())
for step in range(2):
    fake = gen(torch.randn(3, 4))
    toggle(critic, False)  # <-
    opt_c.zero_grad()
    loss_c = critic(fake.detach()).mean() - critic(torch.randn(3, 4)).mean()
    loss_c.backward()
    opt_c.step()
"""


def test_helper_freezing_the_trained_module_is_the_cause():
    got = _findings(FREEZE)
    assert [(r, c, s) for r, c, s in got] == [(r, "GW701", Severity.ERROR) for r in _marked(FREEZE)], got


def test_unfrozen_critic_step_is_clean():
    assert _findings(FREEZE.replace("toggle(critic, False)  # <-", "toggle(critic, True)")) == []


def test_frozen_extractor_no_optimizer_holds_keeps_the_detach_as_cause():
    # a frozen feature network is meant to stay frozen: the detached input is what cuts the loss
    src = """
import torch
from torch import nn
extractor = nn.Linear(4, 4)
for p in extractor.parameters():
    p.requires_grad = False
img = nn.Parameter(torch.randn(2, 4))
opt = torch.optim.Adam([img])
feat = extractor(img.detach())  # <-
loss = feat.pow(2).mean()
loss.backward()
"""
    assert [(r, c) for r, c, _ in _findings(src)] == [(r, "GW701") for r in _marked(src)]


# ------------------------------------------------------------------ one no_grad block, one finding
def test_loss_term_under_no_grad_is_one_finding():
    src = """
import torch
from torch import nn
import torch.nn.functional as F
actor, critic = nn.Linear(4, 2), nn.Linear(4, 1)
opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()])
for step in range(2):
    obs, ret = torch.randn(6, 4), torch.randn(6)
    logits = actor(obs)
    with torch.no_grad():
        values = critic(obs).squeeze(-1)
        adv = ret - values
        value_loss = F.mse_loss(values, ret)  # <-
    loss = -(logits.log_softmax(-1)[:, 0] * adv).mean() + 0.5 * value_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    got = _findings(src)
    assert [r for r, _, _ in got] == _marked(src), got
