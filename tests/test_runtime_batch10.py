"""The runtime bridge's detectors widened from the spelling their first cases used to the kind
(issue 24, the generality pass before batch 10), each written as a program of the kind with a
correct twin on which the run finds nothing:

- a parameter given to the optimizer after it was built (``add_param_group``, a group's list
  edited) is followed like one given at construction (GW719 when it is read only through a cut);
- ``torch.tensor(t)`` / ``x.new_tensor(t)`` of a graph tensor is a cut, as ``.detach()`` is (the
  parameters it was computed from never train: GW719 at that call);
- a module whose ``self.training`` branch sits in a helper method that ``forward`` calls (not in
  ``forward`` itself) is watched in eval mode like one that branches in ``forward`` (GW718 at the
  switch when every one of its parameters then gets an exactly zero gradient);
- a copy cut from the graph is followed before the first backward of a program without an
  optimizer too (one backward whose gradients the program reads): a loss term computed from it is
  GW722 (a forward pre-hook's ``args[0].detach()``);
- a parameter re-wrapped as a new leaf (``nn.Embedding.from_pretrained(self.vectors.weight,
  freeze=False)`` in ``forward``, ``nn.Parameter(layer.weight)``) is a cut of the parameter;
- a view made under ``no_grad`` by your code and written in place with grad on raises at the
  write; where the view was made is a related site (the line the fix moves);
- an exactly zero gradient behind a zero-derivative op (GW718) names, as a note, the line that uses
  the op's output on the only path to the loss (a straight-through estimator that detaches both of
  its live terms);
- an optimizer whose tensors are all detached aliases of parameters that backward gives gradients
  (``SGD(model.state_dict().values())``) is GW707 where it was built;
- ``p.grad = None`` assigned in a loop is a zeroing call (GW725 when it clears part of what an
  optimizer steps, the rest accumulating);
- a freed graph whose stale tensor a variable of the frame that backwards still holds (the first
  step's losses kept as a reference) is shown at that variable's store, the read as a reuse site;
- a custom backward's gradient of the wrong shape is shown at its ``return`` with, as a related
  site, the line that computed the local variable returned at that index;
- a value with non-finite elements hidden by ``nan_to_num`` or selected around by ``where`` /
  ``masked_fill`` has the op that made it watched, whatever that op is: a product's backward turns
  the zero gradient into ``0 x -inf = NaN`` (GW720 at the product, where the operand was made as a
  note).

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
    # no optimizer (one backward, the gradients read by the program): a forward pre-hook keeps the
    # classifier's input as `args[0].detach()` (line 7), the covariance penalty made from it (line
    # 12) is a constant of the loss backwarded at line 14
    "prehook_copy": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        body, out = nn.Sequential(nn.Linear(6, 8), nn.ReLU()), nn.Linear(8, 2)
        seen = {}
        def grab(module, args):
            seen["h"] = args[0].detach()
        out.register_forward_pre_hook(grab)
        x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
        logits = out(body(x))
        h = seen["h"] - seen["h"].mean(0)
        penalty = (h.t() @ h).pow(2).sum()
        loss = F.cross_entropy(logits, y) + 0.1 * penalty
        loss.backward()
        print(body[0].weight.grad.norm())
    """,
    "prehook_copy_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        body, out = nn.Sequential(nn.Linear(6, 8), nn.ReLU()), nn.Linear(8, 2)
        seen = {}
        def grab(module, args):
            seen["h"] = args[0]
        out.register_forward_pre_hook(grab)
        x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
        logits = out(body(x))
        h = seen["h"] - seen["h"].mean(0)
        penalty = (h.t() @ h).pow(2).sum()
        loss = F.cross_entropy(logits, y) + 0.1 * penalty
        loss.backward()
        print(body[0].weight.grad.norm())
    """,
    # the same penalty kept live and also logged with float() of a detached copy: nothing cut enters
    # the loss
    "prehook_logged_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        body, out = nn.Sequential(nn.Linear(6, 8), nn.ReLU()), nn.Linear(8, 2)
        seen = {}
        def grab(module, args):
            seen["h"], seen["mean"] = args[0], args[0].detach().mean()
        out.register_forward_pre_hook(grab)
        x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
        logits = out(body(x))
        loss = F.cross_entropy(logits, y) + 0.1 * seen["h"].pow(2).mean()
        loss.backward()
        print("mean %.3f" % float(seen["mean"]))
    """,
    # log-probabilities of -inf-masked logits (line 8): exp() is exactly 0 there and 0 * -inf is NaN
    # (line 9), hidden in the forward by nan_to_num; the product's backward multiplies the zero
    # gradient by -inf: NaN reaches the weights
    "masked_entropy": """
        import torch
        from torch import nn
        net = nn.Linear(4, 5)
        x = torch.randn(6, 4)
        legal = torch.rand(6, 5) > 0.4
        legal[:, 0] = True
        logits = net(x).masked_fill(~legal, float("-inf"))
        logp = torch.log_softmax(logits, -1)
        entropy = -(logp.exp() * logp).nan_to_num(0.0).sum(-1).mean()
        (-0.01 * entropy + logp[:, 0].mean()).backward()
        print(torch.isfinite(net.weight.grad).all())
    """,
    "masked_entropy_ok": """
        import torch
        from torch import nn
        net = nn.Linear(4, 5)
        x = torch.randn(6, 4)
        legal = torch.rand(6, 5) > 0.4
        legal[:, 0] = True
        logits = net(x).masked_fill(~legal, float("-inf"))
        logp = torch.log_softmax(logits, -1).clamp_min(-1e4)
        entropy = -(logp.exp() * logp).nan_to_num(0.0).sum(-1).mean()
        (-0.01 * entropy + logp[:, 0].mean()).backward()
        print(torch.isfinite(net.weight.grad).all())
    """,
    # the same product selected around with torch.where (line 10)
    "masked_entropy_where": """
        import torch
        from torch import nn
        net = nn.Linear(4, 5)
        x = torch.randn(6, 4)
        legal = torch.rand(6, 5) > 0.4
        legal[:, 0] = True
        logits = net(x).masked_fill(~legal, float("-inf"))
        logp = torch.log_softmax(logits, -1)
        plogp = logp.exp() * logp
        entropy = -torch.where(legal, plogp, torch.zeros_like(plogp)).sum(-1).mean()
        entropy.backward()
        print(torch.isfinite(net.weight.grad).all())
    """,
    # the weight's gradient computed in the transposed layout (line 11) and returned (line 12):
    # "returned an invalid gradient at index 1 - got [3, 2] but expected shape compatible with [2, 3]"
    "grad_transposed": """
        import torch
        class HandLinear(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
                ctx.save_for_backward(x, weight)
                return x.mm(weight.t())
            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                grad_x = grad_output.mm(weight)
                grad_weight = x.t().mm(grad_output)
                return grad_x, grad_weight
        w = torch.randn(2, 3, requires_grad=True)
        HandLinear.apply(torch.randn(4, 3), w).sum().backward()
    """,
    "grad_transposed_ok": """
        import torch
        class HandLinear(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, weight):
                ctx.save_for_backward(x, weight)
                return x.mm(weight.t())
            @staticmethod
            def backward(ctx, grad_output):
                x, weight = ctx.saved_tensors
                grad_x = grad_output.mm(weight)
                grad_weight = grad_output.t().mm(x)
                return grad_x, grad_weight
        w = torch.randn(2, 3, requires_grad=True)
        HandLinear.apply(torch.randn(4, 3), w).sum().backward()
    """,
    # the table is re-wrapped as a new Parameter on every call (line 9): the loss trains the new
    # leaf, the `vectors.weight` the optimizer holds never gets a gradient
    "rewrapped_leaf": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.vectors, self.out = nn.Embedding(20, 6), nn.Linear(6, 2)
            def forward(self, ids):
                table = nn.Embedding.from_pretrained(self.vectors.weight, freeze=False)
                return self.out(table(ids).mean(1))
        model = Bag()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(model(torch.randint(0, 20, (4, 5))), torch.randint(0, 2, (4,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "rewrapped_leaf_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.vectors, self.out = nn.Embedding(20, 6), nn.Linear(6, 2)
            def forward(self, ids):
                return self.out(F.embedding(ids, self.vectors.weight).mean(1))
        model = Bag()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = F.cross_entropy(model(torch.randint(0, 20, (4, 5))), torch.randint(0, 2, (4,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the diagonal view is taken in a no_grad block (line 7) and written with grad on (line 8):
    # "A view was created in no_grad mode and is being modified inplace with grad mode enabled"
    "nograd_view": """
        import torch
        bias = torch.zeros(4, requires_grad=True)
        q = torch.randn(4, 3, requires_grad=True)
        scores = q @ q.t()
        with torch.no_grad():
            blocked = scores < 0
            diag = scores.diagonal()
        diag.add_(bias)
        scores.masked_fill(blocked, -1e9).softmax(-1).sum().backward()
    """,
    "nograd_view_ok": """
        import torch
        bias = torch.zeros(4, requires_grad=True)
        q = torch.randn(4, 3, requires_grad=True)
        scores = q @ q.t()
        with torch.no_grad():
            blocked = scores < 0
        diag = scores.diagonal()
        diag.add_(bias)
        scores.masked_fill(blocked, -1e9).softmax(-1).sum().backward()
    """,
    # a straight-through estimator that detaches both live terms (line 10): `round` (line 9) is the
    # encoder's only path to the loss, its weights get exactly zero gradients
    "ste_both_detached": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc, dec = nn.Linear(4, 3), nn.Linear(3, 4)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(5, 4)
            z = torch.tanh(enc(x))
            q = z.round()
            zq = z.detach() + (q - z.detach())
            loss = F.mse_loss(dec(zq), x)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "ste_both_detached_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        enc, dec = nn.Linear(4, 3), nn.Linear(3, 4)
        opt = torch.optim.SGD([*enc.parameters(), *dec.parameters()], lr=0.1)
        for step in range(2):
            x = torch.randn(5, 4)
            z = torch.tanh(enc(x))
            q = z.round()
            zq = z + (q - z).detach()
            loss = F.mse_loss(dec(zq), x)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # the optimizer is handed the state_dict's tensors (line 5): detached aliases of the parameters,
    # they never get a gradient and step() changes nothing
    "state_dict_optimizer": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.state_dict().values(), lr=0.5)
        for step in range(2):
            loss = F.cross_entropy(model(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "state_dict_optimizer_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for step in range(2):
            loss = F.cross_entropy(model(torch.randn(6, 4)), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # an optimizer over a frozen model's parameters next to the one that trains: it steps nothing,
    # and nothing it holds is an alias of a trained parameter
    "frozen_optimizer_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        frozen, head = nn.Linear(4, 4).requires_grad_(False), nn.Linear(4, 2)
        opt_frozen = torch.optim.SGD(frozen.parameters(), lr=0.5)
        opt = torch.optim.SGD(head.parameters(), lr=0.5)
        for step in range(2):
            loss = F.cross_entropy(head(frozen(torch.randn(6, 4))), torch.randint(0, 2, (6,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            opt_frozen.step()
    """,
    # gradients cleared by hand for the student only (line 8): the projector's accumulate, step
    # after step, in the same optimizer
    "manual_reset": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        student, projector = nn.Linear(4, 3), nn.Linear(3, 5)
        opt = torch.optim.SGD([*student.parameters(), *projector.parameters()], lr=0.1)
        for step in range(3):
            for p in student.parameters():
                p.grad = None
            loss = F.mse_loss(projector(student(torch.randn(6, 4))), torch.randn(6, 5))
            loss.backward()
            opt.step()
    """,
    "manual_reset_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        student, projector = nn.Linear(4, 3), nn.Linear(3, 5)
        opt = torch.optim.SGD([*student.parameters(), *projector.parameters()], lr=0.1)
        for step in range(3):
            for p in [*student.parameters(), *projector.parameters()]:
                p.grad = None
            loss = F.mse_loss(projector(student(torch.randn(6, 4))), torch.randn(6, 5))
            loss.backward()
            opt.step()
    """,
    # the first step's losses kept with their graph as the reference (line 9), read at line 10:
    # the second step's backward goes through the first step's freed graph
    "reference_kept": """
        import torch
        from torch import nn
        net = nn.Linear(4, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        first = None
        for step in range(3):
            losses = net(torch.randn(5, 4)).pow(2).mean(0)
            if first is None:
                first = losses
            loss = (losses / first).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    "reference_kept_ok": """
        import torch
        from torch import nn
        net = nn.Linear(4, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        first = None
        for step in range(3):
            losses = net(torch.randn(5, 4)).pow(2).mean(0)
            if first is None:
                first = losses.detach()
            loss = (losses / first).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # a running state carried from step to step detached on purpose (truncated backpropagation):
    # the previous state is a constant term of the new one by design
    "carried_state_ok": """
        import torch
        from torch import nn
        cell = nn.Linear(4, 4)
        opt = torch.optim.SGD(cell.parameters(), lr=0.1)
        state = torch.zeros(1, 4)
        for step in range(3):
            new = 0.5 * state + torch.tanh(cell(torch.randn(3, 4))).mean(0, keepdim=True)
            loss = new.pow(2).sum() + new.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            state = new.detach()
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


def test_pre_hook_copy_without_an_optimizer_is_a_dead_term(runs):
    result = runs["prehook_copy"]
    assert result.status == "ok", result.message
    f = _one(result, "GW722")
    assert f.row == 7 and ".detach()" in f.message and site_rows(f, "backward") == [14]


@pytest.mark.parametrize("name,row", [("masked_entropy", 9), ("masked_entropy_where", 9)])
def test_product_with_an_infinite_operand_hidden_by_a_mask(runs, name, row):
    f = _one(runs[name], "GW720")
    assert f.row == row and 8 in site_rows(f, "note") and "0 x inf = NaN" in f.message


def test_gradient_of_the_wrong_shape_names_where_it_is_computed(runs):
    f = _one(runs["grad_transposed"], "GW307")
    assert f.row == 12 and site_rows(f, "created") == [11] and "index 1" in f.message


def test_parameter_rewrapped_as_a_new_leaf_never_trains(runs):
    f = [f for f in runs["rewrapped_leaf"].runtime_findings if f.code == "GW719"]
    assert [x.row for x in f] == [9], [(x.code, x.row, x.message) for x in runs["rewrapped_leaf"].runtime_findings]


def test_view_made_under_no_grad_and_written_later_names_the_view(runs):
    result = runs["nograd_view"]
    [f] = [f for f in result.runtime_findings if f.code == "GW711"]
    assert f.row == 8 and site_rows(f, "created") == [7]


def test_zero_derivative_op_names_where_its_output_is_used(runs):
    f = _one(runs["ste_both_detached"], "GW718")
    assert f.row == 9 and site_rows(f, "note") == [10]


def test_optimizer_over_detached_aliases_of_the_parameters(runs):
    f = _one(runs["state_dict_optimizer"], "GW707")
    assert f.row == 5 and site_rows(f, "step") == [10] and "`weight`" in f.message


def test_grad_set_to_none_by_hand_for_part_of_the_optimizer(runs):
    f = _one(runs["manual_reset"], "GW725")
    assert f.row == 8 and site_rows(f, "step") == [11] and "`weight`, `bias`" in f.message


def test_stale_tensor_kept_in_a_variable_is_shown_at_its_store(runs):
    f = _one(runs["reference_kept"], "GW402")
    assert f.row == 9 and 10 in site_rows(f, "reuse") and "`first`" in f.message
