"""The runtime bridge widened before batch 14 (issue 24): kinds a held-back batch is likely to hold
that the run proves without knowing what the program meant, each a program of the kind with a
correct twin on which the run finds nothing:

- a value that becomes an integer or a boolean (``argmax``, ``topk``'s indices, ``x > t``) and is
  used by the loss: the parameters below it get no gradient at any step, GW719 at the call
  (a pseudo-label, a top-k gate multiplied by its probability, a straight-through mask, a metric
  are not this: the parameters are reached another way);
- a list of graph tensors copied by ``torch.tensor(...)`` into a new leaf (per-task losses
  re-wrapped with ``requires_grad=True``): GW719 there (``torch.stack`` keeps the graph);
- a module's method that opens a ``no_grad`` block and reads the module's own parameter in it (a
  property normalising its weights): GW719 at the read (a teacher called under the caller's
  ``no_grad`` is not this);
- a module attached after the optimizer through ``add_module``/``register_module``/
  ``ModuleDict.update`` (they store into ``_modules`` without ``__setattr__``): GW719 there;
- the model re-created after the optimizer by ``copy.deepcopy`` (an instance built without
  ``__init__``), by another class, or by a factory called again (shown at that call, in the
  function that built the optimizer; the old weights loaded into it are not the cause): GW719 at
  the line that made the instance the loss uses (an EMA teacher deep-copied after the optimizer
  trains nothing and is not this);
- a scheduler that holds the learning rate at exactly 0 in every group at every step after a
  backward (a ``LambdaLR`` factor written with ``//``): GW741 at the scheduler; a warm-up whose
  first step has rate 0, and ``lr=0`` given to the optimizer (stated), are not this;
- a ``relu``/``clamp`` none of whose input elements is in the range that passes the gradient, at
  every step (``clamp`` with its bounds reversed, ``relu(x - 100)``): GW718 at the call, as
  ``round``/``sign`` are.

The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # argmax's indices carry no gradient: the router's `.grad` stays None at every step (scale trains).
    # GW719 at line 9
    "argmax_route": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        router = nn.Linear(4, 3)
        scale = nn.Parameter(torch.ones(3))
        opt = torch.optim.SGD(list(router.parameters()) + [scale], lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            choice = router(x).argmax(dim=1).float()
            loss = (choice * scale.sum() - 1.0).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # pseudo-labels from argmax, a confidence mask from a comparison, an accuracy: the model is
    # reached by the cross-entropy itself
    "argmax_route_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for step in range(3):
            x = torch.randn(8, 4)
            logits = model(x)
            pseudo = logits.argmax(1)
            mask = (logits.softmax(1).max(1).values > 0.3).float()
            loss = (nn.functional.cross_entropy(logits, pseudo, reduction="none") * mask).mean()
            acc = (pseudo == 0).float().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # topk's indices pick the rows and weigh them: the scorer's `.grad` stays None. GW719 at line 10
    "topk_select": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        scorer = nn.Linear(4, 1)
        emb = nn.Linear(4, 4)
        opt = torch.optim.Adam(list(scorer.parameters()) + list(emb.parameters()), lr=0.01)
        for step in range(3):
            x = torch.randn(10, 4)
            scores = scorer(x).squeeze(-1)
            _, idx = scores.topk(3)
            weights = idx.float() / 10
            loss = (emb(x[idx]) * weights[:, None]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a top-1 mixture of experts whose output is multiplied by the gate's probability: the router trains
    "topk_select_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        router = nn.Linear(4, 3)
        experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        opt = torch.optim.SGD(list(router.parameters()) + list(experts.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            gate, idx = router(x).softmax(-1).topk(1, dim=-1)
            out = torch.zeros_like(x)
            for e, expert in enumerate(experts):
                sel = idx[:, 0] == e
                if sel.any():
                    out[sel] = expert(x[sel]) * gate[sel]
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a hard mask from a comparison: the gate's `.grad` stays None. GW719 at line 9
    "threshold_mask": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        gate = nn.Linear(4, 4)
        body = nn.Linear(4, 4)
        opt = torch.optim.SGD(list(gate.parameters()) + list(body.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            mask = (torch.sigmoid(gate(x)) > 0.5).float()
            loss = (body(x) * mask).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the straight-through mask: hard values forward, the sigmoid's gradient backward
    "threshold_mask_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        gate = nn.Linear(4, 4)
        body = nn.Linear(4, 4)
        opt = torch.optim.SGD(list(gate.parameters()) + list(body.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            soft = torch.sigmoid(gate(x))
            mask = (soft > 0.5).float() + soft - soft.detach()
            loss = (body(x) * mask).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `add_module` replaces the last layer after the optimizer: the new one trains nothing. GW719 at 6
    "add_module_late": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.add_module("2", nn.Linear(4, 1))
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "add_module_late_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        model.add_module("2", nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `ModuleDict.update` adds a head after the optimizer. GW719 at line 12
    "moduledict_update": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleDict({"a": nn.Linear(4, 1)})
            def forward(self, x, task):
                return self.heads[task](x)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.heads.update({"b": nn.Linear(4, 1)})
        for step in range(3):
            loss = model(torch.randn(8, 4), "a").pow(2).mean() + model(torch.randn(8, 4), "b").pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the new head handed to the optimizer
    "moduledict_update_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads = nn.ModuleDict({"a": nn.Linear(4, 1)})
            def forward(self, x, task):
                return self.heads[task](x)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.heads.update({"b": nn.Linear(4, 1)})
        opt.add_param_group({"params": model.heads["b"].parameters()})
        for step in range(3):
            loss = model(torch.randn(8, 4), "a").pow(2).mean() + model(torch.randn(8, 4), "b").pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the optimizer holds the first model, the loss goes through its deep copy. GW719 at line 7
    "deepcopy_after": """
        import copy
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model = copy.deepcopy(model)
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # an EMA teacher deep-copied after the optimizer: it makes targets and is moved by hand
    "deepcopy_after_ok": """
        import copy
        import torch
        from torch import nn
        torch.manual_seed(0)
        student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        teacher = copy.deepcopy(student)
        for p in teacher.parameters():
            p.requires_grad_(False)
        for step in range(3):
            x = torch.randn(8, 4)
            with torch.no_grad():
                target = teacher(x).argmax(1)
            loss = nn.functional.cross_entropy(student(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for t, s in zip(teacher.parameters(), student.parameters()):
                    t.mul_(0.9).add_(s, alpha=0.1)
    """,
    # the name rebound to a model of another class after the optimizer. GW719 at line 12
    "rebound_other_class": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, 1)
            def forward(self, x):
                return self.fc(x)
        model = Net(4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `s // warmup` is 0 for every step below 100: the rate is 0 at each step. GW741 at line 7
    "lr_lambda_zero": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        warmup = 100
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, s // warmup))
        for step in range(5):
            loss = net(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    """,
    # a linear warm-up: 0 at the first step only
    "lr_lambda_zero_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        warmup = 100
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warmup))
        for step in range(5):
            loss = net(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    """,
    # the rate given to the optimizer is 0: a choice the program states (a script that measures
    # gradients without moving the weights)
    "lr_given_zero_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 1)
        opt = torch.optim.Adam(net.parameters(), lr=0)
        for step in range(3):
            loss = net(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `clamp(min=1, max=0)`: every element is outside [1, 0], so the clamp's derivative is zero
    # everywhere: `net` gets an all-zero gradient at every step. GW718 at line 9
    "clamp_reversed": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 4)
        head = nn.Linear(4, 1)
        opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            h = torch.clamp(net(x), min=1.0, max=0.0)
            loss = (head(h) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "clamp_reversed_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 4)
        head = nn.Linear(4, 1)
        opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            h = torch.clamp(net(x), min=0.0, max=1.0)
            loss = (head(h) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # every input of the relu is below 0 (a shift of -100): `net`'s gradient is exactly zero at every
    # step. GW718 at line 9
    "relu_all_negative": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(4, 4)
        head = nn.Linear(4, 1)
        opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            h = torch.relu(net(x) - 100.0)
            loss = (head(h) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a critic's bias whose two terms cancel (exactly zero by design) keeps the relus read: none is
    # saturated, nothing is found
    "relu_all_negative_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        bias = nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD(list(net.parameters()) + [bias], lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            h = net(x).clamp(-1.0, 1.0)
            loss = (h - 0.5).pow(2).mean() + (bias - bias)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # argmax's indices one-hot encoded into a gate (an integer result of an integer result): the
    # selector's `.grad` stays None. GW719 at line 10
    "one_hot_gate": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        torch.manual_seed(0)
        selector = nn.Linear(6, 3)
        branches = nn.Linear(6, 18)
        opt = torch.optim.SGD([*selector.parameters(), *branches.parameters()], lr=0.1)
        for step in range(3):
            x = torch.randn(12, 6)
            pick = F.one_hot(selector(x).argmax(-1), 3).float()
            out = (pick.unsqueeze(-1) * branches(x).view(12, 3, 6)).sum(1)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the straight-through Gumbel-softmax gate: one-hot forward, the soft gradient backward
    "one_hot_gate_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        torch.manual_seed(0)
        selector = nn.Linear(6, 3)
        branches = nn.Linear(6, 18)
        opt = torch.optim.SGD([*selector.parameters(), *branches.parameters()], lr=0.1)
        for step in range(3):
            x = torch.randn(12, 6)
            pick = F.gumbel_softmax(selector(x), tau=1.0, hard=True)
            out = (pick.unsqueeze(-1) * branches(x).view(12, 3, 6)).sum(1)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `torch.tensor` of a list of losses copies their numbers into a new leaf: the towers get no
    # gradient (the backward runs: requires_grad=True). GW719 at line 9
    "tensor_of_losses": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        towers = [nn.Linear(5, 1), nn.Linear(5, 1)]
        opt = torch.optim.SGD([p for t in towers for p in t.parameters()], lr=0.1)
        for step in range(3):
            x, y = torch.randn(10, 5), torch.randn(10, 1)
            parts = [(t(x) - y).pow(2).mean() for t in towers]
            total = torch.tensor(parts, requires_grad=True).sum()
            opt.zero_grad()
            total.backward()
            opt.step()
    """,
    # `torch.stack` keeps the graph; a `torch.tensor` of the numbers for a log is no cut
    "tensor_of_losses_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        towers = [nn.Linear(5, 1), nn.Linear(5, 1)]
        opt = torch.optim.SGD([p for t in towers for p in t.parameters()], lr=0.1)
        for step in range(3):
            x, y = torch.randn(10, 5), torch.randn(10, 1)
            parts = [(t(x) - y).pow(2).mean() for t in towers]
            total = torch.stack(parts).sum()
            logged = torch.tensor(parts)
            opt.zero_grad()
            total.backward()
            opt.step()
    """,
    # a factory called again after the optimizer, the old weights loaded into the new instance: the
    # line to change is the call in the function that built the optimizer (13), not the factory's
    # own construction (6), and the copy of the old weights is not the cause. GW719 at 13
    "factory_again": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        def make(weights=None):
            net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
            if weights is not None:
                net.load_state_dict(weights)
            return net
        def train():
            net = make()
            opt = torch.optim.Adam(net.parameters(), lr=1e-2)
            saved = {k: v.clone() for k, v in net.state_dict().items()}
            net = make(saved)
            for step in range(3):
                loss = net(torch.randn(8, 4)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        train()
    """,
    # the weights loaded into the instance the optimizer holds
    "factory_again_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        def make(weights=None):
            net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
            if weights is not None:
                net.load_state_dict(weights)
            return net
        def train():
            net = make()
            opt = torch.optim.Adam(net.parameters(), lr=1e-2)
            saved = {k: v.clone() for k, v in net.state_dict().items()}
            net.load_state_dict(saved)
            for step in range(3):
                loss = net(torch.randn(8, 4)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        train()
    """,
    # the module's own method reads its parameter inside a `no_grad` block it opened: the scale
    # gets no gradient at any step. GW719 at line 11 (the read in the block)
    "own_no_grad_block": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.scale = nn.Parameter(torch.ones(4))
            def gain(self):
                with torch.no_grad():
                    return self.scale.abs() + 1e-3
            def forward(self, x):
                return self.body(x) * self.gain()
        model = Scaled()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = (model(torch.randn(8, 4)) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a frozen teacher that the optimizer happens to hold, called under no_grad by the outer module:
    # the block is the caller's, the parameters the teacher's; not proven (it may be meant)
    "own_no_grad_block_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Distill(nn.Module):
            def __init__(self):
                super().__init__()
                self.student = nn.Linear(4, 3)
                self.teacher = nn.Linear(4, 3)
            def forward(self, x):
                with torch.no_grad():
                    target = self.teacher(x).softmax(-1)
                return -(target * self.student(x).log_softmax(-1)).sum(-1).mean()
        model = Distill()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(8, 4))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the codes are looked up in a detached table: `argmin`'s indices and the `.detach()` both cut the
    # codebook, and the detach is the line to change. GW719 at line 10, not the argmin at 9
    "detached_table_and_argmin": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        torch.manual_seed(0)
        enc, codes = nn.Linear(6, 4), nn.Embedding(8, 4)
        opt = torch.optim.SGD([*enc.parameters(), *codes.parameters()], lr=0.1)
        for step in range(3):
            z = enc(torch.randn(16, 6))
            idx = torch.cdist(z, codes.weight).argmin(-1)
            zq = F.embedding(idx, codes.weight.detach())
            loss = F.mse_loss(zq, z.detach()) + F.mse_loss(z + (zq - z).detach(), z.detach() * 0.5)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch14")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


@pytest.mark.parametrize("name,row,op", [("argmax_route", 9, "`argmax`, whose integer"),
                                         ("topk_select", 10, "`topk`, whose integer"),
                                         ("threshold_mask", 9, "`gt`, whose boolean")])
def test_a_value_made_integer_cuts_the_parameters_below_it(runs, name, row, op):
    f = _one(runs[name], "GW719")
    assert f.row == row and op in f.message and "at any of the 3 steps" in f.message
    assert site_rows(f, "optimizer") and site_rows(f, "step")


@pytest.mark.parametrize("name,row,what", [("add_module_late", 6, "`2`"), ("moduledict_update", 12, "`b`")])
def test_a_module_attached_after_the_optimizer_by_add_module(runs, name, row, what):
    f = _one(runs[name], "GW719")
    assert f.row == row and f.message.startswith(what) and "after SGD was built" in f.message


@pytest.mark.parametrize("name,row,opt_row", [("deepcopy_after", 7, 6), ("rebound_other_class", 12, 11)])
def test_the_model_re_created_after_the_optimizer(runs, name, row, opt_row):
    f = _one(runs[name], "GW719")
    assert f.row == row and "Sequential built here" in f.message and site_rows(f, "optimizer") == [opt_row]


def test_a_learning_rate_of_zero_from_a_scheduler_factor(runs):
    f = _one(runs["lr_lambda_zero"], "GW741")
    assert f.row == 7 and "LambdaLR" in f.message and "each of the 5 steps" in f.message
    assert site_rows(f, "optimizer") == [5] and site_rows(f, "step") == [12]



@pytest.mark.parametrize("name,op", [("clamp_reversed", "`clamp`"), ("relu_all_negative", "`relu`")])
def test_a_call_saturated_at_every_element_at_every_step(runs, name, op):
    f = _one(runs[name], "GW718")
    assert f.row == 9 and op in f.message and "`weight`" in f.message and "exactly zero gradient" in f.message


def test_argmax_one_hot_encoded_into_a_gate(runs):
    f = _one(runs["one_hot_gate"], "GW719")
    assert f.row == 10 and "`argmax`, whose integer" in f.message and "`weight`" in f.message


def test_torch_tensor_of_a_list_of_losses(runs):
    f = _one(runs["tensor_of_losses"], "GW719")
    assert f.row == 9 and "`tensor(...)` of a list of tensors" in f.message


def test_a_factory_called_again_after_the_optimizer(runs):
    f = _one(runs["factory_again"], "GW719")
    assert f.row == 13 and "Sequential built here" in f.message and site_rows(f, "optimizer") == [11]


def test_a_parameter_read_in_a_no_grad_block_of_its_own_module(runs):
    f = _one(runs["own_no_grad_block"], "GW719")
    assert f.row == 11 and "`scale`" in f.message and "no_grad" in f.message


def test_a_tensor_copy_is_shown_before_an_integer_result_of_the_same_parameters(runs):
    f = _one(runs["detached_table_and_argmin"], "GW719")
    assert f.row == 10 and ".detach()" in f.message and "weight`" in f.message
