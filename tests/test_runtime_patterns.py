"""The runtime bridge on small programs, one per hazard pattern it proves by execution, each
with a correct twin on which it must find nothing (CPU).

Every hazard program here is reported at the line a user changes to fix it; the comments say
what torch does when it runs (ground truth: run the file plainly). All programs run once, two
at a time, forked from one warm interpreter.
"""
from __future__ import annotations

from typing import Dict

import pytest

from gradwarden.runtime import DebugResult
from runtime_runs import debug_runs, only_finding as _one, site_rows, write_programs

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
    # --- silent hazards a run proves without an oracle (issue 24) ---
    # unfold windows (step 2 < size 4) share pixels: centring them in place (line 5) subtracts
    # several means from one pixel; torch raises nothing
    "overlap_windows": """
        import torch
        img = torch.rand(1, 1, 8, 8, requires_grad=True)
        out = img * 2
        patches = out.unfold(2, 4, 2).unfold(3, 4, 2)
        patches -= patches.mean(dim=(-1, -2), keepdim=True)
        out.sum().backward()
    """,
    # a copy first, windows that do not overlap (step == size), a fill (one value for every
    # window) and an idempotent relu_ on shared pixels: what each call computes is what it writes
    "overlap_windows_ok": """
        import torch
        img = torch.rand(1, 1, 8, 8, requires_grad=True)
        out = img * 2
        patches = out.unfold(2, 4, 2).unfold(3, 4, 2).clone()
        patches -= patches.mean(dim=(-1, -2), keepdim=True)
        tiles = out.unfold(2, 4, 4).unfold(3, 4, 4)
        tiles *= 0.5
        signal = torch.randn(16)
        signal.unfold(0, 4, 2).relu_()
        signal.unfold(0, 4, 2).fill_(1.0)
        (patches.sum() + out.sum()).backward()
        print(img.grad.sum().item(), signal.sum().item())
    """,
    # shifting a 2-D buffer along its columns in place (line 3): torch cannot tell the
    # overlap of two strided views and copies element by element, smearing column 0
    "overlap_shift": """
        import torch
        frames = torch.arange(12.0).reshape(3, 4)
        frames[:, 1:] = frames[:, :-1]
        print(frames)
    """,
    # the shift from a copy, torch.roll, and a shift whose kernel reads before it writes (the
    # result is what was asked): nothing to report
    "overlap_shift_ok": """
        import torch
        frames = torch.arange(12.0).reshape(3, 4)
        frames[:, 1:] = frames[:, :-1].clone()
        rolled = torch.roll(frames, 1, dims=1)
        left = torch.arange(12.0).reshape(3, 4)
        left[:, :-1] = left[:, 1:]
        print(frames, rolled, left)
    """,
    # backward returns the local derivative only (line 11): the output is scaled before the
    # loss, so grad_output is not 1 and every gradient below is wrong
    "chain_rule_dropped": """
        import torch
        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * torch.sigmoid(x)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                s = torch.sigmoid(x)
                return s * (1 + x * (1 - s))
        lin = torch.nn.Linear(3, 3)
        (Swish.apply(lin(torch.randn(4, 3))) * 3).sum().backward()
    """,
    # the chain rule applied (in place on a copy of grad_output), a straight-through
    # estimator, a Function whose output is the loss itself (grad_output is 1: a gradient
    # precomputed in forward is right), and a double backward (create_graph: never probed)
    "chain_rule_ok": """
        import torch
        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * torch.sigmoid(x)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                s = torch.sigmoid(x)
                g = grad_output.clone()
                g *= s * (1 + x * (1 - s))
                return g
        class RoundSTE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.round()
            @staticmethod
            def backward(ctx, grad_output):
                return grad_output
        class FusedMSE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, pred, target):
                ctx.save_for_backward(2 * (pred - target) / pred.numel())
                return (pred - target).pow(2).mean()
            @staticmethod
            def backward(ctx, grad_output):
                grad, = ctx.saved_tensors
                return grad, None
        lin = torch.nn.Linear(3, 3)
        x = torch.randn(4, 3)
        (Swish.apply(lin(x)) * 3).sum().backward()
        (RoundSTE.apply(lin(x)) * 3).sum().backward()
        FusedMSE.apply(lin(x), torch.randn(4, 3)).backward()
        w = torch.randn(3, requires_grad=True)
        g, = torch.autograd.grad((Swish.apply(w) * 3).sum(), w, create_graph=True)
        g.pow(2).sum().backward()
        print(lin.weight.grad.sum().item(), w.grad.sum().item())
    """,
    # the token embedding is frozen, so no input of the reentrant checkpoint (line 13) requires
    # grad: the block's parameters get no gradient; the program filters torch's warning
    "checkpoint_no_grad": """
        import warnings
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint
        warnings.filterwarnings("ignore", message="None of the inputs have requires_grad")
        embed = nn.Embedding(10, 4)
        embed.weight.requires_grad_(False)
        block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        head = nn.Linear(4, 2)
        tokens = torch.randint(0, 10, (3, 5))
        h = embed(tokens)
        if True:
            h = checkpoint(block, h, use_reentrant=True)
        head(h.mean(1)).sum().backward()
    """,
    # the non-reentrant checkpoint tracks the block's parameters; a reentrant one whose input
    # requires grad; a reentrant checkpoint in evaluation under no_grad
    "checkpoint_ok": """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint
        embed = nn.Embedding(10, 4)
        embed.weight.requires_grad_(False)
        block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        tokens = torch.randint(0, 10, (3, 5))
        h = checkpoint(block, embed(tokens), use_reentrant=False)
        x = torch.randn(3, 4, requires_grad=True)
        y = checkpoint(block, x, use_reentrant=True)
        (h.sum() + y.sum()).backward()
        with torch.no_grad():
            checkpoint(block, embed(tokens), use_reentrant=True)
        print(block[0].weight.grad.sum().item())
    """,
    # entropy of ReLU-normalised weights with exact zeros: where(p > 0, p * log(p), 0) (line 6)
    # differentiates log at 0 where it was not selected: 0 x inf = NaN reaches the scorer
    "nonfinite_branch": """
        import torch; torch.manual_seed(0)  # a seed on the import's row: the rows below stay as asserted
        scorer = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
        s = torch.relu(scorer(torch.randn(8, 4))) + torch.tensor([0.0, 0.0, 1e-3])
        p = s / s.sum(-1, keepdim=True)
        plogp = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))
        loss = plogp.sum(-1).mean()
        loss.backward()
        opt.step()
    """,
    # the same, with the checks gathered on the device and read once when backward returns (the
    # CUDA path, taken on CPU through the child's switch)
    "nonfinite_branch_deferred": """
        import sys
        import torch; torch.manual_seed(0)  # seeded: 4 seeds in 400 give the weight a finite gradient
        sys.modules["_gradwarden_child_pkg.nonfinite"].defer[0] = True
        scorer = torch.nn.Linear(4, 3)
        s = torch.relu(scorer(torch.randn(8, 4))) + torch.tensor([0.0, 0.0, 1e-3])
        p = s / s.sum(-1, keepdim=True)
        plogp = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))
        plogp.sum(-1).mean().backward()
        safe = torch.where(p > 0, p, torch.ones_like(p)).detach()
        torch.where(p.detach() > 0, scorer.weight.sum() * safe.log(), 0.0).sum().backward()
    """,
    # the log of a safe value, where with finite branches, and a NaN that a second where
    # masks before it reaches anything: nothing non-finite arrives
    "nonfinite_branch_ok": """
        import torch
        scorer = torch.nn.Linear(4, 3)
        s = torch.relu(scorer(torch.randn(8, 4))) + torch.tensor([0.0, 0.0, 1e-3])
        p = s / s.sum(-1, keepdim=True)
        safe = torch.where(p > 0, p, torch.ones_like(p))
        plogp = torch.where(p > 0, p * safe.log(), torch.zeros_like(p))
        x = torch.randn(8, requires_grad=True)
        y = torch.where(x.abs() > 0.5, x, x * 2)
        z = torch.where(x > 0, torch.log(torch.where(x > 0, x, 0.0)), 0.0)
        (plogp.sum() + y.sum() + z.sum()).backward()
        print(torch.isfinite(scorer.weight.grad).all().item(), torch.isfinite(x.grad).all().item())
    """,
    # the codebook reaches the loss only through the straight-through output's detach (line 9):
    # its gradient is None at every step, SGD never changes it
    "untrained_detach": """
        import torch
        from torch import nn
        enc, codebook, dec = nn.Linear(4, 3), nn.Embedding(6, 3), nn.Linear(3, 4)
        opt = torch.optim.SGD([*enc.parameters(), *codebook.parameters(), *dec.parameters()], lr=0.1)
        for _ in range(2):
            x = torch.randn(8, 4)
            z = enc(x)
            q = codebook(torch.cdist(z, codebook.weight).argmin(-1))
            z_q = z + (q - z).detach()
            loss = (dec(z_q) - x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the same cut inside a training function: its modules and optimizer are freed when it
    # returns, before the run ends and the findings are made; the report still names `weight`
    "untrained_detach_in_function": """
        import torch
        from torch import nn
        def train():
            enc, codebook, dec = nn.Linear(4, 3), nn.Embedding(6, 3), nn.Linear(3, 4)
            opt = torch.optim.SGD([*enc.parameters(), *codebook.parameters(), *dec.parameters()], lr=0.1)
            for _ in range(2):
                x = torch.randn(8, 4)
                z = enc(x)
                q = codebook(torch.cdist(z, codebook.weight).argmin(-1))
                z_q = z + (q - z).detach()
                loss = (dec(z_q) - x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        train()
        import gc
        gc.collect()
    """,
    # fake quantization without a straight-through estimator (line 7): round's derivative is 0
    "untrained_round": """
        import torch
        from torch import nn
        w = nn.Parameter(torch.randn(4, 4))
        head = nn.Linear(4, 1)
        opt = torch.optim.Adam([w, *head.parameters()], lr=1e-2)
        for _ in range(3):
            w_q = torch.round(w * 4) / 4
            loss = head(torch.randn(8, 4) @ w_q).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # autograd.grad (line 5) of a loss that sees w only through sign (line 4): all zeros
    "zero_via_grad": """
        import torch
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(8, 4)
        loss = (x @ torch.sign(w)).pow(2).mean()
        g, = torch.autograd.grad(loss, w)
        print(g.abs().sum().item())
    """,
    # a straight-through round, and floor used for an index while the fractional part keeps a
    # path around it: the gradients are not zero
    "zero_ste_ok": """
        import torch
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(8, 4)
        w_q = w + (torch.round(w * 4) / 4 - w).detach()
        (x @ w_q).pow(2).mean().backward()
        lo = torch.floor(w * 5)
        frac = w * 5 - lo
        frac.sum().backward()
        print(w.grad)
    """,
    # a weight term read with .item() (line 7) and added back as a number
    "untrained_item": """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        log_var = nn.Parameter(torch.zeros(()))
        opt = torch.optim.SGD([*model.parameters(), log_var], lr=0.1)
        for _ in range(2):
            weight = torch.exp(-log_var).item()
            loss = weight * model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a binarized weight whose backward tests needs_input_grad at the wrong index: it returns
    # None for the weight (line 12), which never trains
    "untrained_none_return": """
        import torch
        from torch import nn
        class Binarize(torch.autograd.Function):
            @staticmethod
            def forward(ctx, w, alpha):
                return torch.sign(w) * alpha
            @staticmethod
            def backward(ctx, grad_output):
                grad_w = None
                if ctx.needs_input_grad[1]:
                    grad_w = grad_output
                return grad_w, None
        w = nn.Parameter(torch.randn(4, 4))
        head = nn.Linear(4, 1)
        opt = torch.optim.SGD([w, *head.parameters()], lr=0.1)
        for _ in range(2):
            loss = head(torch.randn(8, 4) @ Binarize.apply(w, 0.5)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the evolved weight re-wrapped as a new leaf (line 8): the GRU cell that evolves it and the
    # initial weight get no gradient
    "untrained_rewrap": """
        import torch
        from torch import nn
        init = nn.Parameter(torch.randn(3, 3))
        evolve = nn.GRUCell(3, 3)
        opt = torch.optim.SGD([init, *evolve.parameters()], lr=0.1)
        for _ in range(2):
            w = evolve(init, init)
            layer_w = nn.Parameter(w)
            loss = (torch.randn(5, 3) @ layer_w).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a straight-through estimator with the codebook loss on the lookup itself, a frozen
    # backbone with a trainable head (only trainable parameters in the optimizer, and a second
    # optimizer over the frozen ones), a module built but never called, a hook that keeps
    # detached copies for logging while the module trains, an auxiliary head computed but not
    # in the loss, and a rezero-style gate (zero gradients at the first step only)
    "untrained_ok": """
        import torch
        from torch import nn
        enc, codebook, dec = nn.Linear(4, 3), nn.Embedding(6, 3), nn.Linear(3, 4)
        backbone, head, unused, aux = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 4), nn.Linear(4, 2)
        backbone.requires_grad_(False)
        gate = nn.Parameter(torch.zeros(()))
        branch = nn.Linear(4, 4)
        logged = []
        enc.register_forward_hook(lambda m, i, o: logged.append(o.detach()))
        opt = torch.optim.SGD([*enc.parameters(), *codebook.parameters(), *dec.parameters(), *head.parameters(),
                               *unused.parameters(), *aux.parameters(), gate, *branch.parameters()], lr=0.1)
        frozen_opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
        for _ in range(3):
            x = torch.randn(8, 4)
            z = enc(x)
            q = codebook(torch.cdist(z, codebook.weight).argmin(-1))
            z_q = z + (q - z).detach()
            aux_out = aux(x)
            h = backbone(x)
            h = h + gate * branch(h)
            loss = (dec(z_q) - x).pow(2).mean() + (q - z.detach()).pow(2).mean() + head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            frozen_opt.step()
            logged.clear()
        print(round(loss.item(), 4), aux_out.detach().shape)
    """,
    # a Wasserstein critic: its last bias gets 1 - 1 = 0 at every step (exact zeros, no
    # zero-derivative op: nothing is wrong), and a hinge loss on two terms likewise
    "zero_bias_ok": """
        import torch
        from torch import nn
        critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
        for _ in range(3):
            real, fake = torch.randn(16, 4), torch.randn(16, 4)
            loss = critic(fake).mean() - critic(real).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(critic[2].bias.grad.item())
    """,
    # an activation penalty whose hook keeps one slot (line 7) on a projection shared by two
    # towers (lines 10, 11): the second call replaces the first one's activation. Whether that
    # is wrong is the program's intent (a slot meant for the last call is written the same
    # way): the run shows the overwrite as the premise of a static GW721, never a finding alone
    "hook_overwrite": """
        import torch
        from torch import nn
        proj = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        q_in, d_in = nn.Linear(3, 4), nn.Linear(5, 4)
        acts = {}
        def keep(module, inputs, output):
            acts["proj"] = output
        proj.register_forward_hook(keep)
        for _ in range(2):
            zq = proj(q_in(torch.randn(6, 3)))
            zd = proj(d_in(torch.randn(6, 5)))
            loss = (zq @ zd.t()).logsumexp(-1).mean() + 0.1 * acts["proj"].pow(2).mean()
            loss.backward()
    """,
    # a forward hook that keeps every call's output (a clone per call) in a list, on a module
    # called twice per step: the activation penalty covers both calls
    "hook_per_call_ok": """
        import torch
        from torch import nn
        proj = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
        q_in, d_in = nn.Linear(3, 4), nn.Linear(5, 4)
        acts = []
        proj.register_forward_hook(lambda module, inputs, output: acts.append(output.clone()))
        opt = torch.optim.SGD([*proj.parameters(), *q_in.parameters(), *d_in.parameters()], lr=0.1)
        for _ in range(2):
            acts.clear()
            zq, zd = proj(q_in(torch.randn(6, 3))), proj(d_in(torch.randn(6, 5)))
            loss = (zq @ zd.t()).logsumexp(-1).mean() + 0.1 * sum(a.pow(2).mean() for a in acts)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("patterns")), static=False)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]


