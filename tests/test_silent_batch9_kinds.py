"""Static checks of the kinds batch 9 (tests/data/variants/BATCHES.md) missed at first contact,
written as other programs of the same kinds, one hazard and its correct twin per mechanism, each
also run under torch to show the hazard is what torch does: a loss vector made with
``torch.linalg.vector_norm`` (GW702 at the loss); a tensor turned into Python numbers inside a
helper and added back by the caller (GW722 where the numbers are made); a division, ``sqrt``,
``log`` ... of the zero diagonal of a pairwise self-difference, masked afterwards (GW720 at the op).
A line ending in ``# <-``
is where a finding must be reported; a twin must stay clean."""
import textwrap

import pytest

from marked_cases import (findings as _findings, marked as _marked, codes as _codes, run_under_torch as _run)


# --- a per-point error from torch.linalg.vector_norm, reduced over the batch only -----------------
VECTOR_NORM = """
import torch
import torch.nn as nn
net = nn.Linear(6, 8)
x = torch.randn(4, 6)
pts = net(x).view(4, 4, 2)
err = NORM
err.backward()
"""

NORMS = {
    "torch.linalg.vector_norm(pts, dim=-1).mean(dim=0)  # <-": True,
    "torch.linalg.vector_norm(pts, 2, -1).sum(0)  # <-": True,
    "torch.linalg.vector_norm(pts, dim=(1, 2))  # <-": True,
    "torch.linalg.vector_norm(pts, dim=-1).mean()": False,
    "torch.linalg.vector_norm(pts)": False,
    "torch.linalg.vector_norm(pts, dim=-1, keepdim=True).mean()": False,
}


