"""The runtime bridge on what batches 10 and 11 left, and the detectors widened to the kind
(issue 24, before batch 12), each a program of the kind with a correct twin on which the run finds
nothing:

- a singular op that torch builds from several nodes (``2.0 / x`` is ``reciprocal(x) * 2.0``): the
  nodes the call made below its output's are watched too, so a non-finite derivative hidden by a
  ``clamp`` of the result (its zero gradient where it clips, 0 x inf = NaN) is GW720 at the call;
- ``m.training = False`` stored by the program (not ``.eval()``/``.train(False)``) is a mode switch:
  a training step that then takes the module's eval branch is GW724 at the store;
- ``x.detach_()`` is a cut like ``x.detach()``: the parameters its graph reached, stepped without
  a gradient, are GW719 at that line;
- ``p.grad.zero_()`` written by the program (a loop over one module) is a zeroing call like
  ``p.grad = None``: GW725 when the optimizer also steps tensors it leaves accumulating;
- an optimizer rebuilt from any one-shot iterator (``itertools.chain``, ``islice``, a dict's value
  iterator, not only ``filter``/``map``/``zip``/``iter``/a generator) that an earlier one emptied:
  GW719;
- a module whose ``self.training`` is read in a function, lambda or comprehension defined in one of
  its methods (or in a property) is watched in eval mode like one whose method reads it;
- a parameter stored into a container (``nn.ParameterList.append``, ``nn.ParameterDict[key] = ...``)
  in ``forward`` after the optimizer was built over the module that holds the container: GW719 at
  the store, as for a module attribute;
- ``clip_grad_norm_`` given a one-shot iterator that an earlier consumer emptied (the optimizer built
  from the same ``model.parameters()`` generator, or a generator that finished) clips nothing while the
  parameters it was meant for have gradients: GW739 where the iterator was made (a
  ``parameters()``/``named_parameters()`` generator is named by the line that called it);
- ``torch.set_grad_enabled(False)`` called as a statement by the program and never switched back:
  the backward that then raises (its loss has no graph) is GW701 at the statement;
- a value drawn with ``sample()`` from a distribution built from tensors that require grad, used by
  a computation of the program's (not the distribution's own ``log_prob``) in a loss whose backward
  also reaches the distribution's parameters by another path: GW722 at the draw (``rsample()``);
- a freed graph whose stale tensor was returned by a function of the program memoised with
  ``functools.lru_cache``/``functools.cache`` is shown at the decorator (GW402), the read as a reuse.

The comments say what torch does (ground truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # inverse distances over pairs that include each anchor with itself (distance exactly 0): `2.0 / dist`
    # is inf there, `clamp_max` hides it in the forward, and its zero gradient meets the reciprocal's
    # infinite derivative (0 x inf = NaN) in the node *below* the one the call returns (`2.0 / x` is
    # `reciprocal(x) * 2.0`): `pts.grad` is NaN. GW720 at line 9
    "clamp_inv": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        pts = nn.Parameter(torch.randn(6, 2))
        opt = torch.optim.SGD([pts], lr=0.1)
        idx = torch.tensor([0, 2, 5])
        for step in range(2):
            dist = (pts.unsqueeze(1) - pts[idx].unsqueeze(0)).abs().sum(-1)
            inv = (2.0 / dist).clamp_max(50.0)
            loss = (inv / inv.sum(1, keepdim=True)).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the distance clamped before dividing: finite everywhere
    "clamp_inv_ok": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        pts = nn.Parameter(torch.randn(6, 2))
        opt = torch.optim.SGD([pts], lr=0.1)
        idx = torch.tensor([0, 2, 5])
        for step in range(2):
            dist = (pts.unsqueeze(1) - pts[idx].unsqueeze(0)).abs().sum(-1)
            inv = 2.0 / dist.clamp_min(0.04)
            loss = (inv / inv.sum(1, keepdim=True)).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a sanity pass switches the model off by storing its flag (line 16), not by `.eval()`, and never
    # restores it: every training step takes the eval branch, `aux` is never trained. GW724 at line 16
    "store_off": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(6, 8)
                self.out = nn.Linear(8, 3)
                self.aux = nn.Linear(8, 3)
            def forward(self, x):
                h = torch.relu(self.body(x))
                if self.training:
                    return self.out(h) + 0.3 * self.aux(h)
                return self.out(h)
        def sanity_pass(net, x):
            net.training = False
            with torch.no_grad():
                return net(x).shape
        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
        sanity_pass(net, x)
        for step in range(3):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same store, restored by a store before the training steps
    "store_off_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(6, 8)
                self.out = nn.Linear(8, 3)
                self.aux = nn.Linear(8, 3)
            def forward(self, x):
                h = torch.relu(self.body(x))
                if self.training:
                    return self.out(h) + 0.3 * self.aux(h)
                return self.out(h)
        def sanity_pass(net, x):
            was = net.training
            net.training = False
            with torch.no_grad():
                shape = net(x).shape
            net.training = was
            return shape
        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
        sanity_pass(net, x)
        for step in range(3):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the encoder's output detached in place (line 9): the encoder's parameters, which SGD steps, get no
    # gradient at any step. GW719 at line 9
    "detach_inplace": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        head = nn.Linear(4, 2)
        opt = torch.optim.SGD([*enc.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            z = enc(torch.randn(5, 4))
            z.detach_()
            loss = F.cross_entropy(head(z), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # gradients cleared by a hand-written loop of `p.grad.zero_()` over the network only (line 11): the
    # learnable `scale` SGD also steps accumulates its gradient over the steps. GW725 at line 11
    "zero_loop": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        net = nn.Linear(4, 2)
        scale = nn.Parameter(torch.ones(1))
        opt = torch.optim.SGD([*net.parameters(), scale], lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(5, 4)) * scale, torch.randint(0, 2, (5,)))
            for p in net.parameters():
                if p.grad is not None:
                    p.grad.zero_()
            loss.backward()
            opt.step()
    """,
    # the loop over every tensor the optimizer holds
    "zero_loop_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        net = nn.Linear(4, 2)
        scale = nn.Parameter(torch.ones(1))
        opt = torch.optim.SGD([*net.parameters(), scale], lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(5, 4)) * scale, torch.randint(0, 2, (5,)))
            for p in opt.param_groups[0]["params"]:
                if p.grad is not None:
                    p.grad.zero_()
            loss.backward()
            opt.step()
    """,
    # the same, with an encoder no optimizer holds (a frozen feature extractor): meant
    "detach_inplace_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        head = nn.Linear(4, 2)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for step in range(3):
            z = enc(torch.randn(5, 4))
            z.detach_()
            loss = F.cross_entropy(head(z), torch.randint(0, 2, (5,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a schedule rebuilds the optimizer each epoch from one `itertools.chain` (line 8): the second one
    # gets an empty backbone group, whose gradients no optimizer then applies. GW719 (where the iterator
    # was made cannot be read from a chain object: shown at the new optimizer, line 10)
    "chain_rebuilt": """
        import itertools
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        proj = nn.Linear(4, 4)
        head = nn.Linear(4, 2)
        backbone = itertools.chain(enc.parameters(), proj.parameters())
        for epoch in range(2):
            opt = torch.optim.SGD([{"params": backbone}, {"params": head.parameters(), "lr": 0.01}], lr=0.1 / (epoch + 1))
            for step in range(2):
                loss = F.cross_entropy(head(torch.relu(proj(enc(torch.randn(5, 4))))), torch.randint(0, 2, (5,)))
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
    # the chain made a list once
    "chain_rebuilt_ok": """
        import itertools
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc = nn.Linear(4, 4)
        proj = nn.Linear(4, 4)
        head = nn.Linear(4, 2)
        backbone = list(itertools.chain(enc.parameters(), proj.parameters()))
        for epoch in range(2):
            opt = torch.optim.SGD([{"params": backbone}, {"params": head.parameters(), "lr": 0.01}], lr=0.1 / (epoch + 1))
            for step in range(2):
                loss = F.cross_entropy(head(torch.relu(proj(enc(torch.randn(5, 4))))), torch.randint(0, 2, (5,)))
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
    # the module's `self.training` branch is read in a lambda defined in forward (line 10); the model is
    # switched off before training (line 14): every step rounds without the estimator and `fc` gets
    # exactly zero gradients. GW718 at the switch (line 14)
    "nested_branch": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                h = self.fc(x)
                snap = lambda t: t + (t.round() - t).detach() if self.training else t.round()
                return snap(h)
        net = nn.Sequential(Quant(), nn.Linear(4, 2))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net.eval()
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # switched on instead
    "nested_branch_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                h = self.fc(x)
                snap = lambda t: t + (t.round() - t).detach() if self.training else t.round()
                return snap(h)
        net = nn.Sequential(Quant(), nn.Linear(4, 2))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net.train()
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # prototypes appended to an `nn.ParameterList` in forward (line 11) after the optimizer was built:
    # backward gives them gradients, no optimizer holds them, they never move. GW719 at line 11
    "plist_late": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Protos(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(4, 3)
                self.protos = nn.ParameterList()
            def forward(self, x, n_cls):
                while len(self.protos) < n_cls:
                    self.protos.append(nn.Parameter(torch.randn(3)))
                return self.enc(x) @ torch.stack(list(self.protos)).T
        net = Protos()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(6, 4), 3), torch.randint(0, 3, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the prototypes made in __init__, before the optimizer
    "plist_late_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Protos(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(4, 3)
                self.protos = nn.ParameterList([nn.Parameter(torch.randn(3)) for _ in range(3)])
            def forward(self, x, n_cls):
                while len(self.protos) < n_cls:
                    self.protos.append(nn.Parameter(torch.randn(3)))
                return self.enc(x) @ torch.stack(list(self.protos)).T
        net = Protos()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(net(torch.randn(6, 4), 3), torch.randint(0, 3, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the optimizer is built from a generator expression (line 5), which it empties; clipping over the same
    # object (line 11) gets nothing (torch warns: an empty generator) and the step applies the gradients
    # unclipped. GW739 where the generator was made, the clipping call as a site
    "clip_consumed": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        trainable = (p for p in net.parameters() if p.requires_grad)
        opt = torch.optim.Adam(trainable, lr=1e-3)
        for step in range(3):
            loss = 100.0 * F.cross_entropy(net(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 0.5)
            opt.step()
    """,
    # a list, which both take whole
    "clip_consumed_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        trainable = [p for p in net.parameters() if p.requires_grad]
        opt = torch.optim.Adam(trainable, lr=1e-3)
        for step in range(3):
            loss = 100.0 * F.cross_entropy(net(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 0.5)
            opt.step()
    """,
    # clipping over a fresh generator that is empty because the module is frozen: nothing to clip, the
    # trained module clipped on the next line
    "clip_empty_ok": """
        import warnings
        import torch
        from torch import nn
        import torch.nn.functional as F
        net = nn.Linear(4, 2)
        frozen = nn.Linear(4, 4).requires_grad_(False)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(2):
            loss = F.cross_entropy(net(frozen(torch.randn(6, 4))), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_((p for p in frozen.parameters() if p.requires_grad), 1.0)
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
    """,
    # a scoring helper switches grad mode off with a statement (line 5) and returns with it off: the next
    # step's loss has no graph and its backward (line 13) raises. GW701 at the statement
    "grad_off_stmt": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def score(net, x):
            torch.autograd.set_grad_enabled(False)
            return net(x).softmax(-1).max(-1).values.mean().item()
        net = nn.Linear(4, 3)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        for step in range(3):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("confidence %.3f" % score(net, x))
    """,
    # the same switch as a `with` block: restored when the block exits
    "grad_off_stmt_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        def score(net, x):
            with torch.autograd.set_grad_enabled(False):
                return net(x).softmax(-1).max(-1).values.mean().item()
        net = nn.Linear(4, 3)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        for step in range(3):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("confidence %.3f" % score(net, x))
    """,
    # a stochastic actor scored by a (frozen) critic on `dist.sample()` (line 11): the critic term's gradient
    # never reaches the actor through the draw; the same loss reaches `log_std` through the entropy.
    # GW722 at the draw (the actor's weights, which nothing else trains, are also GW719 there)
    "actor_sample": """
        import torch
        from torch import nn
        from torch.distributions import Normal
        actor = nn.Linear(4, 2)
        log_std = nn.Parameter(torch.zeros(2))
        critic = nn.Linear(6, 1).requires_grad_(False)
        opt = torch.optim.Adam([*actor.parameters(), log_std], lr=1e-3)
        for step in range(3):
            s = torch.randn(8, 4)
            dist = Normal(actor(s), log_std.exp())
            a = dist.sample()
            loss = -critic(torch.cat([s, a], -1)).mean() - 0.01 * dist.entropy().sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # `rsample()`: the draw carries the graph
    "actor_sample_ok": """
        import torch
        from torch import nn
        from torch.distributions import Normal
        actor = nn.Linear(4, 2)
        log_std = nn.Parameter(torch.zeros(2))
        critic = nn.Linear(6, 1).requires_grad_(False)
        opt = torch.optim.Adam([*actor.parameters(), log_std], lr=1e-3)
        for step in range(3):
            s = torch.randn(8, 4)
            dist = Normal(actor(s), log_std.exp())
            a = dist.rsample()
            loss = -critic(torch.cat([s, a], -1)).mean() - 0.01 * dist.entropy().sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a critic trained on sampled actions by its own loss (which never touches the distribution), the actor
    # by `log_prob` of the same sample (REINFORCE): no loss differentiates through the draw
    "critic_on_samples_ok": """
        import torch
        from torch import nn
        from torch.distributions import Normal
        actor = nn.Linear(4, 2)
        log_std = nn.Parameter(torch.zeros(2))
        critic = nn.Linear(6, 1)
        opt_a = torch.optim.Adam([*actor.parameters(), log_std], lr=1e-3)
        opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3)
        for step in range(3):
            s = torch.randn(8, 4)
            dist = Normal(actor(s), log_std.exp())
            a = dist.sample()
            q = critic(torch.cat([s, a], -1)).squeeze(-1)
            critic_loss = (q - torch.randn(8)).pow(2).mean()
            opt_c.zero_grad()
            critic_loss.backward()
            opt_c.step()
            actor_loss = -(dist.log_prob(a).sum(-1) * q.detach()).mean()
            opt_a.zero_grad()
            actor_loss.backward()
            opt_a.step()
    """,
    # a table computed from a parameter, memoised with `functools.cache` (line 7): the second step's backward
    # runs into the graph the first one freed (it raises). GW402 at the decorator, the read as a reuse site
    "cached_table": """
        import functools
        import torch
        from torch import nn
        import torch.nn.functional as F
        emb = nn.Embedding(5, 4)
        head = nn.Linear(4, 5)
        @functools.cache
        def table():
            return torch.tanh(emb.weight)
        opt = torch.optim.SGD([*emb.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            idx = torch.randint(0, 5, (6,))
            loss = F.cross_entropy(head(table()[idx]), idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a memoised constant table (no graph): meant
    "cached_table_ok": """
        import functools
        import torch
        from torch import nn
        import torch.nn.functional as F
        emb = nn.Embedding(5, 4)
        head = nn.Linear(4, 5)
        @functools.cache
        def table():
            return torch.arange(5.0).unsqueeze(1) / 5.0
        opt = torch.optim.SGD([*emb.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            idx = torch.randint(0, 5, (6,))
            loss = F.cross_entropy(head(emb(idx) + table()[idx]), idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch12")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_singular_node_below_a_composite_call_hidden_by_a_clamp(runs):
    f = _one(runs["clamp_inv"], "GW720")
    assert f.row == 9 and "ReciprocalBackward0" in f.message and site_rows(f, "backward") == [12]


def test_training_flag_stored_by_the_program_is_a_mode_switch(runs):
    f = _one(runs["store_off"], "GW724")
    assert f.row == 16 and site_rows(f, "step") == [27]


def test_in_place_detach_is_a_cut(runs):
    f = _one(runs["detach_inplace"], "GW719")
    assert f.row == 9 and ".detach_()" in f.message and site_rows(f, "step") == [13]


def test_grad_zero_in_a_loop_is_a_zeroing_call(runs):
    f = _one(runs["zero_loop"], "GW725")
    assert f.row == 11 and site_rows(f, "step") == [13]


def test_optimizer_rebuilt_from_an_emptied_chain(runs):
    f = _one(runs["chain_rebuilt"], "GW719")
    assert f.row == 10 and "one-shot iterator" in f.message and site_rows(f, "step") == [15]


def test_training_flag_read_in_a_nested_function_is_watched(runs):
    result = runs["nested_branch"]
    [f] = [f for f in result.runtime_findings if f.code == "GW718" and f.row == 14]
    assert "in eval mode" in f.message and site_rows(f, "step") == [19]


def test_parameter_appended_to_a_container_after_the_optimizer(runs):
    f = _one(runs["plist_late"], "GW719")
    assert f.row == 11 and "protos[" in f.message and site_rows(f, "step") == [19]


def test_clipping_over_an_emptied_iterator(runs):
    f = _one(runs["clip_consumed"], "GW739")
    assert f.row == 5 and site_rows(f, "call") == [11] and site_rows(f, "optimizer") == [6]


def test_grad_mode_left_off_by_a_statement(runs):
    result = runs["grad_off_stmt"]
    assert result.status == "failed"
    f = _one(result, "GW701")
    assert f.row == 5 and f.severity == "error" and site_rows(f, "backward") == [13]


def test_sample_differentiated_through_is_a_cut(runs):
    f = _one(runs["actor_sample"], "GW722")
    assert f.row == 11 and "rsample()" in f.message and f.backward_site.row == 14


def test_freed_graph_of_a_memoised_function_names_the_decorator(runs):
    result = runs["cached_table"]
    assert result.status == "failed"
    f = _one(result, "GW402")
    assert f.row == 7 and "`table`" in f.message and 13 in site_rows(f, "reuse")