def test_freed_graph_is_named_where_the_stale_tensor_is_reused(runs):
    f = _one(runs["freed_reuse"], "GW402")
    assert f.row == 5
    assert site_rows(f, "created") == [3] and site_rows(f, "freed") == [4] and f.backward_site.row == 6


def test_backward_twice_names_where_the_graph_starts(runs):
    f = _one(runs["backward_twice"], "GW401")
    assert f.row == 4 and site_rows(f, "freed") == [7]


def test_missing_detach_names_the_call_that_took_the_tensor_in(runs):
    f = _one(runs["missing_detach"], "GW402")
    assert f.row == 4  # the op (inside critic) that reuses fake
    assert 9 in site_rows(f, "reuse")  # ... called from here
    assert 7 in site_rows(f, "first-use")  # the D step that freed the generator's graph through fake
    assert site_rows(f, "freed") == [8] and 6 in site_rows(f, "created")


def test_expanded_buffer_is_named_where_it_was_made(runs):
    f = _one(runs["expanded_buffer"], "GW301")
    assert f.row == 5 and 7 in site_rows(f, "write")
    f = _one(runs["expanded_local"], "GW301")
    assert f.row == 3 and site_rows(f, "created") == [2]


def test_internal_write_is_named_at_the_call(runs):
    f = _one(runs["internal_write"], "GW201")
    assert f.write_site.row == 6 and f.save_site.row == 6 and f.backward_site.row == 9
    assert "inside torch" in f.message


