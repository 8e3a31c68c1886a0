"""The static checks of silent gradient-flow hazards (issue 24): gradient reachability (GW719,
GW722), non-finite unselected branches (GW720), hook slots (GW721), silent shifts (GW713), and the
writes into an expanded tensor torch allows (GW301). Each case names the line it must be reported
at (marked ``# <-``) or that it must stay clean; what torch does on each kind is measured in
tests/test_rule_examples_run.py (the rules' examples) and in the variants corpus."""
import textwrap

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity

LOOP = """
import torch
from torch import nn
{setup}
opt = torch.optim.SGD({params}, lr=0.1)
for step in range(2):
{body}
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


GATE = """
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        logits = self.fc(x)
        if self.training:
            return nn.functional.gumbel_softmax(logits, hard=True)[:, 1:]
        return logits.argmax(-1, keepdim=True).float()
class Quant(nn.Module):
    def forward(self, y):
        if self.training:
            return y + (torch.round(y) - y).detach()
        return torch.round(y)
"""


def _prog(setup: str, params: str, body: str) -> str:
    return LOOP.format(setup=textwrap.dedent(setup).strip("\n"), params=params,
                       body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


def _findings(src: str):
    return [(d.row, d.code) for d in analyze_source(src, "case.py") if d.severity <= Severity.WARNING]


def _marked(src: str):
    return [n for n, line in enumerate(src.splitlines(), 1) if line.rstrip().endswith("# <-")]


FLAGGED = {
    # a computed weight re-wrapped as a new leaf every step: the generator never trains
    "rewrap": ("GW719", _prog("hyper, head = nn.Linear(4, 4), nn.Linear(4, 1)",
                              "list(hyper.parameters()) + list(head.parameters())", """
        layer_w = nn.Parameter(hyper(torch.eye(4)))  # <-
        loss = head(torch.randn(3, 4) @ layer_w).pow(2).mean()
    """)),
    # the codebook is looked up detached: only the encoder trains
    "detached codebook": ("GW719", _prog("enc, book = nn.Linear(4, 3), nn.Embedding(8, 3)",
                                         "list(enc.parameters()) + list(book.parameters())", """
        z = enc(torch.randn(16, 4))
        codes = book.weight.detach()  # <-
        loss = (codes[torch.cdist(z, codes).argmin(-1)] - z).pow(2).mean()
    """)),
    # the codebook loss computed on the straight-through output: it reaches the encoder only
    "codebook loss on the straight-through output": ("GW719", _prog(
        "enc, book, dec = nn.Linear(4, 3), nn.Embedding(8, 3), nn.Linear(3, 4)",
        "list(enc.parameters()) + list(book.parameters()) + list(dec.parameters())", """
        x = torch.randn(16, 4)
        z = enc(x)
        q = book(torch.cdist(z, book.weight).argmin(-1))
        z_q = z + (q - z).detach()
        codebook_loss = (z_q - z.detach()).pow(2).mean()  # <-
        loss = (dec(z_q) - x).pow(2).mean() + codebook_loss
    """)),
    # a learnable weight read as a number and added back
    "item term": ("GW722", _prog("net = nn.Linear(4, 1)\nlog_var = nn.Parameter(torch.zeros(()))",
                                 "list(net.parameters()) + [log_var]", """
        lv = log_var.item()  # <-
        loss = net(torch.randn(8, 4)).pow(2).mean() * 2.0 + lv
    """)),
    "float term": ("GW722", _prog("enc = nn.Linear(6, 2)", "enc.parameters()", """
        z = enc(torch.randn(8, 6))
        kl = 0.5 * float(z.pow(2).mean())  # <-
        loss = (z - 1).pow(2).mean() + kl
    """)),
    "no_grad helper term": ("GW722", _prog(
        "pol = nn.Linear(4, 3)\n@torch.no_grad()\ndef ent(o):\n    return torch.softmax(pol(o), -1).pow(2).sum(-1).mean()",
        "pol.parameters()", """
        obs = torch.randn(8, 4)
        loss = pol(obs).logsumexp(-1).mean() - 0.1 * ent(obs)  # <-
    """)),
    "hook keeps detach": ("GW722", _prog(
        "enc, head = nn.Linear(4, 8), nn.Linear(16, 1)\nkept = {}\n"
        "def keep(m, i, o):\n    kept['f'] = o.detach()  # <-\nenc.register_forward_hook(keep)",
        "list(enc.parameters()) + list(head.parameters())", """
        h = enc(torch.randn(2, 4))
        loss = head(torch.cat([h, kept['f']], 1)).pow(2).mean()
    """)),
    "where log": ("GW720", """