@pytest.mark.parametrize("norm", sorted(NORMS))
def test_vector_norm_loss_shape(norm):
    src = VECTOR_NORM.replace("NORM", norm)
    if NORMS[norm]:
        assert _codes(src) == [(n, "GW702") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("norm", ["torch.linalg.vector_norm(pts, dim=-1).mean(dim=0)",
                                  "torch.linalg.vector_norm(pts, dim=-1).mean()"])
def test_vector_norm_loss_shape_under_torch(norm):
    res = _run(VECTOR_NORM.replace("NORM", norm))
    if norm.endswith("mean()"):
        assert res.returncode == 0, res.stderr[-2000:]
    else:
        assert res.returncode != 0 and "only for scalar outputs" in res.stderr, res.stderr[-2000:]


# --- a tensor turned into Python numbers in a helper, added back by the caller --------------------
NUMBERS_IN_A_HELPER = """
import torch
import torch.nn as nn
torch.manual_seed(0)
enc = nn.Linear(5, 7)
def penalty(codes):
    return PENALTY
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
for step in range(2):
    codes = torch.relu(enc(torch.randn(4, 5)))
    loss = codes.pow(2).mean() + 0.5 * penalty(codes)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

PENALTIES = {
    "sum(abs(v) for v in codes.mean(0).tolist())  # <-": True,
    "float(codes.abs().mean())  # <-": True,
    "codes.abs().mean().item()  # <-": True,
    "codes.mean(0).abs().sum()": False,
}

# the penalty's share of the encoder's gradient: zero when the penalty is made of Python numbers
PROBE = """
codes = torch.relu(enc(torch.randn(4, 5)))
with_term = torch.autograd.grad(codes.pow(2).mean() + 0.5 * penalty(codes), enc.weight, retain_graph=True)[0]
without = torch.autograd.grad(codes.pow(2).mean(), enc.weight)[0]
print("SAME" if torch.equal(with_term, without) else "DIFFERENT")
"""


@pytest.mark.parametrize("penalty", sorted(PENALTIES))
def test_python_numbers_made_in_a_helper_are_reported_where_they_are_made(penalty):
    src = NUMBERS_IN_A_HELPER.replace("PENALTY", penalty)
    if PENALTIES[penalty]:
        assert _codes(src) == [(n, "GW722") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("penalty", ["sum(abs(v) for v in codes.mean(0).tolist())", "codes.mean(0).abs().sum()"])
def test_python_numbers_made_in_a_helper_under_torch(penalty):
    res = _run(NUMBERS_IN_A_HELPER.replace("PENALTY", penalty), PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SAME" if "tolist" in penalty else "DIFFERENT")


# --- a view of a view made by a @torch.no_grad() helper, written in place by the caller -----------
NOGRAD_HELPER_VIEW = """
import torch
import torch.nn as nn
DECORATOR
def split_heads(x, n_heads):
    return x.view(2, 5, n_heads, 8)VIEW
lin = nn.Linear(32, 32)
q = split_heads(lin(torch.randn(2, 5, 32)), 4)
q.mul_(0.5)WRITE
q.sum().backward()
"""

VIEWS = [".transpose(1, 2)", ".permute(0, 2, 1, 3)", ".transpose(1, 2)[:, :2]", ""]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("decorated", [True, False])
def test_view_of_a_view_made_by_a_no_grad_helper(view, decorated):
    src = NOGRAD_HELPER_VIEW.replace("DECORATOR", "@torch.no_grad()" if decorated else "") \
        .replace("VIEW", view).replace("WRITE", "  # <-" if decorated else "")
    assert _codes(src) == [(n, "GW711") for n in _marked(src)]


@pytest.mark.parametrize("decorated", [True, False])
def test_view_of_a_view_made_by_a_no_grad_helper_under_torch(decorated):
    src = NOGRAD_HELPER_VIEW.replace("DECORATOR", "@torch.no_grad()" if decorated else "") \
        .replace("VIEW", ".transpose(1, 2)").replace("WRITE", "")
    res = _run(src)
    if decorated:
        assert res.returncode != 0 and "A view was created in no_grad mode" in res.stderr, res.stderr[-2000:]
    else:
        assert res.returncode == 0, res.stderr[-2000:]


# --- two optimizers stepped after one backward; the zeroing calls clear only one of them ---------
TWO_OPTIMIZERS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
enc, dec = nn.Linear(4, 6), nn.Linear(6, 3)
opt_enc = torch.optim.SGD(enc.parameters(), lr=0.1)
opt_dec = torch.optim.SGD(dec.parameters(), lr=0.1)
seen = []
dec.weight.register_hook(lambda g: seen.append(g.clone()))
for step in range(3):
    opt_enc.zero_grad()
ZERO
    loss = dec(torch.relu(enc(torch.randn(5, 4)))).pow(2).mean()
    loss.backward()
    opt_enc.step()
    opt_dec.step()
"""

ZEROING = {
    "    opt_enc.zero_grad()  # <-": True,  # the second call meant for the decoder
    "    enc.zero_grad()  # <-": True,
    "    opt_dec.zero_grad()": False,
    "    dec.zero_grad(set_to_none=True)": False,
}

PROBE_ACCUMULATED = """
print("SUMMED" if not torch.allclose(dec.weight.grad, seen[-1]) else "ONE")
"""


@pytest.mark.parametrize("zero", sorted(ZEROING))
def test_zeroing_calls_that_miss_a_second_optimizer(zero):
    src = TWO_OPTIMIZERS.replace("ZERO", zero)
    if ZEROING[zero]:
        assert _codes(src) == [(n, "GW725") for n in _marked(src)]
    else:
        assert _codes(src) == []


@pytest.mark.parametrize("zero", ["    opt_enc.zero_grad()", "    opt_dec.zero_grad()"])
def test_zeroing_calls_that_miss_a_second_optimizer_under_torch(zero):
    res = _run(TWO_OPTIMIZERS.replace("ZERO", zero), PROBE_ACCUMULATED)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("ONE" if "dec" in zero else "SUMMED")


def test_gradient_accumulation_of_one_optimizer_is_not_reported():
    src = """
    import torch
    import torch.nn as nn
    net = nn.Linear(4, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(4):
        loss = net(torch.randn(3, 4)).pow(2).mean() / 2
        loss.backward()
        if step % 2 == 1:
            opt.step()
            opt.zero_grad()
    """
    assert _codes(src) == []


# --- a shift register filled by a loop running towards the slots it reads -------------------------
LOOP_SHIFT = """
import torch
import torch.nn as nn
enc = nn.Linear(3, 4)
frames = enc(torch.randn(2, 6, 3))
lagged = frames.clone()
LOOP
    lagged[:, t] = lagged[:, SRC]
lagged[:, 0] = 0.0
"""

LOOPS = {
    ("for t in range(1, lagged.shape[1]):  # <-", "t - 1"): True,
    ("for t in range(2, 6):  # <-", "t - 2"): True,
    ("for t in range(4, -1, -1):  # <-", "t + 1"): True,
    ("for t in range(lagged.shape[1] - 1, 0, -1):", "t - 1"): False,  # downwards: a correct shift
    ("for t in range(0, 5):", "t + 1"): False,  # a left shift reads slots not yet written
}

# compare with a shift of an untouched copy
PROBE_SHIFT = """
ref = torch.cat([torch.zeros_like(frames[:, :1]), frames[:, :-1]], dim=1).detach()
print("SAME" if torch.allclose(lagged.detach()[:, 1:2], ref[:, 1:2]) and torch.allclose(lagged.detach()[:, 3], ref[:, 3]) else "SMEARED")
"""


@pytest.mark.parametrize("loop,src", sorted(LOOPS))
def test_shift_register_loop_direction(loop, src):
    code = LOOP_SHIFT.replace("LOOP", loop).replace("SRC", src)
    if LOOPS[(loop, src)]:
        assert _codes(code) == [(n, "GW713") for n in _marked(code)]
    else:
        assert _codes(code) == []


@pytest.mark.parametrize("loop", ["for t in range(1, lagged.shape[1]):", "for t in range(lagged.shape[1] - 1, 0, -1):"])
def test_shift_register_loop_direction_under_torch(loop):
    res = _run(LOOP_SHIFT.replace("LOOP", loop).replace("SRC", "t - 1"), PROBE_SHIFT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("SAME" if "-1)" in loop else "SMEARED")


def test_python_list_shifted_upwards_is_not_a_tensor_write():
    src = """
    import torch
    hist = [torch.zeros(2) for _ in range(4)]
    for t in range(1, 4):
        hist[t] = hist[t - 1]
    """
    assert _codes(src) == []


# --- a module's own method decorated @torch.no_grad(), used for a term of the loss ----------------
NOGRAD_METHOD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.proj = nn.Linear(8, 4)
        self.cls = nn.Linear(8, 3)
    def forward(self, x):
        return self.cls(self.body(x))
DECORATOR
    def embed(self, x):
        return F.normalize(self.proj(self.body(x)), dim=-1)
model = Encoder()
a, b, y = torch.randn(5, 6), torch.randn(5, 6), torch.randint(0, 3, (5,))
loss = F.cross_entropy(model(a), y) + (model.embed(a) - model.embed(b)).pow(2).sum(-1).mean()USE
loss.backward()
"""

PROBE_PROJ = """
print("NONE" if model.proj.weight.grad is None else "GRAD")
"""


@pytest.mark.parametrize("decorated", [True, False])
def test_module_method_decorated_no_grad_is_reported_at_the_decorator(decorated):
    src = NOGRAD_METHOD.replace("DECORATOR", "    @torch.no_grad()  # <-" if decorated else "").replace("USE", "")
    assert _codes(src) == [(n, "GW722") for n in _marked(src)]


def test_statistics_helper_decorated_no_grad_stays_reported_at_the_use():
    # a free function reading a model (policy statistics for a log) is not a forward path: the use is the slip
    src = """
    import torch
    import torch.nn as nn
    policy = nn.Linear(4, 3)
    @torch.no_grad()
    def stats(policy, obs):
        return torch.distributions.Categorical(logits=policy(obs)).entropy().mean()
    obs, actions, adv = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8)
    logp = torch.distributions.Categorical(logits=policy(obs)).log_prob(actions)
    loss = -(logp * adv).mean() - 0.01 * stats(policy, obs)  # <-
    loss.backward()
    """
    assert _codes(src) == [(n, "GW722") for n in _marked(src)]


@pytest.mark.parametrize("decorated", [True, False])
def test_module_method_decorated_no_grad_under_torch(decorated):
    src = NOGRAD_METHOD.replace("DECORATOR", "    @torch.no_grad()" if decorated else "").replace("USE", "")
    res = _run(src, PROBE_PROJ)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[-1] == ("NONE" if decorated else "GRAD")


# --- a division, sqrt, log ... of the zero diagonal of a pairwise self-difference, masked after ---
PAIRWISE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
enc = nn.Linear(5, 3)
x = torch.randn(2, 6, 5)
eye = torch.eye(6, dtype=torch.bool)
pos = enc(x[0])
pts = enc(x)
other = enc(torch.randn(6, 5))
BODY
loss = out.pow(2).mean()
loss.backward()
"""

# spelling -> (the hazard, its correct twin): the twins keep the argument away from 0 before the op,
# replace the diagonal before it, reduce over a pair dim, or subtract two different tensors
PAIRWISE_SPELLINGS = {
    "unsqueeze, vector_norm, division, masked_fill": (
        """rel = pos.unsqueeze(1) - pos.unsqueeze(0)
dist = torch.linalg.vector_norm(rel, dim=-1, keepdim=True)
out = (rel / dist).masked_fill(eye.unsqueeze(-1), 0.0)  # <-""",
        """rel = pos.unsqueeze(1) - pos.unsqueeze(0)
dist = torch.linalg.vector_norm(rel, dim=-1, keepdim=True)
out = (rel / dist.clamp_min(1e-6)).masked_fill(eye.unsqueeze(-1), 0.0)"""),
    "None indexing, squared distance, sqrt": (
        """d2 = ((pos[:, None] - pos[None]) ** 2).sum(-1)
out = d2.sqrt().masked_fill(eye, 0.0)  # <-""",
        """d2 = ((pos[:, None] - pos[None]) ** 2).sum(-1)
out = (d2 + 1e-8).sqrt().masked_fill(eye, 0.0)"""),
    "None among full slices, torch.sqrt": (
        """d2 = (pos[:, None, :] - pos[None, :, :]).square().sum(dim=-1)
out = torch.sqrt(d2)  # <-""",
        """d2 = (pos[:, None, :] - other[None, :, :]).square().sum(dim=-1)
out = torch.sqrt(d2)"""),
    "batched unsqueeze, rsqrt": (
        """d2 = (pts.unsqueeze(2) - pts.unsqueeze(1)).pow(2).sum(-1)
out = torch.rsqrt(d2).masked_fill(eye, 0.0)  # <-""",
        """d2 = (pts.unsqueeze(2) - pts.unsqueeze(1)).pow(2).sum(-1)
out = torch.rsqrt(d2.masked_fill(eye, 1.0)).masked_fill(eye, 0.0)"""),
    "one side not indexed, norm, log": (
        """dist = (pos[:, None] - pos).norm(dim=-1)
out = torch.log(dist).masked_fill(eye, 0.0)  # <-""",
        """dist = (pos[:, None] - pos).norm(dim=-1)
out = torch.log(torch.where(eye, torch.ones_like(dist), dist)).masked_fill(eye, 0.0)"""),
    "abs, mean, negative power": (
        """gap = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs().mean(-1)
out = (gap ** -1).masked_fill(eye, 0.0)  # <-""",
        """gap = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs().mean(1)
out = gap ** -1"""),
    "fractional power of a squared distance": (
        """d2 = ((pos[:, None] - pos[None]) ** 2).sum(-1)
out = d2 ** 0.5  # <-""",
        """d2 = ((pos[:, None] - pos[None]) ** 2).sum(-1)
out = d2.clamp_min(1e-12) ** 0.5"""),
}
PROBE_FINITE = """
print("FINITE" if bool(torch.isfinite(enc.weight.grad).all()) else "NAN")
"""


@pytest.mark.parametrize("spelling", sorted(PAIRWISE_SPELLINGS))
@pytest.mark.parametrize("hazard", [True, False])
def test_singular_op_on_the_zero_diagonal_of_a_pairwise_difference(spelling, hazard):
    src = PAIRWISE.replace("BODY", PAIRWISE_SPELLINGS[spelling][0 if hazard else 1])
    found = _codes(src)
    assert found == [(n, "GW720") for n in _marked(src)], found
    assert bool(found) is hazard


@pytest.mark.parametrize("spelling", sorted(PAIRWISE_SPELLINGS))
def test_singular_op_on_the_zero_diagonal_of_a_pairwise_difference_under_torch(spelling):
    for hazard in (True, False):
        res = _run(PAIRWISE.replace("BODY", PAIRWISE_SPELLINGS[spelling][0 if hazard else 1]), PROBE_FINITE)
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.split()[-1] == ("NAN" if hazard else "FINITE"), (spelling, hazard)


def test_cdist_of_a_tensor_with_itself_is_not_a_source():
    # measured: torch's cdist backward returns 0 at a zero distance, which also stops the NaN a
    # reciprocal after it makes; a correct program, so the engine stays silent
    src = PAIRWISE.replace("BODY", "out = (1.0 / torch.cdist(pos, pos)).masked_fill(eye, 0.0)")
    assert _codes(src) == []
    res = _run(src, PROBE_FINITE)
    assert res.returncode == 0 and res.stdout.split()[-1] == "FINITE", res.stderr[-2000:]


def test_pairwise_distance_without_grad_is_not_reported():
    src = PAIRWISE.replace("BODY", """with torch.no_grad():
    d = ((pos[:, None] - pos[None]) ** 2).sum(-1).sqrt()
out = pos * d.mean()""")
    assert _codes(src) == []


# --- parameter groups built by filters over named_parameters() that leave a parameter out ---------
# A program per spelling: INVALID leaves the LayerNorm weight (1-D, not a bias) in no group; its
# VALID twin changes only the filter the fix changes. The probe trains a few steps and prints the
# parameters that got a gradient and never moved.
GROUPED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)
        self.out = nn.Linear(d, 3)
    def forward(self, x):
        return self.out(F.gelu(self.fc(self.ln(x))))