def test_write_hidden_from_autograd_before_a_use(runs):
    f = _one(runs["hidden_write"], "GW602")
    assert f.row == 4 and f.severity == "warning" and 5 in site_rows(f, "use")
    assert runs["hidden_write"].status == "ok"  # nothing raises: silently wrong gradients


def test_custom_backward_overwriting_a_shared_gradient(runs):
    f = _one(runs["shared_grad"], "GW303")
    assert f.row == 8 and 12 in site_rows(f, "use")


def test_retained_graph_used_after_a_step(runs):
    f = _one(runs["stale_retained"], "GW405")
    assert f.row == 5 and set(site_rows(f, "step")) == {10} and f.backward_site.row == 9
    assert any("stale gradient" in r.message for r in f.related), f.related


def test_gradients_polluted_by_another_optimizers_loss(runs):
    f = _one(runs["polluted"], "GW503")
    assert f.row == 8 and f.severity == "warning"  # the loss that should have taken fake.detach()
    assert sorted(set(site_rows(f, "backward"))) == [9, 12] and site_rows(f, "step") == [10, 13]
    assert runs["polluted"].status == "ok"


def test_intermediate_kept_on_ctx_in_a_double_backward(runs):
    f = _one(runs["ctx_stash"], "GW310")
    assert f.row == 5 and f.backward_site.row == 13 and "two_x" in f.message
    assert runs["ctx_stash"].status == "ok"