import torch
p = torch.tensor([0.0, 0.5, 0.5], requires_grad=True)
h = -torch.where(p > 0, p * p.log(), torch.zeros_like(p)).sum()  # <-
h.backward()
"""),
    "where exp overflow": ("GW720", """
import torch
x = torch.tensor([1.0, 100.0], requires_grad=True)
y = torch.where(x > 20, x, torch.log1p(torch.exp(x)))  # <-
y.sum().backward()
"""),
    "hook slot overwritten": ("GW721", """
import torch
from torch import nn
shared = nn.Linear(4, 4)
class Keep:
    def __init__(self, m):
        m.register_forward_hook(self.hook)
    def hook(self, m, i, o):
        self.out = o  # <-
k = Keep(shared)
a, b = shared(torch.randn(2, 4)), shared(torch.randn(2, 4))
loss = (a - b).pow(2).mean() + k.out.pow(2).mean()
loss.backward()
"""),
    "gate left in eval mode by a helper": ("GW719", _prog(GATE + "gate, head = Gate(), nn.Linear(4, 1)\n"
                                                            "gate.train(False)  # <-",
                                                            "list(gate.parameters()) + list(head.parameters())", """
        x = torch.randn(8, 4)
        loss = (head(x) * gate(x)).pow(2).mean()
    """)),
    "eval() in the loop, train() before it": ("GW718", """
import torch
from torch import nn
""" + GATE + """
enc, q = nn.Linear(4, 3), Quant()
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
enc.train()
q.train()  # <-
for epoch in range(3):
    loss = q(enc(torch.randn(8, 4))).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    q.eval()
    with torch.no_grad():
        val = q(enc(torch.randn(8, 4))).pow(2).mean()
"""),
    "hook made by a factory method (a closure)": ("GW721", """
import torch
from torch import nn
class Reg:
    def __init__(self, modules):
        self.acts = {}
        for name, m in modules.items():
            m.register_forward_hook(self.make_hook(name))
    def make_hook(self, name):
        def hook(module, inputs, output):
            self.acts[name] = output  # <-
        return hook
shared = nn.Linear(4, 4)
reg = Reg({"shared": shared})
a, b = shared(torch.randn(2, 4)), shared(torch.randn(2, 4))
loss = (a * b).sum() + sum(x.pow(2).mean() for x in reg.acts.values())
loss.backward()
"""),
    "shift along time": ("GW713", """
import torch
frames = torch.zeros(2, 4, 3)
frames[:, 1:] = frames[:, :-1]  # <-
"""),
}

CLEAN = {
    "eval() in the loop, train() at the start of each iteration": """
import torch
from torch import nn
""" + GATE + """
enc, q = nn.Linear(4, 3), Quant()
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
for epoch in range(3):
    q.train()
    loss = q(enc(torch.randn(8, 4))).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    q.eval()
    with torch.no_grad():
        val = q(enc(torch.randn(8, 4))).pow(2).mean()
