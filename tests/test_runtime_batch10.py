"""The runtime bridge's detectors widened from the spelling their first cases used to the kind
(issue 24, the generality pass before batch 10), each written as a program of the kind with a
correct twin on which the run finds nothing:

- a parameter given to the optimizer after it was built (``add_param_group``, a group's list
  edited) is followed like one given at construction (GW719 when it is read only through a cut);
- ``torch.tensor(t)`` / ``x.new_tensor(t)`` of a graph tensor is a cut, as ``.detach()`` is (the
  parameters it was computed from never train: GW719 at that call);
- a module whose ``self.training`` branch sits in a helper method that ``forward`` calls (not in
  ``forward`` itself) is watched in eval mode like one that branches in ``forward`` (GW718 at the
  switch when every one of its parameters then gets an exactly zero gradient).

The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # the prototypes join the optimizer through add_param_group (line 7) and are read only as
    # `proto.detach()` (line 10): SGD steps them with `.grad` None, they never move
    "late_group": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        proto = nn.Parameter(torch.randn(3, 4))
        opt = torch.optim.SGD(enc.parameters(), lr=0.1)
        opt.add_param_group({"params": [proto], "lr": 0.01})
        for step in range(3):
            z = enc(torch.randn(5, 4))
            logits = -torch.cdist(z, proto.detach())
            loss = F.cross_entropy(logits, torch.randint(0, 3, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "late_group_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        proto = nn.Parameter(torch.randn(3, 4))
        opt = torch.optim.SGD(enc.parameters(), lr=0.1)
        opt.add_param_group({"params": [proto], "lr": 0.01})
        for step in range(3):
            z = enc(torch.randn(5, 4))
            logits = -torch.cdist(z, proto)
            loss = F.cross_entropy(logits, torch.randint(0, 3, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same, the parameter appended to a group's list after construction (line 7), read as
    # `proto.data` (line 10)
    "edited_group": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        proto = nn.Parameter(torch.randn(3, 4))
        opt = torch.optim.Adam(enc.parameters(), lr=0.1)
        opt.param_groups[0]["params"].append(proto)
        for step in range(3):
            z = enc(torch.randn(5, 4))
            loss = F.cross_entropy(-torch.cdist(z, proto.data), torch.randint(0, 3, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the generator's output copied into a new tensor (line 8): torch warns ("To copy construct
    # from a tensor ...") and the copy has no graph; the generator gets no gradient at any step
    "rewrapped": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        gen, net = nn.Linear(4, 4), nn.Linear(4, 2)
        opt = torch.optim.SGD([*gen.parameters(), *net.parameters()], lr=0.1)
        for step in range(3):
            x = torch.randn(5, 4)
            shift = torch.tensor(gen(x))
            loss = F.cross_entropy(net(x + shift), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "rewrapped_new_tensor": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        gen, net = nn.Linear(4, 4), nn.Linear(4, 2)
        opt = torch.optim.SGD([*gen.parameters(), *net.parameters()], lr=0.1)
        for step in range(3):
            x = torch.randn(5, 4)
            shift = x.new_tensor(gen(x))
            loss = F.cross_entropy(net(x + shift), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "rewrapped_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        gen, net = nn.Linear(4, 4), nn.Linear(4, 2)
        opt = torch.optim.SGD([*gen.parameters(), *net.parameters()], lr=0.1)
        for step in range(3):
            x = torch.randn(5, 4)
            shift = gen(x)
            loss = F.cross_entropy(net(x + shift), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a target copied with torch.tensor from a network no optimizer holds: meant, no finding
    "rewrapped_target_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        teacher, net = nn.Linear(4, 2), nn.Linear(4, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(5, 4)
            target = torch.tensor(teacher(x))
            loss = F.mse_loss(net(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the quantizer branches on `self.training` in a helper forward calls (line 11); the warm-start
    # helper returns the model switched off (line 17): every step runs `round` without its
    # straight-through estimator, and `scale`, `fc.weight`, `fc.bias` get exactly zero gradients
    "eval_helper": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.scale = nn.Parameter(torch.ones(4))
            def _quantize(self, x):
                y = x * self.scale
                if self.training:
                    return y + (torch.round(y) - y).detach()
                return torch.round(y)
            def forward(self, x):
                return self._quantize(self.fc(x))
        def warm_start(model):
            return model.train(False)
        model = warm_start(Quant())
        head = nn.Linear(4, 2)
        opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(head(model(torch.randn(5, 4))), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "eval_helper_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.scale = nn.Parameter(torch.ones(4))
            def _quantize(self, x):
                y = x * self.scale
                if self.training:
                    return y + (torch.round(y) - y).detach()
                return torch.round(y)
            def forward(self, x):
                return self._quantize(self.fc(x))
        def warm_start(model):
            return model.train(True)
        model = warm_start(Quant())
        head = nn.Linear(4, 2)
        opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(head(model(torch.randn(5, 4))), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch10")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_parameter_added_with_add_param_group_is_followed(runs):
    f = _one(runs["late_group"], "GW719")
    assert f.row == 10 and ".detach()" in f.message and site_rows(f, "step") == [14]


def test_parameter_appended_to_a_group_is_followed(runs):
    f = _one(runs["edited_group"], "GW719")
    assert f.row == 10 and ".data" in f.message


@pytest.mark.parametrize("name,call", [("rewrapped", "tensor"), ("rewrapped_new_tensor", "new_tensor")])
def test_values_copied_into_a_new_tensor_are_a_cut(runs, name, call):
    f = _one(runs[name], "GW719")
    assert f.row == 8 and "`%s(...)`" % call in f.message and "`weight`, `bias`" in f.message


def test_training_branch_in_a_helper_method_is_watched_in_eval_mode(runs):
    result = runs["eval_helper"]
    assert result.status == "ok", result.message
    [f] = [f for f in result.runtime_findings if f.code == "GW718" and f.row == 17]
    assert "every one of its parameters gets an all-zero gradient" in f.message
    assert site_rows(f, "step") == [25]