def test_stale_tensor_cached_on_a_distribution_names_where_it_was_built(runs):
    f = _one(runs["cached_distribution"], "GW402")
    assert f.row == 6 and site_rows(f, "holder") == [3] and "`logits`" in f.message + str(f.to_json())


def test_a_stale_gradient_saved_and_put_back_is_still_reported(runs):
    f = _one(runs["stale_restored"], "GW405")
    assert f.row == 4 and 13 in site_rows(f, "step")


# --- silent hazards proven by the run (issue 24)
def test_overlapping_windows_written_in_place(runs):
    f = _one(runs["overlap_windows"], "GW714")
    assert f.row == 5 and f.severity == "warning" and f.kind == "overlapping-write"
    assert runs["overlap_windows"].status == "ok"


def test_shift_within_one_tensor_smears_silently(runs):
    f = _one(runs["overlap_shift"], "GW713")
    assert f.row == 3 and f.severity == "warning"


def test_custom_backward_that_ignores_grad_output(runs):
    f = _one(runs["chain_rule_dropped"], "GW709")
    assert f.row == 11 and f.severity == "warning"  # the return that drops grad_output
    assert 13 in site_rows(f, "call") and f.backward_site.row == 13


def test_reentrant_checkpoint_without_grad_input_despite_the_filtered_warning(runs):
    f = _one(runs["checkpoint_no_grad"], "GW708")
    assert f.row == 13 and f.severity == "warning" and "2 trainable" in f.message
    assert 8 in site_rows(f, "created")


