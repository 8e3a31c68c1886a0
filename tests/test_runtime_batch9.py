"""The runtime bridge on the kinds of batch 9 (issue 24) it missed at first contact, each written
as other programs of the kind with a correct twin on which the run finds nothing: a parameter
used only through its own ``.detach()`` (GW719 at the detach; one the program moves by a running
mean is not untrained), a probe leaf made with ``feats.detach().requires_grad_()`` beside the live
loss (no write: ``requires_grad_`` moves no version), an optimizer whose gradients nothing clears
between its steps (GW710 at a zeroing call repeated in its place, else at the step), parameter
groups that leave out one parameter of a module whose others they hold (GW719 at the list that
holds its sibling; a whole module or every weight left out is meant), a shift written as an
ascending loop of slot copies (GW713 at the loop; the same loop from the end, or a forward fill,
is not). The comments say what torch does (ground
truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs  # noqa: E402

PROGRAMS: Dict[str, str] = {
    # the centres are only read as `self.centres.detach()` (line 9): SGD steps them with `.grad`
    # None at every step, they never move
    "leaf_detach": """
        import torch
        from torch import nn
        class Centres(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(5, 3)
                self.centres = nn.Parameter(torch.randn(4, 3))
            def forward(self, x):
                return -torch.cdist(self.enc(x), self.centres.detach())
        model = Centres()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = nn.functional.cross_entropy(model(torch.randn(6, 5)), torch.randint(0, 4, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "leaf_detach_ok": """
        import torch
        from torch import nn
        class Centres(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(5, 3)
                self.centres = nn.Parameter(torch.randn(4, 3))
            def forward(self, x):
                return -torch.cdist(self.enc(x), self.centres)
        model = Centres()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = nn.functional.cross_entropy(model(torch.randn(6, 5)), torch.randint(0, 4, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the centres are read detached on purpose and moved by a running mean under no_grad: the
    # optimizer holds them (model.parameters()) but they do change
    "leaf_detach_running_mean_ok": """
        import torch
        from torch import nn
        class Centres(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(5, 3)
                self.centres = nn.Parameter(torch.randn(4, 3))
            def forward(self, x):
                return -torch.cdist(self.enc(x), self.centres.detach())
        model = Centres()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(6, 5), torch.randint(0, 4, (6,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                z = model.enc(x)
                for k in range(4):
                    if (y == k).any():
                        model.centres[k].mul_(0.9).add_(0.1 * z[y == k].mean(0))
    """,
    # a saliency probe on a detached copy of the features made a leaf: no element of `feats` is
    # written, the loss of line 10 trains everything
    "probe_leaf_ok": """
        import torch
        from torch import nn
        trunk, head = nn.Linear(6, 8), nn.Linear(8, 3)
        opt = torch.optim.SGD([*trunk.parameters(), *head.parameters()], lr=0.1)
        for step in range(2):
            x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
            feats = trunk(x)
            probe = feats.detach().requires_grad_()
            (g,) = torch.autograd.grad(head(probe).sum(), probe)
            loss = nn.functional.cross_entropy(head(feats), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same copy written (line 8): `feats` (same memory) now holds halved values that the
    # head of line 9 uses, while backward differentiates through the old ones (GW602)
    "probe_written": """
        import torch
        from torch import nn
        trunk, head = nn.Linear(6, 8), nn.Linear(8, 3)
        opt = torch.optim.SGD([*trunk.parameters(), *head.parameters()], lr=0.1)
        for step in range(2):
            x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
            feats = trunk(x)
            probe = feats.detach().mul_(0.5)
            loss = nn.functional.cross_entropy(head(feats), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the encoder's optimizer is zeroed twice (lines 6-7), the decoder's never: at the second step
    # its .grad holds both steps' gradients
    "zeroed_twice": """
        import torch
        from torch import nn
        enc, dec = nn.Linear(4, 4), nn.Linear(4, 2)
        opt_e, opt_d = torch.optim.SGD(enc.parameters(), lr=0.1), torch.optim.SGD(dec.parameters(), lr=0.1)
        for step in range(3):
            opt_e.zero_grad()
            opt_e.zero_grad()
            loss = dec(enc(torch.randn(5, 4))).pow(2).mean()
            loss.backward()
            opt_e.step()
            opt_d.step()
    """,
    "zeroed_twice_ok": """
        import torch
        from torch import nn
        enc, dec = nn.Linear(4, 4), nn.Linear(4, 2)
        opt_e, opt_d = torch.optim.SGD(enc.parameters(), lr=0.1), torch.optim.SGD(dec.parameters(), lr=0.1)
        for step in range(3):
            opt_e.zero_grad()
            opt_d.zero_grad()
            loss = dec(enc(torch.randn(5, 4))).pow(2).mean()
            loss.backward()
            opt_e.step()
            opt_d.step()
    """,
    # the encoder's optimizer is zeroed, the decoder's never: shown at the decoder's step (line 10)
    "zeroed_other": """
        import torch
        from torch import nn
        enc, dec = nn.Linear(4, 4), nn.Linear(4, 2)
        opt_e, opt_d = torch.optim.SGD(enc.parameters(), lr=0.1), torch.optim.SGD(dec.parameters(), lr=0.1)
        for step in range(3):
            opt_e.zero_grad()
            loss = dec(enc(torch.randn(5, 4))).pow(2).mean()
            loss.backward()
            opt_e.step()
            opt_d.step()
    """,
    # a loop that zeroes nothing: the run cannot tell it from accumulation meant over the whole run
    "never_zeroed_ok": """
        import torch
        from torch import nn
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = net(torch.randn(5, 4)).pow(2).mean()
            loss.backward()
            opt.step()
    """,
    # gradient accumulation: two backward calls per step, zeroed after each step
    "accumulated_ok": """
        import torch
        from torch import nn
        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(6):
            net(torch.randn(5, 4)).pow(2).mean().backward()
            if step % 2 == 1:
                opt.step()
                opt.zero_grad()
    """,
    # weight-decay groups by `dim() >= 2` and `.bias`: the LayerNorm's weight (1-D, not a bias) is in
    # no group (line 7 took its bias); backward fills its .grad, nothing applies it
    "groups_hole": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 2))
        def configure(model):
            named = list(model.named_parameters())
            decay = [p for n, p in named if p.dim() >= 2]
            no_decay = [p for n, p in named if n.endswith(".bias")]
            return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
        opt = configure(model)
        for step in range(2):
            loss = model(torch.randn(5, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "groups_hole_ok": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 2))
        def configure(model):
            named = list(model.named_parameters())
            decay = [p for n, p in named if p.dim() >= 2]
            no_decay = [p for n, p in named if p.dim() < 2]
            return torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
        opt = configure(model)
        for step in range(2):
            loss = model(torch.randn(5, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # BitFit without freezing the rest: every weight is left out on purpose (they get gradients
    # nobody applies); and a head-only fine-tune whose backbone keeps requires_grad
    "biases_only_ok": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 2))
        biases = [p for n, p in model.named_parameters() if n.endswith(".bias")]
        opt = torch.optim.SGD(biases, lr=0.1)
        head_opt = torch.optim.SGD(model[2].parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(5, 6)).pow(2).mean()
            opt.zero_grad()
            head_opt.zero_grad()
            loss.backward()
            opt.step()
            head_opt.step()
    """,
    "head_only_ok": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
        opt = torch.optim.SGD(model[2].parameters(), lr=0.1)
        for step in range(2):
            loss = model(torch.randn(5, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a one-step delay written as an ascending loop (line 5): every column ends up holding column 0
    "shift_loop": """
        import torch
        from torch import nn
        feats = nn.Linear(3, 6)(torch.randn(4, 3))
        lagged = feats.clone()
        for t in range(1, lagged.shape[1]):
            lagged[:, t] = lagged[:, t - 1]
        lagged[:, 0] = 0.0
        (lagged * feats).sum().backward()
    """,
    # the same shift from the end backwards, and a forward fill of the missing columns only
    "shift_loop_ok": """
        import torch
        from torch import nn
        feats = nn.Linear(3, 6)(torch.randn(4, 3))
        lagged = feats.clone()
        for t in range(lagged.shape[1] - 1, 0, -1):
            lagged[:, t] = lagged[:, t - 1]
        lagged[:, 0] = 0.0
        missing = [False, True, True, False, True, False]
        filled = feats.clone()
        for t in range(1, filled.shape[1]):
            if missing[t]:
                filled[:, t] = filled[:, t - 1]
        (lagged * feats + filled).sum().backward()
    """,
    # backward returns one gradient for a Function of three inputs (line 10, one of two returns: the
    # run sees which one ran); autograd raises "incorrect number of gradients (expected 3, got 1)"
    # from the engine, after backward returned, at `loss.backward()` (line 15)
    "contract_count": """
        import torch
        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lo, hi):
                ctx.scale = hi - lo
                return x.clamp(lo, hi)
            @staticmethod
            def backward(ctx, g):
                if ctx.scale > 0:
                    return g
                return g, None, None
        w = torch.randn(4, requires_grad=True)
        loss = Clip.apply(w * 2, 0.0, 1.0).sum()
        try:
            loss.backward()
        except RuntimeError as exc:
            print("caught", exc)
    """,
    "contract_count_ok": """
        import torch
        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lo, hi):
                ctx.scale = hi - lo
                return x.clamp(lo, hi)
            @staticmethod
            def backward(ctx, g):
                if ctx.scale > 0:
                    return g, None, None
                return g, None, None, None
        w = torch.randn(4, requires_grad=True)
        loss = Clip.apply(w * 2, 0.0, 1.0).sum()
        loss.backward()
    """,
    # backward returns the gradient as a column (6, 1) for a (6,) input (line 11): autograd raises
    # "returned an invalid gradient at index 0 - got [6, 1] but expected shape compatible with [6]"
    "contract_shape": """
        import torch
        class Pinball(torch.autograd.Function):
            @staticmethod
            def forward(ctx, pred, target):
                diff = target.view(-1, 1) - pred.view(-1, 1)
                ctx.save_for_backward(diff)
                return diff.clamp(min=0).mean()
            @staticmethod
            def backward(ctx, g):
                (diff,) = ctx.saved_tensors
                return -g * (diff > 0).float() / diff.numel(), None
        pred = torch.randn(6, requires_grad=True)
        Pinball.apply(pred, torch.randn(6)).backward()
    """,
    "contract_shape_ok": """
        import torch
        class Pinball(torch.autograd.Function):
            @staticmethod
            def forward(ctx, pred, target):
                diff = target.view(-1, 1) - pred.view(-1, 1)
                ctx.save_for_backward(diff)
                return diff.clamp(min=0).mean()
            @staticmethod
            def backward(ctx, g):
                (diff,) = ctx.saved_tensors
                return (-g * (diff > 0).float() / diff.numel()).view(-1), None
        pred = torch.randn(6, requires_grad=True)
        Pinball.apply(pred, torch.randn(6)).backward()
    """,
    # a running summary kept on the module with its graph (line 10): the second step's backward goes
    # through the first step's freed graph ("backward through the graph a second time"), read at
    # line 9; the store is the line to change
    "memory_attr": """
        import torch
        from torch import nn
        class Summary(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.state = torch.zeros(1, 4)
            def forward(self, x):
                new = 0.5 * self.state + self.proj(x).mean(0, keepdim=True)
                setattr(self, "state", new)
                return new.sum()
        m = Summary()
        for step in range(2):
            m(torch.randn(3, 4)).backward()
    """,
    "memory_attr_ok": """
        import torch
        from torch import nn
        class Summary(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.state = torch.zeros(1, 4)
            def forward(self, x):
                new = 0.5 * self.state + self.proj(x).mean(0, keepdim=True)
                setattr(self, "state", new.detach())
                return new.sum()
        m = Summary()
        for step in range(2):
            m(torch.randn(3, 4)).backward()
    """,
    # the int `k` given to ctx.save_for_backward (line 6): apply raises TypeError once forward
    # returned ("save_for_backward can only save variables, but argument 1 is of type int"), from
    # the apply at line 14, which the program catches
    "save_int": """
        import torch
        class TopK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                values, idx = x.topk(k, dim=-1)
                ctx.save_for_backward(idx, k)
                return torch.zeros_like(x).scatter(-1, idx, values)
            @staticmethod
            def backward(ctx, g):
                (idx,) = ctx.saved_tensors
                return torch.zeros_like(g).scatter(-1, idx, g.gather(-1, idx)), None
        x = torch.randn(3, 6, requires_grad=True)
        try:
            TopK.apply(x, 2).sum().backward()
        except TypeError as exc:
            print("caught", exc)
    """,
    "save_int_ok": """
        import torch
        class TopK(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                values, idx = x.topk(k, dim=-1)
                ctx.save_for_backward(idx)
                ctx.k = k
                return torch.zeros_like(x).scatter(-1, idx, values)
            @staticmethod
            def backward(ctx, g):
                (idx,) = ctx.saved_tensors
                return torch.zeros_like(g).scatter(-1, idx, g.gather(-1, idx)), None
        x = torch.randn(3, 6, requires_grad=True)
        TopK.apply(x, 2).sum().backward()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch9")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_parameter_read_only_through_its_own_detach_never_trains(runs):
    f = _one(runs["leaf_detach"], "GW719")
    assert f.row == 9 and "`centres`" in f.message and ".detach()" in f.message
    assert site_rows(f, "optimizer") == [11] and site_rows(f, "step") == [16]


def test_write_through_the_detached_copy_is_still_seen(runs):
    f = _one(runs["probe_written"], "GW602")
    assert f.row == 8


def test_optimizer_zeroed_twice_while_another_is_never_zeroed(runs):
    f = _one(runs["zeroed_twice"], "GW710")
    assert f.row == 7 and site_rows(f, "note") == [6] and site_rows(f, "step") == [11]
    assert "`opt_d.zero_grad()`" in f.message
    assert [x.code for x in runs["zeroed_twice"].runtime_findings] == ["GW710"]  # not another optimizer's loss


def test_optimizer_never_zeroed_beside_a_zeroed_one_is_shown_at_its_step(runs):
    f = _one(runs["zeroed_other"], "GW710")
    assert f.row == 10 and site_rows(f, "note") == []


def test_parameter_groups_that_leave_a_parameter_out(runs):
    f = _one(runs["groups_hole"], "GW719")
    assert f.row == 7 and "`1.weight`" in f.message and "`no_decay`" in f.message and "`1.bias`" in f.message
    assert site_rows(f, "optimizer") == [8] and site_rows(f, "step") == [14]


def test_shift_loop_in_the_order_that_reads_what_it_wrote(runs):
    f = _one(runs["shift_loop"], "GW713")
    assert f.row == 5 and site_rows(f, "write") == [6]


def test_custom_backward_with_too_few_gradients_is_shown_at_its_return(runs):
    # the engine raises after backward returned; the run names the return that ran (one of two)
    f = _one(runs["contract_count"], "GW307")
    assert f.row == 10 and site_rows(f, "backward") == [15]
    assert "returns 1 gradient(s)" in f.message and "takes 3 input(s)" in f.message
    assert runs["contract_count"].status == "ok"  # the program caught the error: still found


def test_custom_backward_gradient_of_the_wrong_shape_is_shown_at_its_return(runs):
    f = _one(runs["contract_shape"], "GW307")
    assert f.row == 11 and site_rows(f, "backward") == [13]
    assert "invalid gradient at index 0" in f.message


def test_graph_kept_as_a_module_attribute_is_shown_at_the_store(runs):
    # the freed graph is reused at line 9; the store that kept it with its graph is line 10
    f = _one(runs["memory_attr"], "GW402")
    assert f.row == 10 and 9 in site_rows(f, "reuse") and "`state` of the Summary" in f.message


def test_non_tensor_given_to_save_for_backward_is_shown_at_that_call(runs):
    f = _one(runs["save_int"], "GW738")
    assert f.row == 6 and site_rows(f, "call") == [14] and "argument 1 is of type int" in f.message
