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
  before the step, GW735 at the call (a bound that clips, or no clipping, is not this);
- a ``GradScaler`` that unscales gradients its ``scale()`` never multiplied (``scaler.scale(loss)``
  computed, ``loss.backward()`` called): GW736 at the backward (a scaled loss divided for
  accumulation, with ``unscale_`` before clipping, is not this).

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
    # max_norm=0 scales every gradient by 0: the model never moves. GW735 at line 11
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
    # clip_value=0 clamps every gradient into [0, 0]. GW735 at line 11
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
    f = _one(runs[name], "GW735")
    assert f.row == 11 and f.message.startswith(fn) and "exactly zero" in f.message
    assert site_rows(f, "backward") == [10]


def test_a_scaler_unscales_gradients_it_never_scaled(runs):
    f = _one(runs["scaler_unscaled"], "GW736")
    assert f.row == 12 and "divided by its scale (1024)" in f.message and site_rows(f, "step") == [13]