def make(model):
GROUPS
model = Block()
opt = make(model)
start = {n: p.detach().clone() for n, p in model.named_parameters()}
for step in range(3):
    loss = F.cross_entropy(model(torch.randn(4, 8)), torch.randint(0, 3, (4,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

STUCK_PROBE = """
held = {id(p) for g in opt.param_groups for p in g["params"]}
print("STUCK", [n for n, p in model.named_parameters()
                if p.grad is not None and id(p) not in held and torch.equal(start[n], p.detach())])
"""

# name -> (the groups of the hazard, marked where the fix goes; the correct twin)
GROUP_SPELLINGS = {
    "dim_and_endswith": (
        """
    named = list(model.named_parameters())
    decay = [p for n, p in named if p.dim() >= 2]
    no_decay = [p for n, p in named if n.endswith(".bias")]  # <-
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}])
""",
        """
    named = list(model.named_parameters())
    decay = [p for n, p in named if p.dim() >= 2]
    no_decay = [p for n, p in named if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}])
"""),
    "ndim_and_bias_in_name_inline": (
        """
    return torch.optim.AdamW([
        {"params": [p for n, p in model.named_parameters() if p.ndim == 2], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if "bias" in n], "weight_decay": 0.0},  # <-
    ])
""",
        """
    return torch.optim.AdamW([
        {"params": [p for n, p in model.named_parameters() if p.ndim == 2], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if p.ndim != 2], "weight_decay": 0.0},
    ])
"""),
    "len_shape_and_tuple_endswith": (
        """
    decay = [p for n, p in model.named_parameters() if len(p.shape) > 1]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(("bias",))]  # <-
    groups = [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, weight_decay=0.05)
""",
        """
    decay = [p for n, p in model.named_parameters() if len(p.shape) > 1]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(("bias", "ln.weight"))]
    groups = [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, weight_decay=0.05)
"""),
    "name_list_any": (
        """
    no_decay = ["bias", "LayerNorm.weight"]
    decay = [p for n, p in model.named_parameters() if "weight" in n and "ln" not in n]
    rest = [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)]  # <-
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}])
""",
        """
    no_decay = ["bias", "ln.weight"]
    decay = [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]
    rest = [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}])
"""),
    "loop_with_elif": (
        """
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim >= 2:
            decay.append(param)
        elif name.endswith("bias"):  # <-
            no_decay.append(param)
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
""",
        """
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    return torch.optim.AdamW([{"params": no_decay, "weight_decay": 0.0}, {"params": decay}])
"""),
}


@pytest.mark.parametrize("spelling", sorted(GROUP_SPELLINGS))
@pytest.mark.parametrize("fixed", [False, True])
def test_parameter_groups_with_a_hole(spelling, fixed):
    src = GROUPED.replace("GROUPS", GROUP_SPELLINGS[spelling][fixed].strip("\n"))
    assert not fixed or not _marked(src)
    assert _codes(src) == [(n, "GW719") for n in _marked(src)]


@pytest.mark.parametrize("spelling", sorted(GROUP_SPELLINGS))
@pytest.mark.parametrize("fixed", [False, True])
def test_parameter_groups_with_a_hole_under_torch(spelling, fixed):
    res = _run(GROUPED.replace("GROUPS", GROUP_SPELLINGS[spelling][fixed].strip("\n")), STUCK_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("STUCK", 1)[1].strip() == ("[]" if fixed else "['ln.weight']")


# groups that leave parameters out on purpose, or that the engine cannot read whole: silent
LEFT_OUT_ON_PURPOSE = {
    # BitFit: only the biases (and the head, whole) train
    "bitfit": """
    bias = [p for n, p in model.named_parameters() if n.endswith("bias") and not n.startswith("out.")]
    head = [p for n, p in model.named_parameters() if n.startswith("out.")]
    return torch.optim.AdamW([{"params": bias}, {"params": head, "lr": 1e-3}], lr=1e-2)
""",
    # the head only, split by kind: the body is left out as a whole
    "head_only": """
    mats = [p for n, p in model.named_parameters() if n.startswith("out.") and p.dim() >= 2]
    vecs = [p for n, p in model.named_parameters() if n.startswith("out.") and p.dim() < 2]
    return torch.optim.AdamW([{"params": mats}, {"params": vecs, "weight_decay": 0.0}])
""",
    # a requires_grad filter over a model with a frozen part
    "frozen_part": """
    model.ln.requires_grad_(False)
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and n.endswith("bias")]
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
""",
    # a condition the engine does not evaluate (a method of the name it does not model)
    "unknown_condition": """
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if n.lower().endswith("bias")]
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
""",
    # a group completed after its filter (the engine reads only filters: silent)
    "completed_by_append": """
    named = list(model.named_parameters())
    decay = [p for n, p in named if p.dim() >= 2]
    no_decay = [p for n, p in named if n.endswith(".bias")]
    no_decay.append(model.ln.weight)
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
""",
    # the left-out weight is trained by a second optimizer
    "second_optimizer": """
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(".bias")]
    global ln_opt
    ln_opt = torch.optim.SGD([model.ln.weight], lr=0.1)
    return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}])
""",
}


@pytest.mark.parametrize("case", sorted(LEFT_OUT_ON_PURPOSE))
def test_parameter_groups_left_out_on_purpose_stay_silent(case):
    src = GROUPED.replace("GROUPS", LEFT_OUT_ON_PURPOSE[case].strip("\n"))
    assert _codes(src) == []
    assert [d for d in _findings(src) if d[1] == "GW719"] == []


# no filter owns the left-out kind (each group takes matrices, or both kinds): the hole is certain,
# the line to change is not, so it is information at the optimizer's construction
UNDECIDED = """
    body = [p for n, p in model.named_parameters() if n.startswith("fc.") and n.endswith("weight")]
    rest = [p for n, p in model.named_parameters() if n.startswith("out.") or n.endswith("bias")]
    return torch.optim.AdamW([{"params": body}, {"params": rest, "lr": 1e-3}], lr=1e-2)  # <-
"""


def test_parameter_groups_hole_without_an_owning_filter_is_information():
    from gradwarden.engine.analyze import analyze_source

    src = GROUPED.replace("GROUPS", UNDECIDED.strip("\n"))
    assert _codes(src) == []
    found = [(d.row, d.code, d.severity) for d in analyze_source(textwrap.dedent(src), "case.py") if d.code == "GW719"]
    assert found == [(n, "GW719", 3) for n in _marked(src)]
    res = _run(src, STUCK_PROBE)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("STUCK", 1)[1].strip() == "['ln.weight']"
