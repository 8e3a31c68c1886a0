"""The runtime bridge on what an optimizer holds against what the model uses, over the steps
(runtime/child/heldgrads.py, untrained.py): a parameter re-wrapped as a new ``nn.Parameter``
after the optimizer was built (GW719), a zeroing call that clears only part of what an optimizer
steps (GW725), a parameter read through ``.data`` into the loss (GW719 at the read); and a
raise the static engine attributes to another line (a helper's per-sample loss, a helper's
freeze) shown at that line. Each hazard has a correct twin on which the run finds nothing; the
comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

from gradwarden.runtime import DebugResult
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs

pytest.importorskip("torch")

PROGRAMS: Dict[str, str] = {
    # the module is given a new leaf at step 2 (line 4): backward fills it, no optimizer holds
    # it, and the tensor the optimizer holds gets no gradient from then on
    "rewrap": """
        import torch
        from torch import nn
        def reload(layer, w):
            layer.weight = nn.Parameter(w.clone())
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        keep = net[0].weight.detach().clone()
        for step in range(4):
            if step == 2:
                reload(net[0], keep)
            loss = net(torch.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "rewrap_copy_ok": """
        import torch
        from torch import nn
        def reload(layer, w):
            with torch.no_grad():
                layer.weight.copy_(w)
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        keep = net[0].weight.detach().clone()
        for step in range(4):
            if step == 2:
                reload(net[0], keep)
            loss = net(torch.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the new tensor is handed to the optimizer: it trains
    "rewrap_added_ok": """
        import torch
        from torch import nn
        net = nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(4):
            if step == 2:
                net.weight = nn.Parameter(torch.zeros(1, 3))
                opt.add_param_group({"params": [net.weight]})
            loss = net(torch.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `model.zero_grad()` (line 8) leaves the temperature's gradient: it grows every step
    "partial_zero": """
        import torch
        from torch import nn
        model = nn.Linear(4, 4)
        temp = nn.Parameter(torch.tensor(0.5))
        opt = torch.optim.SGD([*model.parameters(), temp], lr=0.0)
        for step in range(3):
            out = model(torch.randn(6, 4)) / temp
            model.zero_grad()
            out.logsumexp(-1).mean().backward()
            opt.step()
    """,
    "partial_zero_ok": """
        import torch
        from torch import nn
        model = nn.Linear(4, 4)
        temp = nn.Parameter(torch.tensor(0.5))
        opt = torch.optim.SGD([*model.parameters(), temp], lr=0.0)
        for step in range(3):
            out = model(torch.randn(6, 4)) / temp
            opt.zero_grad()
            out.logsumexp(-1).mean().backward()
            opt.step()
    """,
    # gradient accumulation: two backward calls per step, everything cleared together
    "accumulation_ok": """
        import torch
        from torch import nn
        model = nn.Linear(4, 4)
        temp = nn.Parameter(torch.tensor(0.5))
        opt = torch.optim.SGD([*model.parameters(), temp], lr=0.0)
        for step in range(6):
            (model(torch.randn(6, 4)) / temp).logsumexp(-1).mean().backward()
            if step % 2 == 1:
                opt.step()
                model.zero_grad()
                temp.grad = None
    """,
    # the scale is read through `.data` (line 7): the loss uses its value, never its graph
    "leaf_data": """
        import torch
        from torch import nn
        enc = nn.Linear(4, 4)
        scale = nn.Parameter(torch.tensor(2.0))
        opt = torch.optim.Adam([*enc.parameters(), scale], lr=1e-3)
        def logits(x):
            return enc(x) @ enc(x).t() * scale.data.exp()
        for step in range(3):
            loss = logits(torch.randn(5, 4)).logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("scale", scale.exp().item())
    """,
    "leaf_data_ok": """
        import torch
        from torch import nn
        enc = nn.Linear(4, 4)
        scale = nn.Parameter(torch.tensor(2.0))
        opt = torch.optim.Adam([*enc.parameters(), scale], lr=1e-3)
        def logits(x):
            return enc(x) @ enc(x).t() * scale.exp()
        for step in range(3):
            loss = logits(torch.randn(5, 4)).logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            scale.data.clamp_(max=4.0)
            print("scale", scale.data.exp().item())
    """,
    # a hook object (`register_forward_hook(self)`) stores into one slot (line 8) on both calls
    # of the module in one step: a premise of GW721, never a finding of its own
    "hook_object": """
        import torch
        from torch import nn
        class Tap:
            def __init__(self, module):
                self.seen = {}
                module.register_forward_hook(self)
            def __call__(self, module, inputs, output):
                self.seen["out"] = output
        head = nn.Linear(4, 4)
        tap = Tap(head)
        a, b = head(torch.randn(3, 4)), head(torch.randn(3, 4))
        (tap.seen["out"].pow(2).mean() + (a * b).mean()).backward()
    """,
    # the hook is a `functools.partial` (line 8) storing into the dict it was given (line 5):
    # `first` is the same dict, the second call replaces its entry, the loss compares the
    # second call's output with itself (zero, no gradient from the first call)
    "hook_partial": """
        import functools
        import torch
        from torch import nn
        def save(module, inputs, output, store, key):
            store[key] = output
        feats = {}
        head = nn.Linear(4, 4)
        head.register_forward_hook(functools.partial(save, store=feats, key="out"))
        a = head(torch.randn(3, 4))
        first = feats
        b = head(torch.randn(3, 4))
        (first["out"] - feats["out"].detach()).pow(2).mean().backward()
    """,
    # the first call's entries are copied before the second call: nothing is lost
    "hook_partial_ok": """
        import functools
        import torch
        from torch import nn
        def save(module, inputs, output, store, key):
            store[key] = output
        feats = {}
        head = nn.Linear(4, 4)
        head.register_forward_hook(functools.partial(save, store=feats, key="out"))
        a = head(torch.randn(3, 4))
        first = dict(feats)
        b = head(torch.randn(3, 4))
        (first["out"] - feats["out"].detach()).pow(2).mean().backward()
    """,
    # the head is made in the first forward (line 10), after the optimizer was built over the
    # encoder (line 13): backward fills the head's gradients, no optimizer holds them, the head
    # never moves
    "late_head": """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(4, 6)
                self.head = None
            def forward(self, x):
                if self.head is None:
                    self.head = nn.Linear(6, 2)
                return self.head(self.enc(x))
        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = net(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a dry forward before the optimizer: it holds the head too
    "late_head_ok": """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(4, 6)
                self.head = None
            def forward(self, x):
                if self.head is None:
                    self.head = nn.Linear(6, 2)
                return self.head(self.enc(x))
        net = Net()
        net(torch.randn(1, 4))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = net(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # attached late, then handed to the optimizer: it trains
    "late_head_added_ok": """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(4, 6))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net.add_module("head", nn.Linear(6, 2))
        opt.add_param_group({"params": net.head.parameters()})
        for step in range(3):
            loss = net(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the generated vector is loaded with `vector_to_parameters` (line 7), which sets each target
    # parameter's `.data`: the loss uses the target's leaves (they train), the generator that
    # the same optimizer holds gets no gradient
    "vector_loaded": """
        import torch
        from torch import nn
        target = nn.Linear(3, 1)
        gen = nn.Linear(2, 4)
        opt = torch.optim.SGD([*gen.parameters(), *target.parameters()], lr=0.1)
        for step in range(3):
            nn.utils.vector_to_parameters(gen(torch.ones(2)), target.parameters())
            loss = target(torch.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the generated vector is used functionally: the generator trains
    "vector_loaded_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        target = nn.Linear(3, 1)
        gen = nn.Linear(2, 4)
        opt = torch.optim.SGD([*gen.parameters(), *target.parameters()], lr=0.1)
        for step in range(3):
            flat = gen(torch.ones(2))
            loss = F.linear(torch.randn(5, 3), flat[:3].view(1, 3), flat[3:]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}

# raises at the backward; the static engine names the line the fix changes
RAISING: Dict[str, str] = {
    # a helper returns one loss per sample (line 5); `loss.backward()` (line 10) raises
    "per_sample_helper": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def per_sample(pred, y):
            return F.mse_loss(pred, y, reduction="none").sum(dim=1)
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 3)
        loss = per_sample(model(x), y)
        loss.backward()
    """,
    # a helper freezes the critic the step trains (line 8); `loss.backward()` (line 10) raises
    "freeze_helper": """
        import torch
        from torch import nn
        def set_requires_grad(net, flag):
            for p in net.parameters():
                p.requires_grad = flag
        gen, critic = nn.Linear(4, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD(critic.parameters(), lr=0.1)
        set_requires_grad(critic, False)
        loss = critic(gen(torch.randn(3, 4)).detach()).mean()
        loss.backward()
        opt.step()
    """,
}

# a non-finite gradient the run sees first at one op (the division of line 8, nearest the loss)
# while the static engine names a singular op below it on the same backward (the `sqrt` of line 7,
# at an exact zero): the run's finding is shown at the static line. The twin keeps the square
# root's argument away from zero on both branches: the gradient is finite (-0).
NONFINITE: Dict[str, str] = {
    "sqrt_under_where": """
        import torch
        from torch import nn
        w = nn.Parameter(torch.zeros(3))
        def sinc_norm(w):
            t2 = (w * w).sum()
            near = t2 < 1e-8
            t = torch.sqrt(t2)
            return torch.where(near, 1 - t2 / 6, torch.sin(t) / t)
        sinc_norm(w).backward()
    """,
    "sqrt_under_where_ok": """
        import torch
        from torch import nn
        w = nn.Parameter(torch.zeros(3))
        def sinc_norm(w):
            t2 = (w * w).sum()
            near = t2 < 1e-8
            t = torch.sqrt(torch.where(near, torch.ones_like(t2), t2))
            return torch.where(near, 1 - t2 / 6, torch.sin(t) / t)
        sinc_norm(w).backward()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("held")), static=False)


@pytest.fixture(scope="module")
def raising(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(RAISING, tmp_path_factory.mktemp("raising")), static=True)


@pytest.fixture(scope="module")
def nonfinite(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(NONFINITE, tmp_path_factory.mktemp("nonfinite")), static=True)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_parameter_replaced_after_the_optimizer_was_built(runs):
    f = _one(runs["rewrap"], "GW719")
    assert f.row == 4 and "`0.weight`" in f.message and "new `nn.Parameter`" in f.message
    assert site_rows(f, "optimizer") == [6] and site_rows(f, "step") == [14]


def test_zeroing_call_that_misses_a_tensor_the_optimizer_steps(runs):
    f = _one(runs["partial_zero"], "GW725")
    assert f.row == 8 and "a tensor of shape []" in f.message and site_rows(f, "step") == [10]


def test_parameter_read_through_data_into_the_loss(runs):
    f = _one(runs["leaf_data"], "GW719")
    assert f.row == 7 and ".data" in f.message  # the read, not the logging `.item()` of line 13


@pytest.mark.parametrize("name,cause,backward,code", [("per_sample_helper", 5, 10, "GW702"),
                                                       ("freeze_helper", 8, 10, "GW701")])
def test_raise_is_shown_where_the_static_engine_puts_its_cause(raising, name, cause, backward, code):
    result = raising[name]
    f = _one(result, code)
    assert f.row == cause and f.backward_site is not None and f.backward_site.row == backward
    [s] = [s for s in result.findings if s.source == "static" and s.code == code]
    assert s.status == "confirmed" and s.row == cause and s.runtime is f


def test_hook_object_overwriting_its_slot_is_a_premise(runs):
    result = runs["hook_object"]
    assert result.runtime_findings == []
    [p] = [p for p in result.premises if p.code == "GW721"]
    assert p.row == 8 and sorted(s.row for k, s in p.sites() if k == "call") == [11, 11]


def test_partial_hook_overwriting_its_slot_is_a_premise(runs):
    """A hook given as ``functools.partial(fn, store=...)`` is watched like a plain function."""
    result = runs["hook_partial"]
    assert result.runtime_findings == []
    [p] = [p for p in result.premises if p.code == "GW721"]
    assert p.row == 5 and sorted(s.row for k, s in p.sites() if k == "call") == [9, 11]
    assert [p for p in runs["hook_partial_ok"].premises if p.code == "GW721"] == []


def test_nonfinite_gradient_is_shown_at_the_static_singular_op_below(nonfinite):
    result = nonfinite["sqrt_under_where"]
    f = _one(result, "GW720")
    assert f.row == 7 and f.backward_site is not None and f.backward_site.row == 9
    assert site_rows(f, "note") == [8]  # the division the run saw first, kept as a note
    [s] = [s for s in result.findings if s.source == "static" and s.code == "GW720"]
    assert s.status == "confirmed" and s.row == 7 and s.runtime is f
    ok = nonfinite["sqrt_under_where_ok"]
    assert ok.status == "ok" and ok.runtime_findings == []
    assert [s.status for s in ok.findings if s.source == "static"] == []


def test_module_attached_after_the_optimizer_was_built(runs):
    f = _one(runs["late_head"], "GW719")
    assert f.row == 10 and "`head`" in f.message and "`head.weight`" in f.message
    assert site_rows(f, "optimizer") == [13] and site_rows(f, "step") == [18]


def test_parameters_loaded_from_a_generated_vector_through_data(runs):
    f = _one(runs["vector_loaded"], "GW719")
    # named as the program wrote it: the library call, and how it cuts
    assert f.row == 7 and "(`vector_to_parameters(...)`, through .data)" in f.message
    assert site_rows(f, "step") == [11]