""",
    "rewrap once in __init__": _prog("gen = nn.Linear(4, 4)\nw = nn.Parameter(gen.weight.detach().clone())",
                                     "[w]", "loss = (torch.randn(3, 4) @ w).pow(2).mean()"),
    "codebook loss on the lookup": _prog("enc, book = nn.Linear(4, 3), nn.Embedding(8, 3)",
                                         "list(enc.parameters()) + list(book.parameters())", """
        z = enc(torch.randn(16, 4))
        q = book(torch.cdist(z, book.weight).argmin(-1))
        z_q = z + (q - z).detach()
        loss = z_q.pow(2).mean() + (q - z.detach()).pow(2).mean()
    """),
    "numbers for the log": _prog("enc = nn.Linear(6, 2)", "enc.parameters()", """
        z = enc(torch.randn(8, 6))
        loss = (z - 1).pow(2).mean()
        print(float(loss), loss.item())
    """),
    "surrogate x - x.detach()": _prog("pol = nn.Linear(4, 3)", "pol.parameters()", """
        logp = pol(torch.randn(8, 4)).log_softmax(-1)[:, 0].sum()
        loss = -(logp - logp.detach()).exp()
    """),
    "EMA codebook outside the gradient": _prog("enc, book = nn.Linear(4, 3), nn.Embedding(8, 3)",
                                               "list(enc.parameters()) + list(book.parameters())", """
        z = enc(torch.randn(16, 4))
        with torch.no_grad():
            book.weight.mul_(0.9).add_(0.1 * z.mean(0))
        q = book.weight.detach()[torch.cdist(z, book.weight.detach()).argmin(-1)]
        loss = (z - q).pow(2).mean()
    """),
    "hook for a plot": _prog("enc, head = nn.Linear(4, 8), nn.Linear(8, 1)\nkept = {}\n"
                             "def keep(m, i, o):\n    kept['f'] = o.detach()\nenc.register_forward_hook(keep)",
                             "list(enc.parameters()) + list(head.parameters())",
                             "loss = head(enc(torch.randn(2, 4))).pow(2).mean()"),
    "where on a safe copy": """
import torch
p = torch.tensor([0.0, 0.5, 0.5], requires_grad=True)
safe = torch.where(p > 0, p, torch.ones_like(p))
h = -torch.where(p > 0, p * safe.log(), torch.zeros_like(p)).sum()
h.backward()
""",
    "where between two tensors": """
import torch
x, y = torch.rand(4, requires_grad=True), torch.rand(4) + 1
z = torch.where(x > y, torch.log(x), torch.log(y))
z.sum().backward()
""",
    "hook on a module called once": """
import torch
from torch import nn
m1, m2 = nn.Linear(4, 4), nn.Linear(4, 4)
acts = {}
def keep(m, i, o):
    acts['x'] = o
m1.register_forward_hook(keep)
loss = m2(m1(torch.randn(2, 4))).sum() + acts['x'].pow(2).mean()
loss.backward()
""",
    "slot read between the calls": """
import torch
from torch import nn
shared = nn.Linear(4, 4)
class Keep:
    def __init__(self, m):
        m.register_forward_hook(self.hook)
    def hook(self, m, i, o):
        self.out = o
k = Keep(shared)
a = shared(torch.randn(2, 4))
first = k.out
b = shared(torch.randn(2, 4))
loss = (first - k.out).pow(2).mean()
loss.backward()
""",
    "slot read through a global dict before the next call": """
import torch
from torch import nn
feats = {}
def keep(m, i, o):
    feats["c"] = o
conv = nn.Linear(4, 4)
conv.register_forward_hook(keep)
conv(torch.randn(2, 4))
targets = {k: v.detach() for k, v in feats.items()}
x = torch.randn(2, 4, requires_grad=True)
for step in range(2):
    conv(x)
    loss = sum((feats[k] - targets[k]).pow(2).mean() for k in targets)
    loss.backward()
""",
    "shift towards the front": """
import torch
frames = torch.zeros(2, 4, 3)
frames[:, :-1] = frames[:, 1:]
""",
    "fill_ of an expanded tensor used detached": """
import torch
w = torch.randn(3, 3, requires_grad=True)
t2 = w.sum(0, keepdim=True).expand(3, 3)
t2.fill_(0.5)
(w * t2.detach()).sum().backward()
""",
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_silent_hazard_is_flagged_at_its_line(name):
    code, src = FLAGGED[name]
    got = _findings(src)
    marked = _marked(src)
    assert any(c == code and row in marked for row, c in got), (name, marked, got)
    assert all(row in marked for row, c in got), f"{name}: findings elsewhere {got}"


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_lookalike_is_clean(name):
    assert _findings(CLEAN[name]) == []


def test_fill_of_expanded_tensor_is_reported_at_the_backward_through_it():
    src = "import torch\nw = torch.randn(3, 3, requires_grad=True)\ns = w.sum(0, keepdim=True).expand(3, 3)\n" \
          "s.fill_(0.5)\n(s * w).sum().backward()\n"
    diags = [d for d in analyze_source(src, "case.py") if d.code == "GW301"]
    assert [d.row for d in diags] == [4]
    assert any("backward" in r.message for d in diags for r in d.related)
