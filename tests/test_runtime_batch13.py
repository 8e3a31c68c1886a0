"""The runtime bridge on what batch 12 left and the detectors widened to the kind (issue 24,
before and after batch 13), each a program of the kind with a correct twin on which the run finds
nothing:

- a parameter written in place under ``no_grad`` by an update routine (a hand-written weight
  decay) that the function running the backward called between the forward and the backward:
  GW501 at that call (the line to move), as the static engine gives it, the write a related site;
- ``sample()`` of a distribution whose constructor stores a function of the tensors it was given
  (``MultivariateNormal`` keeps ``loc.expand(...)``, ``RelaxedOneHotCategorical`` normalised
  logits): judged against the given tensors, GW722 at the draw;
- layers kept in a plain ``list``/``dict`` attribute that ``nn.Module`` never registers, built by
  the function that stored it: given gradients by backward, held by no optimizer while the owner's
  other parameters are: GW719 at the store (a module made elsewhere and hidden in a list on purpose,
  a teacher, is not this);
- ``opt.zero_grad()`` between ``backward()`` and ``step()``: the step finds no gradient, GW740 at
  the zeroing call (clearing after the step, and a GAN's other optimizer cleared before this one's
  step, are not this);
- a state detached at every step of one forward and fed back to the line that made it
  (``h = cell(x[:, t], h.detach())``), one backward after the loop: GW733 at the detach (truncated
  BPTT between chunks, after their backward, and a refinement whose every step is in the loss are
  not this);
- a custom backward that returns a tensor for an input that was a number (torch raises once the
  backward returned): GW309 at its ``return``, as the static engine gives it (the chain-rule probe
  no longer judges a gradient that no input needs, which named it GW709).

The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # the decay bumps the version of the weight the second `Linear` saved at line 10: the backward
    # at 13 raises. The call at line 12 is what moves below the backward. GW501 at 12, the write at 6
    "decay_helper": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        def decay(model, wd):
            for p in model.parameters():
                p.mul_(1 - wd)
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            with torch.no_grad():
                decay(model, 0.01)
            loss.backward()
            opt.step()
            opt.zero_grad()
    """,
    # the decay after the backward: nothing saved is written
    "decay_helper_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        def decay(model, wd):
            for p in model.parameters():
                p.mul_(1 - wd)
        model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            with torch.no_grad():
                decay(model, 0.01)
            opt.step()
            opt.zero_grad()
    """,
    # MultivariateNormal stores loc.expand(...): the loss reaches `mu` through its penalty, never
    # through the draw (enc.weight's gradient holds the penalty's only). GW722 at line 10
    "mvn_sample": """
        import torch
        from torch import nn
        from torch.distributions import MultivariateNormal
        torch.manual_seed(0)
        enc, dec = nn.Linear(4, 2), nn.Linear(2, 4)
        opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-2)
        x = torch.randn(8, 4)
        for step in range(3):
            mu = enc(x)
            z = MultivariateNormal(mu, torch.eye(2)).sample()
            loss = (dec(z) - x).pow(2).mean() + mu.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "mvn_sample_ok": """
        import torch
        from torch import nn
        from torch.distributions import MultivariateNormal
        torch.manual_seed(0)
        enc, dec = nn.Linear(4, 2), nn.Linear(2, 4)
        opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-2)
        x = torch.randn(8, 4)
        for step in range(3):
            mu = enc(x)
            z = MultivariateNormal(mu, torch.eye(2)).rsample()
            loss = (dec(z) - x).pow(2).mean() + mu.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # RelaxedOneHotCategorical normalises the logits it is given (a new node): same kind, GW722 at line 10
    "relaxed_sample": """
        import torch
        from torch import nn
        from torch.distributions import RelaxedOneHotCategorical
        torch.manual_seed(0)
        enc, dec = nn.Linear(4, 3), nn.Linear(3, 4)
        opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-2)
        x = torch.randn(8, 4)
        for step in range(3):
            logits = enc(x)
            z = RelaxedOneHotCategorical(torch.tensor(0.5), logits=logits).sample()
            loss = (dec(z) - x).pow(2).mean() + logits.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "relaxed_sample_ok": """
        import torch
        from torch import nn
        from torch.distributions import RelaxedOneHotCategorical
        torch.manual_seed(0)
        enc, dec = nn.Linear(4, 3), nn.Linear(3, 4)
        opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=1e-2)
        x = torch.randn(8, 4)
        for step in range(3):
            logits = enc(x)
            z = RelaxedOneHotCategorical(torch.tensor(0.5), logits=logits).rsample()
            loss = (dec(z) - x).pow(2).mean() + logits.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `model.parameters()` yields inp and out only: the blocks get gradients every backward and
    # keep their initial weights. GW719 at the store, line 8
    "plain_list": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(4, 8)
                self.blocks = [nn.Linear(8, 8) for _ in range(2)]
                self.out = nn.Linear(8, 1)
            def forward(self, x):
                h = self.inp(x).relu()
                for b in self.blocks:
                    h = b(h).relu()
                return self.out(h)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            loss = (model(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "plain_list_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(4, 8)
                self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
                self.out = nn.Linear(8, 1)
            def forward(self, x):
                h = self.inp(x).relu()
                for b in self.blocks:
                    h = b(h).relu()
                return self.out(h)
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            loss = (model(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # an empty dict filled with heads in __init__: the same kind, GW719 at the store, line 8
    "plain_dict": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Net(nn.Module):
            def __init__(self, tasks):
                super().__init__()
                self.trunk = nn.Linear(4, 8)
                self.heads = {}
                for t in tasks:
                    self.heads[t] = nn.Linear(8, 1)
            def forward(self, x):
                h = self.trunk(x).relu()
                return sum(head(h) for head in self.heads.values())
        model = Net(["a", "b"])
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            loss = (model(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a teacher built elsewhere, kept out of parameters() on purpose (its gradients are wasted, not
    # meant to train): not this
    "hidden_teacher_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        class Student(nn.Module):
            def __init__(self, teacher):
                super().__init__()
                self.net = nn.Linear(4, 2)
                self._teacher = [teacher]
            def forward(self, x):
                return self.net(x), self._teacher[0](x)
        model = Student(nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(16, 4)
        for step in range(3):
            s, t = model(x)
            loss = (s - t).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # zero_grad (set_to_none) after the backward: every step finds no gradient and the weights never
    # move. GW740 at line 9, the backward at 8, the step at 10
    "cleared": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            opt.zero_grad()
            opt.step()
    """,
    # cleared after the step
    "cleared_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for step in range(3):
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
    """,
    # a GAN: the discriminator's backward also fills G's gradients, which G's optimizer clears before
    # D's step and G's own backward: D's step applies D's gradients
    "gan_cleared_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        G, D = nn.Linear(2, 3), nn.Linear(3, 1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        real = torch.randn(8, 3)
        for step in range(3):
            opt_d.zero_grad()
            d_loss = D(G(torch.randn(8, 2))).mean() - D(real).mean()
            d_loss.backward()
            opt_g.zero_grad()
            opt_d.step()
            g_loss = -D(G(torch.randn(8, 2))).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
    """,
    # the state detached at every step of one sequence, one loss on the last state: backward runs
    # through the last step only (x.grad[:, 0] is zero). GW733 at the detach, line 9
    "state_detached": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        lin, head = nn.Linear(7, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD([*lin.parameters(), *head.parameters()], lr=0.1)
        for step in range(2):
            x, h = torch.randn(2, 5, 3), torch.zeros(2, 4)
            for t in range(5):
                h = torch.tanh(lin(torch.cat([x[:, t], h.detach()], 1)))
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "state_detached_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        lin, head = nn.Linear(7, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD([*lin.parameters(), *head.parameters()], lr=0.1)
        for step in range(2):
            x, h = torch.randn(2, 5, 3), torch.zeros(2, 4)
            for t in range(5):
                h = torch.tanh(lin(torch.cat([x[:, t], h], 1)))
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # truncated BPTT: the state is detached after the backward of the chunk that used its graph
    "tbptt_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        cell, head = nn.GRUCell(3, 4), nn.Linear(4, 1)
        opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
        h = torch.zeros(2, 4)
        for chunk in range(3):
            x = torch.randn(2, 4, 3)
            h = h.detach()
            for t in range(4):
                h = cell(x[:, t], h)
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # iterative refinement with a sequence loss (RAFT): each step's estimate is detached before the
    # next update, and every estimate is a term of the loss, so every step's graph is backwarded
    "refine_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        net = nn.Linear(3, 3)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(2):
            target, y, preds = torch.randn(4, 3), torch.zeros(4, 3), []
            for i in range(3):
                y = y.detach()
                y = y + net(y)
                preds.append(y)
            loss = sum((p - target).pow(2).mean() for p in preds)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a straight-through estimator: the copy is taken in by the run of the line that made it
    "straight_through_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        enc, dec = nn.Linear(4, 4), nn.Linear(4, 4)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(6, 4)
            z = enc(x)
            q = z + (z.round() - z).detach()
            loss = (dec(q) - x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a gradient-reversal Function whose backward returns a tensor for its float coefficient: the
    # engine raises after the backward returned ("... was not a Variable"). GW309 at the return, line 10
    # (the chain-rule probe does not judge a gradient no input needs)
    "grad_for_number": """
        import torch
        from torch import nn
        class Reverse(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lam):
                ctx.lam = lam
                return x.view_as(x)
            @staticmethod
            def backward(ctx, g):
                return -ctx.lam * g, g.new_tensor(ctx.lam)
        net = nn.Linear(3, 2)
        loss = Reverse.apply(net(torch.randn(4, 3)), 0.5).pow(2).sum()
        loss.backward()
    """,
    "grad_for_number_ok": """
        import torch
        from torch import nn
        class Reverse(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lam):
                ctx.lam = lam
                return x.view_as(x)
            @staticmethod
            def backward(ctx, g):
                return -ctx.lam * g, None
        net = nn.Linear(3, 2)
        loss = Reverse.apply(net(torch.randn(4, 3)), 0.5).pow(2).sum()
        loss.backward()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch13")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_update_routine_between_forward_and_backward_is_shown_at_its_call(runs):
    result = runs["decay_helper"]
    assert result.status == "failed"
    f = _one(result, "GW501")
    assert f.row == 12 and "decay()" in f.message and site_rows(f, "write") == [12, 6]
    assert site_rows(f, "backward") == [13]


@pytest.mark.parametrize("name,row", [("mvn_sample", 10), ("relaxed_sample", 10)])
def test_sample_of_a_distribution_that_stores_a_function_of_its_arguments(runs, name, row):
    f = _one(runs[name], "GW722")
    assert f.row == row and "rsample()" in f.message and f.backward_site.row == 13


def test_layers_in_a_plain_list_attribute(runs):
    f = _one(runs["plain_list"], "GW719")
    assert f.row == 8 and "plain Python list" in f.message and "`blocks[0].weight`" in f.message
    assert "nn.ModuleList" in f.message and site_rows(f, "step") == [22] and site_rows(f, "optimizer") == [16]


def test_layers_in_a_plain_dict_attribute_filled_later(runs):
    f = _one(runs["plain_dict"], "GW719")
    assert f.row == 8 and "nn.ModuleDict" in f.message and "`heads['a'].weight`" in f.message


def test_gradients_cleared_between_backward_and_step(runs):
    f = _one(runs["cleared"], "GW740")
    assert f.row == 10 and site_rows(f, "backward") == [9] and site_rows(f, "step") == [11]


def test_state_detached_at_every_step_of_one_forward(runs):
    f = _one(runs["state_detached"], "GW733")
    assert f.row == 9 and "line 9" in f.message and f.backward_site.row == 12


def test_gradient_for_a_number_input_is_shown_at_the_return(runs):
    result = runs["grad_for_number"]
    assert result.status == "failed"
    f = _one(result, "GW309")
    assert f.row == 10 and f.severity == "error"
    assert [g.code for g in result.runtime_findings] == ["GW309"]  # no GW709 from the probe