def test_non_finite_gradient_of_an_unselected_branch(runs):
    f = _one(runs["nonfinite_branch"], "GW720")
    assert f.row == 6 and f.severity == "warning" and f.backward_site.row == 8
    assert "`weight`" in f.message or "`bias`" in f.message


def test_non_finite_branch_with_the_checks_gathered_on_the_device(runs):
    f = _one(runs["nonfinite_branch_deferred"], "GW720")
    assert f.row == 7 and f.backward_site.row == 8


def test_parameter_cut_by_a_detach_never_trains(runs):
    f = _one(runs["untrained_detach"], "GW719")
    assert f.row == 9 and "`weight`" in f.message and ".detach()" in f.message
    assert site_rows(f, "optimizer") == [4] and site_rows(f, "created") == [3] and site_rows(f, "step") == [13]
    f = _one(runs["untrained_detach_in_function"], "GW719")
    assert f.row == 10 and "`weight`" in f.message and ".detach()" in f.message, f.message
    assert site_rows(f, "optimizer") == [5] and site_rows(f, "created") == [4] and site_rows(f, "step") == [14]


def test_parameter_behind_a_zero_derivative_op(runs):
    f = _one(runs["untrained_round"], "GW718")
    assert f.row == 7 and "`round`" in f.message and "shape [4, 4]" in f.message and site_rows(f, "optimizer") == [5]
    assert f.backward_site.row == 10
    f = _one(runs["zero_via_grad"], "GW718")
    assert f.row == 4 and "`sign`" in f.message and f.backward_site.row == 5


def test_parameter_read_as_a_number(runs):
    f = _one(runs["untrained_item"], "GW719")
    assert f.row == 7 and ".item()" in f.message


def test_parameter_behind_a_custom_backward_that_returns_none_for_it(runs):
    f = _one(runs["untrained_none_return"], "GW719")
    assert f.row == 12 and "returns None for its input 0" in f.message and site_rows(f, "optimizer") == [15]


def test_parameter_rewrapped_as_a_new_leaf(runs):
    found = [f for f in runs["untrained_rewrap"].runtime_findings if f.code == "GW719"]
    assert found and all(f.row == 8 and "nn.Parameter" in f.message for f in found), found
    assert "weight_ih" in " ".join(f.message for f in found)


def test_hook_slot_overwritten_within_a_step_is_only_a_premise(runs):
    result = runs["hook_overwrite"]
    assert result.runtime_findings == []  # no finding of its own: the run cannot know the intent
    [p] = [p for p in result.premises if p.code == "GW721"]
    assert p.row == 7 and sorted(s.row for k, s in p.sites() if k == "call") == [10, 11]
    assert site_rows(p, "created") == [3]
    assert [p.code for p in runs["hook_per_call_ok"].premises] == []
