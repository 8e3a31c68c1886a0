"""The runtime bridge on small programs, one per hazard pattern it proves by execution, each
with a correct twin on which it must find nothing (CPU).

Every hazard program here is reported at the line a user changes to fix it; the comments say
what torch does when it runs (ground truth: run the file plainly). All programs run once, two
at a time, forked from one warm interpreter.
"""
from __future__ import annotations

import os
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

import pytest

from gradwarden.runtime import DebugOptions, DebugResult, DebugSession, Target
from gradwarden.runtime.session import Zygote

PROGRAMS: Dict[str, str] = {
    # a tensor of a graph that backward #1 (line 4) freed is taken into a new graph (line 5)
    "freed_reuse": """
        import torch
        w = torch.randn(3, requires_grad=True)
        feats = (w * 2).tanh()
        feats.sum().backward()
        extra = feats * 3
        extra.sum().backward()
    """,
    "freed_reuse_ok": """
        import torch
        w = torch.randn(3, requires_grad=True)
        feats = (w * 2).tanh()
        feats.sum().backward()
        extra = feats.detach() * 3
        print(extra.sum().item())
    """,
    # backward twice (line 7) through one graph built before the loop: it starts at line 4
    "backward_twice": """
        import torch
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        y = x * w
        loss = y.exp().sum()
        for _ in range(2):
            loss.backward()
    """,
    # the D step takes `fake` without detach (line 7): its backward (line 8) frees the
    # generator's graph, which the G step (line 9) needs again; the op is inside critic()
    "missing_detach": """
        import torch
        g, d = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        def critic(x):
            return d(x).sum()
        z = torch.randn(4, 2)
        fake = g(z)
        loss_d = critic(fake)
        loss_d.backward()
        loss_g = critic(fake)
        loss_g.backward()
    """,
    # a buffer made by expand in __init__ (line 5), written in forward: the expand is the line
    # to change (clone it); a write into a local expand is reported at the write
    "expanded_buffer": """
        import torch
        class Acc(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("acc", torch.zeros(3).expand(2, 3))
            def forward(self, x):
                self.acc.add_(x.detach())
                return x * 2
        Acc()(torch.ones(2, 3, requires_grad=True))
    """,
    "expanded_local": """
        import torch
        b = torch.zeros(3).expand(2, 3)
        b.add_(1)
    """,
    # softmax under forward-mode AD writes, inside torch, the result it saved (pytorch#162350):
    # the write is named at the softmax call (line 6)
    "internal_write": """
        import torch
        import torch.autograd.forward_ad as fwAD
        x = torch.randn(3, 4, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, torch.randn(3, 4))
            y = d.softmax(-1)
            p, t = fwAD.unpack_dual(y)
            loss = p.sum() + t.pow(2).sum()
        loss.backward()
    """,
    # a write through .detach() (line 4) that autograd does not see, before the value is used
    # (line 5): backward differentiates a * 2 while the product used the zeroed row
    "hidden_write": """
        import torch
        a = torch.randn(4, 3, requires_grad=True)
        x = a * 2
        x.detach()[0] = 0.0
        out = (x @ torch.randn(3, 3)).sum()
        out.backward()
    """,
    # the same write after the only use: the gradient is right, nothing to say; a leaf's
    # .detach() written (a weight update) is no hazard either
    "hidden_write_ok": """
        import torch
        a = torch.randn(4, 3, requires_grad=True)
        x = a * 2
        out = (x @ torch.randn(3, 3)).sum()
        x.detach()[0] = 0.0
        out.backward()
        a.detach().mul_(0.5)
        print(a.grad.sum().item())
    """,
    # a custom backward overwrites its grad_output (line 8); the `+` (line 12) hands the same
    # buffer to sin's backward, which runs after it and computes with the overwritten values
    "shared_grad": """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                g.mul_(2)
                return g
        x = torch.randn(3, requires_grad=True)
        y = x * 1
        out = y.sin() + Double.apply(y)
        (out * torch.randn(3)).sum().backward()
    """,
    # the same Function created first: its backward runs last, after sin's read the buffer
    "shared_grad_ok": """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                g.mul_(2)
                return g
        x = torch.randn(3, requires_grad=True)
        y = x * 1
        out = Double.apply(y) + y.sin()
        (out * torch.randn(3)).sum().backward()
        print(x.grad.sum().item())
    """,
    # h is built once (line 5) and its graph retained; the step (line 10) updates the weight h
    # was computed from, and the next backward differentiates the stale h (no error: the
    # linear layer did not save its weight, the input needs no grad)
    "stale_retained": """
        import torch
        lin = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        feat = torch.randn(5, 3)
        h = lin(feat)
        for _ in range(2):
            loss = h.pow(2).sum()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
    """,
    # the stale gradient (backward at line 7, through `h` of line 4) is saved, the .grad cleared
    # and refilled by a fresh backward (line 10), then the saved one put back (line 12) and
    # stepped with (line 13): a .grad that no observed backward left cannot be shown clean
    "stale_restored": """
        import torch
        lin = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        h = lin(torch.randn(5, 3))
        for _ in range(2):
            opt.zero_grad()
            h.pow(2).sum().backward(retain_graph=True)
            saved = [p.grad.clone() for p in lin.parameters()]
            opt.zero_grad()
            lin(torch.randn(5, 3)).sum().backward()
            for p, g in zip(lin.parameters(), saved):
                p.grad = g
            opt.step()
    """,
    # SAC's temperature: the actor's backward (line 14) goes through `a`, built before the
    # temperature's step (line 12), so log_a gets a gradient of the old value; it is zeroed
    # (line 10) before the temperature's own backward, and the actor's gradient is that of the
    # loss that was computed: correct
    "stale_cleared_ok": """
        import torch
        w = torch.nn.Linear(3, 1)
        log_a = torch.zeros(1, requires_grad=True)
        opt_w = torch.optim.SGD(w.parameters(), lr=0.1)
        opt_a = torch.optim.SGD([log_a], lr=0.1)
        for _ in range(2):
            a = log_a.exp()
            loss_w = (a * w(torch.randn(4, 3))).mean()
            torch.autograd.grad(loss_w, list(w.parameters()), retain_graph=True)
            opt_a.zero_grad()
            (-(log_a * 0.5)).sum().backward()
            opt_a.step()
            opt_w.zero_grad()
            loss_w.backward()
            opt_w.step()
    """,
    # a custom backward that overwrites its grad_output and returns it: the nodes below get
    # that buffer as their gradient, which is what it is for
    "own_grad_ok": """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                g *= 2.0
                return g
        lin = torch.nn.Linear(3, 3)
        out = Double.apply(lin(torch.randn(2, 3))) * 4.0
        out.mean().backward()
        print(lin.weight.grad.sum().item())
    """,
    # retained graph backwarded twice with no step in between, then a fresh forward: correct
    "stale_retained_ok": """
        import torch
        lin = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        feat = torch.randn(5, 3)
        h = lin(feat)
        h.pow(2).sum().backward(retain_graph=True)
        h.abs().sum().backward()
        opt.step()
        for _ in range(2):
            h = lin(feat)
            loss = h.pow(2).sum()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        print(loss.item())
    """,
    # the D loss takes `fake` without detach (line 8): its backward (line 9) adds D's loss to
    # G's .grad, D steps (line 10), G's backward (line 12) adds to it and G steps (line 13) with
    # the sum: torch raises nothing
    "polluted": """
        import torch
        g, d = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
        for _ in range(2):
            opt_g.zero_grad(); opt_d.zero_grad()
            fake = g(torch.randn(4, 2))
            loss_d = d(fake).mean()
            loss_d.backward()
            opt_d.step()
            loss_g = -d(g(torch.randn(4, 2))).mean()
            loss_g.backward()
            opt_g.step()
    """,
    "polluted_ok": """
        import torch
        g, d = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
        for _ in range(2):
            opt_g.zero_grad(); opt_d.zero_grad()
            fake = g(torch.randn(4, 2))
            loss_d = d(fake.detach()).mean()
            loss_d.backward()
            opt_d.step()
            loss_g = -d(g(torch.randn(4, 2))).mean()
            loss_g.backward()
            opt_g.step()
    """,
    # no detach, but G's gradients are cleared before its own backward: correct
    "polluted_zeroed_ok": """
        import torch
        g, d = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
        for _ in range(2):
            opt_d.zero_grad()
            d(g(torch.randn(4, 2))).mean().backward()
            opt_d.step()
            opt_g.zero_grad()
            (-d(g(torch.randn(4, 2))).mean()).backward()
            opt_g.step()
    """,
    # one optimizer per head, stepped after its own backward, and one for the shared trunk after
    # all heads: the trunk sums the heads' losses on purpose (no loss goes through another head)
    "heads_and_trunk_ok": """
        import torch
        trunk = torch.nn.Linear(4, 4)
        heads = [torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)]
        trunk_opt = torch.optim.SGD(trunk.parameters(), lr=0.1)
        head_opts = [torch.optim.SGD(h.parameters(), lr=0.1) for h in heads]
        for _ in range(2):
            feats = trunk(torch.randn(8, 4))
            trunk_opt.zero_grad()
            for head, opt in zip(heads, head_opts):
                opt.zero_grad()
                head(feats).pow(2).mean().backward(retain_graph=True)
                opt.step()
            trunk_opt.step()
    """,
    # gradient accumulation: two backward calls, one optimizer, one step
    "accumulation_ok": """
        import torch
        m = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            for _ in range(2):
                m(torch.randn(4, 2)).pow(2).mean().backward()
            opt.step()
    """,
    # forward keeps `inp * 2` on ctx (line 5): the create_graph=True gradient (line 13) takes
    # it as a constant, the penalty's backward (line 14) misses its second-order term
    "ctx_stash": """
        import torch
        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                ctx.two_x = inp * 2
                return inp * inp
            @staticmethod
            def backward(ctx, g):
                return ctx.two_x * g
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = Sq.apply(x * w).sum()
        gx, = torch.autograd.grad(y, x, create_graph=True)
        gx.pow(2).sum().backward()
    """,
    # the same Function, first order only: correct
    "ctx_stash_first_order_ok": """
        import torch
        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                ctx.two_x = inp * 2
                return inp * inp
            @staticmethod
            def backward(ctx, g):
                return ctx.two_x * g
        x = torch.randn(3, requires_grad=True)
        Sq.apply(x).sum().backward()
        print(x.grad)
    """,
    # the input itself on ctx (its graph is there in a create_graph backward), a boolean mask
    # (zero derivative), a factory that reads only the shape: correct
    "ctx_input_and_mask_ok": """
        import torch
        class Relu2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                ctx.inp = inp
                ctx.mask = inp > 0
                ctx.one = inp.new_ones(inp.shape)
                return inp.clamp(min=0) ** 2
            @staticmethod
            def backward(ctx, g):
                return 2 * ctx.inp * ctx.mask * ctx.one * g
        x = torch.randn(3, requires_grad=True)
        gx, = torch.autograd.grad(Relu2.apply(x).sum(), x, create_graph=True)
        gx.sum().backward()
        print(x.grad)
    """,
    # the distribution (line 3) caches `logits` with its graph on first use; backward #1 (line
    # 7) frees it and step 2 goes through it again (line 6 builds on the stale logits)
    "cached_distribution": """
        import torch
        p = torch.nn.Parameter(torch.tensor(0.3))
        pi = torch.distributions.Bernoulli(probs=p)
        opt = torch.optim.SGD([p], lr=0.01)
        for r in (1.0, 0.5):
            loss = -pi.log_prob(torch.tensor(1.0)) * r
            loss.backward()
            opt.step()
    """,
    "cached_distribution_ok": """
        import torch
        p = torch.nn.Parameter(torch.tensor(0.3))
        opt = torch.optim.SGD([p], lr=0.01)
        for r in (1.0, 0.5):
            pi = torch.distributions.Bernoulli(probs=p)
            loss = -pi.log_prob(torch.tensor(1.0)) * r
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    folder = tmp_path_factory.mktemp("patterns")
    paths = {}
    for name, text in PROGRAMS.items():
        path = folder / (name + ".py")
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        paths[name] = path
    results: Dict[str, DebugResult] = {}
    with Zygote() as zygote:
        def one(name):
            session = DebugSession(Target.script(str(paths[name]), cwd=str(folder)),
                                   DebugOptions(output="discard", timeout=180, static=False), zygote=zygote)
            session.start()
            return name, session.wait()

        with ThreadPoolExecutor(int(os.environ.get("GRADWARDEN_RUNTIME_JOBS", "2"))) as pool:
            results.update(pool.map(one, PROGRAMS))
    return results


def _rows(f, kind) -> List[int]:
    return [site.row for k, site in f.sites() if k == kind]


def _one(result: DebugResult, code: str):
    found = [f for f in result.runtime_findings if f.code == code]
    assert len(found) == 1, [(f.code, f.row, f.message) for f in result.runtime_findings]
    return found[0]


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_freed_graph_is_named_where_the_stale_tensor_is_reused(runs):
    f = _one(runs["freed_reuse"], "GW402")
    assert f.row == 5
    assert _rows(f, "created") == [3] and _rows(f, "freed") == [4] and f.backward_site.row == 6


def test_backward_twice_names_where_the_graph_starts(runs):
    f = _one(runs["backward_twice"], "GW401")
    assert f.row == 4 and _rows(f, "freed") == [7]


def test_missing_detach_names_the_call_that_took_the_tensor_in(runs):
    f = _one(runs["missing_detach"], "GW402")
    assert f.row == 4  # the op (inside critic) that reuses fake
    assert 9 in _rows(f, "reuse")  # ... called from here
    assert 7 in _rows(f, "first-use")  # the D step that freed the generator's graph through fake
    assert _rows(f, "freed") == [8] and 6 in _rows(f, "created")


def test_expanded_buffer_is_named_where_it_was_made(runs):
    f = _one(runs["expanded_buffer"], "GW301")
    assert f.row == 5 and 7 in _rows(f, "write")
    f = _one(runs["expanded_local"], "GW301")
    assert f.row == 3 and _rows(f, "created") == [2]


def test_internal_write_is_named_at_the_call(runs):
    f = _one(runs["internal_write"], "GW201")
    assert f.write_site.row == 6 and f.save_site.row == 6 and f.backward_site.row == 9
    assert "inside torch" in f.message


def test_write_hidden_from_autograd_before_a_use(runs):
    f = _one(runs["hidden_write"], "GW602")
    assert f.row == 4 and f.severity == "warning" and 5 in _rows(f, "use")
    assert runs["hidden_write"].status == "ok"  # nothing raises: silently wrong gradients


def test_custom_backward_overwriting_a_shared_gradient(runs):
    f = _one(runs["shared_grad"], "GW303")
    assert f.row == 8 and 12 in _rows(f, "use")


def test_retained_graph_used_after_a_step(runs):
    f = _one(runs["stale_retained"], "GW405")
    assert f.row == 5 and set(_rows(f, "step")) == {10} and f.backward_site.row == 9
    assert any("stale gradient" in r.message for r in f.related), f.related


def test_gradients_polluted_by_another_optimizers_loss(runs):
    f = _one(runs["polluted"], "GW503")
    assert f.row == 8 and f.severity == "warning"  # the loss that should have taken fake.detach()
    assert sorted(set(_rows(f, "backward"))) == [9, 12] and _rows(f, "step") == [10, 13]
    assert runs["polluted"].status == "ok"


def test_intermediate_kept_on_ctx_in_a_double_backward(runs):
    f = _one(runs["ctx_stash"], "GW310")
    assert f.row == 5 and f.backward_site.row == 13 and "two_x" in f.message
    assert runs["ctx_stash"].status == "ok"


def test_stale_tensor_cached_on_a_distribution_names_where_it_was_built(runs):
    f = _one(runs["cached_distribution"], "GW402")
    assert f.row == 6 and _rows(f, "holder") == [3] and "`logits`" in f.message + str(f.to_json())


def test_a_stale_gradient_saved_and_put_back_is_still_reported(runs):
    f = _one(runs["stale_restored"], "GW405")
    assert f.row == 4 and 13 in _rows(f, "step")
