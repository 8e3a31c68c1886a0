"""The runtime bridge widened before batch 15 (issue 24): kinds a held-back batch is likely to hold
that the run proves without knowing what the program meant, each a program of the kind with a
correct twin on which the run finds nothing:

- a tensor that requires grad kept on a module as a buffer (``register_buffer``) or as a plain
  attribute set in ``__init__``, not an ``nn.Parameter``: ``parameters()`` never yields it, backward
  gives it a gradient at every step and it keeps the values it was stored with; GW604 at the store
  (a perturbation the program steps by hand, a buffer that does not require grad, a Parameter, are
  not this);
- an ``nn.Parameter`` made in ``forward`` at every call (a new leaf per step that no optimizer holds):
  GW719 at the ``nn.Parameter(...)`` call (one made in ``__init__`` is not this);
- ``clip_grad_norm_(..., max_norm=0)`` / ``clip_grad_value_(..., 0)``: every gradient set to zero
  before the step, GW743 at the call (a bound that clips, or no clipping, is not this);
- a gradient hook that returns zeros, on a parameter or on an activation: the parameters it covers
  get an all-zero gradient at every step, GW742 at the ``register_hook`` (a hook that scales, or a
  reversal coefficient that starts at 0 and grows, is not this);
- ``opt.step()`` above ``loss.backward()`` in the iteration, with ``zero_grad()`` first: GW740 at the
  step (the zeroing call between a backward and its step, ``backward(); zero_grad(); step()``, stays
  shown at the zeroing call);
- a step decay to exactly 0 (``StepLR(..., gamma=0)``): the rate is 0 from the first decay to the
  end of the run, GW744 at the scheduler (a decay by 0.5, a cosine schedule to 0 at its last step,
  are not this);
- a ``GradScaler`` that unscales gradients its ``scale()`` never multiplied (``scaler.scale(loss)``
  computed, ``loss.backward()`` called): GW736 at the backward (a scaled loss divided for
  accumulation, with ``unscale_`` before clipping, is not this).

Codes: GW742-GW744 are batch 15's static rules for the same hazards, GW736 is run only.

The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # the gain is a buffer that requires grad: its .grad is filled at every step, SGD never holds it,
    # it stays at ones. GW604 at line 8
    "buffer_requires_grad": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Scaler(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)
                self.register_buffer("gain", torch.ones(d, requires_grad=True))
            def forward(self, x):
                return self.fc(x) * self.gain
        model = Scaler(4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a plain tensor attribute set in __init__ with requires_grad=True: the same. GW604 at line 8
    "attribute_requires_grad": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Temp(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.log_t = torch.zeros(1, requires_grad=True)
            def forward(self, x):
                return self.fc(x) / self.log_t.exp()
        model = Temp()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for step in range(3):
            x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a Parameter (trained), a buffer that does not require grad (a running statistic), and a
    # perturbation that requires grad and is stepped by hand (adversarial training): all correct
    "tensor_attributes_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.gain = nn.Parameter(torch.ones(4))
                self.register_buffer("mean", torch.zeros(4))
                self.delta = torch.zeros(4, requires_grad=True)
            def forward(self, x):
                with torch.no_grad():
                    self.mean.mul_(0.9).add_(0.1 * x.mean(0))
                return self.fc(x + self.delta) * self.gain
        model = Model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            with torch.no_grad():
                model.delta += 0.01 * model.delta.grad.sign()
                model.delta.grad = None
            opt.step()
    """,
    # a new Parameter at every forward: each gets a gradient, none is held or kept. GW719 at line 9
    "parameter_per_call": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Head(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)
            def forward(self, x):
                scale = nn.Parameter(torch.ones(x.shape[1]))
                return self.fc(x) * scale
        model = Head(4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = (model(x) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # made once in __init__ (held), and a lazily built layer attached on the first call with the
    # optimizer built after it
    "parameter_per_call_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Head(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)
                self.scale = nn.Parameter(torch.ones(d))
                self.out = None
            def forward(self, x):
                if self.out is None:
                    self.out = nn.Linear(x.shape[1], 1)
                return self.out(self.fc(x) * self.scale)
        model = Head(4)
        model(torch.randn(2, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = (model(x) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # max_norm=0 scales every gradient by 0: the model never moves. GW743 at line 11
    "clip_norm_zero": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.0)
            opt.step()
    """,
    # clip_value=0 clamps every gradient into [0, 0]. GW743 at line 11
    "clip_value_zero": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_value_(model.parameters(), 0)
            opt.step()
    """,
    # clipping with bounds that clip (a tiny norm, a value of 1e-3): gradients shrink, stay non-zero
    "clip_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1e-3)
            nn.utils.clip_grad_value_(model.parameters(), 1e-3)
            opt.step()
    """,
    # scale() is called but the unscaled loss is backwarded: step divides by 1024. GW736 at line 12
    "scaler_unscaled": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        for step in range(3):
            x = torch.randn(8, 4)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            scaled = scaler.scale(loss)
            loss.backward()
            scaler.step(opt)
            scaler.update()
    """,
    # the scaled loss, divided for accumulation, unscaled before clipping: correct
    "scaler_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        for step in range(3):
            opt.zero_grad()
            for micro in range(2):
                x = torch.randn(8, 4)
                loss = model(x).pow(2).mean()
                (scaler.scale(loss) / 2).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
    """,
    # a debugging hook left on the embedding: its .grad is all zeros at every step. GW742 at line 9
    "hook_zero_param": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.fc = nn.Linear(4, 1)
                self.emb.weight.register_hook(lambda g: torch.zeros_like(g))
            def forward(self, t):
                return self.fc(self.emb(t).mean(1))
        model = Bag()
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for step in range(3):
            t = torch.randint(0, 10, (8, 3))
            loss = model(t).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same on an activation registered at every forward: the encoder's gradient is all zero.
    # GW742 at line 9
    "hook_zero_activation": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        enc = nn.Linear(4, 8)
        dec = nn.Linear(8, 1)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(3):
            h = torch.tanh(enc(torch.randn(8, 4)))
            h.register_hook(lambda g: g * 0)
            loss = dec(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a hook that scales, a gradient-reversal coefficient that starts at 0 and grows: correct
    "hook_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        enc = nn.Linear(4, 8)
        dec = nn.Linear(8, 1)
        enc.weight.register_hook(lambda g: g * 0.1)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(3):
            lam = step / 2
            h = torch.tanh(enc(torch.randn(8, 4)))
            h.register_hook(lambda g, lam=lam: -lam * g)
            loss = dec(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # gamma=0: the rate is 0 from the first decay on. GW744 at line 6
    "step_decay_zero": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.0)
        for epoch in range(4):
            for _ in range(2):
                loss = model(torch.randn(8, 4)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            sched.step()
    """,
    # a decay by 0.5, and a cosine schedule that reaches 0 at its last step only: correct
    "step_decay_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        opt2 = torch.optim.SGD(nn.Linear(4, 1).parameters(), lr=0.1)
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)
        for epoch in range(4):
            for _ in range(2):
                loss = model(torch.randn(8, 4)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            sched.step()
            cos.step()
    """,
    # the step runs before the backward of its own loss: each step finds the previous backward's
    # gradients cleared by zero_grad. GW740 at the step, line 8 (backward 9, zeroing 6)
    "step_before_backward": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        def train(model, opt, batches):
            for x in batches:
                opt.zero_grad()
                loss = model(x).pow(2).mean()
                opt.step()
                loss.backward()
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        train(model, opt, [torch.randn(8, 4) for _ in range(3)])
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch15")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


@pytest.mark.parametrize("name,what", [("buffer_requires_grad", "`self.gain`"), ("attribute_requires_grad", "`self.log_t`")])
def test_a_tensor_attribute_that_requires_grad_is_not_a_parameter(runs, name, what):
    f = _one(runs[name], "GW604")
    assert f.row == 8 and f.message.startswith(what) and "not an `nn.Parameter`" in f.message
    assert site_rows(f, "optimizer") == [12] and site_rows(f, "step")


def test_a_parameter_made_at_every_call(runs):
    f = _one(runs["parameter_per_call"], "GW719")
    assert f.row == 9 and "at every call of `Head.forward`" in f.message and site_rows(f, "optimizer") == [12]


@pytest.mark.parametrize("name,fn", [("clip_norm_zero", "`clip_grad_norm_`"), ("clip_value_zero", "`clip_grad_value_`")])
def test_clipping_with_a_bound_of_zero(runs, name, fn):
    f = _one(runs[name], "GW743")
    assert f.row == 11 and f.message.startswith(fn) and "exactly zero" in f.message
    assert site_rows(f, "backward") == [10]


def test_a_scaler_unscales_gradients_it_never_scaled(runs):
    f = _one(runs["scaler_unscaled"], "GW736")
    assert f.row == 12 and "divided by its scale (1024)" in f.message and site_rows(f, "step") == [13]


@pytest.mark.parametrize("name,row,what", [("hook_zero_param", 9, "`emb.weight`"), ("hook_zero_activation", 9, "`weight`")])
def test_a_gradient_hook_that_returns_zeros(runs, name, row, what):
    f = _one(runs[name], "GW742")
    assert f.row == row and "returns zeros at every backward" in f.message and what in f.message
    assert site_rows(f, "optimizer")


def test_a_step_decay_to_zero(runs):
    f = _one(runs["step_decay_zero"], "GW744")
    assert f.row == 6 and "StepLR" in f.message and "`gamma=0`" in f.message and "from its step 3" in f.message
    assert site_rows(f, "optimizer") == [5]


def test_the_step_before_the_backward_of_its_iteration(runs):
    f = _one(runs["step_before_backward"], "GW740")
    assert f.row == 8 and "runs before the backward of its own loss (line 9)" in f.message
    assert site_rows(f, "note") == [6] and 9 in site_rows(f, "backward")
