"""The runtime bridge on training-loop hazards that nothing raises (issue 24): a training step run
in eval mode, an optimizer over a model instance the program re-created, a forward hook's slot
(holding an input or a detached alias) overwritten by a second call of its module, and the
correct programs that look like them. Each program runs under torch; the tests assert the
finding's code and line, or that a correct twin gets none."""
from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, only_finding, site_rows, write_programs  # noqa: E402

PROGRAMS = {
    # a straight-through quantizer (`if self.training`, line 6) in a model put in training mode
    # once (line 17) before the loop; the validation's `.eval()` (line 23) leaks into the next
    # epoch: the encoder's gradient through `round` is zero. The fix is the `.train()` (line 17)
    "eval_leaks_into_training": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def forward(self, y):
                if self.training:
                    return y + (torch.round(y) - y).detach()
                return torch.round(y)
        class Codec(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc, self.q, self.dec = nn.Linear(6, 3), Quant(), nn.Linear(3, 6)
            def forward(self, x):
                return self.dec(self.q(self.enc(x) * 4) / 4)
        model = Codec()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.train()
        for epoch in range(3):
            for _ in range(2):
                x = torch.randn(8, 6)
                loss = F.mse_loss(model(x), x)
                opt.zero_grad(); loss.backward(); opt.step()
            model.eval()
            with torch.no_grad():
                print(F.mse_loss(model(x), x).item())
    """,
    # a helper that means to freeze batch norm switches the whole model off (line 14): the
    # gate's eval branch (argmax) gives its own parameters no gradient
    "eval_helper_switches_gate": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
            def forward(self, x):
                logits = self.fc(x)
                if self.training:
                    return F.gumbel_softmax(logits, hard=True)[:, 1:]
                return F.one_hot(logits.argmax(-1), 2)[:, 1:].float()
        def freeze_bn(model):
            model.train(False)
        body, gate = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)), Gate()
        model = nn.ModuleDict({"body": body, "gate": gate})
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.train()
        freeze_bn(model)
        for _ in range(3):
            x = torch.randn(8, 4)
            loss = (model["body"](x) * model["gate"](x)).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
    """,
    # the same modules, trained correctly: `.train()` at every epoch's start after validation, only
    # the batch norm frozen in eval (torch's code), a teacher of the same class left in eval with
    # no optimizer, and a validation forward with grad on before training resumes
    "eval_mode_ok": """
        import torch
        from torch import nn
        import torch.nn.functional as F
        class Quant(nn.Module):
            def forward(self, y):
                if self.training:
                    return y + (torch.round(y) - y).detach()
                return torch.round(y)
        model = nn.Sequential(nn.Linear(6, 3), nn.BatchNorm1d(3), Quant(), nn.Linear(3, 6))
        teacher = nn.Sequential(nn.Linear(6, 3), Quant(), nn.Linear(3, 6)).eval()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            model.train()
            model[1].eval()
            for _ in range(2):
                x = torch.randn(8, 6)
                loss = F.mse_loss(model(x), x) + F.mse_loss(model(x), teacher(x).detach())
                opt.zero_grad(); loss.backward(); opt.step()
            model.eval()
            print(F.mse_loss(model(x), x).item())
    """,
    # the optimizer (line 10) is built over the first instance (line 9); the model is re-created
    # with another size (line 11), and that instance is the one the loss trains
    "optimizer_over_replaced_instance": """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, 1))
            def forward(self, x):
                return self.body(x)
        net = Net(8)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net = Net(16)
        for _ in range(3):
            loss = net(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
    """,
    # instances of one class with gradients outside the optimizer, all correct: a frozen-by-omission
    # feature extractor (another class), an EMA copy (under no_grad), and two towers of the same
    # class with an optimizer each
    "optimizer_instances_ok": """
        import copy
        import torch
        from torch import nn
        class Tower(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return torch.tanh(self.fc(x))
        student, ema = Tower(), Tower()
        left, right = Tower(), Tower()
        features = nn.Linear(4, 4)
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        opt_l, opt_r = torch.optim.SGD(left.parameters(), lr=0.1), torch.optim.SGD(right.parameters(), lr=0.1)
        for _ in range(3):
            x = torch.randn(5, 4)
            with torch.no_grad():
                target = ema(x)
            loss = (features(student(x)) - target).pow(2).mean() + (left(x) * right(x)).mean()
            for o in (opt, opt_l, opt_r):
                o.zero_grad()
            loss.backward()
            for o in (opt, opt_l, opt_r):
                o.step()
            with torch.no_grad():
                for pe, ps in zip(ema.parameters(), student.parameters()):
                    pe.mul_(0.9).add_(0.1 * ps)
    """,
    # the head's parameters reach the optimizer through a filter (line 4), rebuilt every epoch
    # (line 6): the first build empties the iterator, the rebuilt ones get an empty head group
    "optimizer_rebuilt_from_emptied_iterator": """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
        head_params = filter(lambda p: p.requires_grad, head.parameters())
        def make_opt(lr):
            return torch.optim.SGD([{"params": head_params, "lr": lr * 10}, {"params": backbone.parameters()}], lr=lr)
        opt = make_opt(0.1)
        for epoch in range(3):
            for _ in range(2):
                loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
                opt.zero_grad(); loss.backward(); opt.step()
            opt = make_opt(0.1 / (epoch + 1))
    """,
    # the same made a list once; and one iterator given to two optimizers that both live and step
    # (the second's group is empty, but the first applies the gradients)
    "optimizer_iterators_ok": """
        import torch
        from torch import nn
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
        head_params = list(filter(lambda p: p.requires_grad, head.parameters()))
        def make_opt(lr):
            return torch.optim.SGD([{"params": head_params, "lr": lr * 10}, {"params": backbone.parameters()}], lr=lr)
        opt = make_opt(0.1)
        for epoch in range(2):
            loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            opt = make_opt(0.1 / (epoch + 1))
        shared = filter(lambda p: p.requires_grad, backbone.parameters())
        first = torch.optim.SGD(shared, lr=0.1)
        second = torch.optim.SGD([{"params": shared}, {"params": head.parameters()}], lr=0.1)
        for _ in range(2):
            loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
            first.zero_grad(); second.zero_grad(); loss.backward(); first.step(); second.step()
    """,
    # a forward hook that keeps a module's detached input (line 6) on a ReLU used twice per
    # forward (lines 9, 10): the second call replaces the first one's record before the backward
    # hook reads it. The run shows the premise of a static GW721, never a finding alone
    "hook_input_slot": """
        import torch
        from torch import nn
        conv1, conv2, relu = nn.Linear(4, 4), nn.Linear(4, 4), nn.ReLU()
        head = nn.Linear(4, 1)
        def save_input(module, inputs, output):
            module.saved = inputs[0].detach()
        relu.register_forward_hook(save_input)
        x = torch.randn(3, 4, requires_grad=True)
        h = relu(conv1(x))
        h = relu(conv2(h))
        head(h).sum().backward()
    """,
    # the optimizer (line 5) is built over a deep copy of the model (line 4): the loss trains the
    # original, whose parameters no optimizer holds; the copy's never get a gradient
    "optimizer_over_deepcopy": """
        import copy
        import torch
        from torch import nn
        online = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)); target = copy.deepcopy(online)
        opt = torch.optim.Adam(target.parameters(), lr=1e-3)
        for _ in range(3):
            x = torch.randn(6, 4)
            with torch.no_grad():
                goal = target(x).max(1).values
            loss = (online(x).max(1).values - goal).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
    """,
    # the parameter list (line 5) is taken before the head is replaced (line 6); the optimizer built
    # over it (line 7) holds the old head
    "param_list_before_head_swap": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 10))
        model[0].requires_grad_(False)
        params = [p for p in model.parameters() if p.requires_grad]
        model[2] = nn.Linear(8, 3)
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(3):
            loss = nn.functional.cross_entropy(model(torch.randn(4, 5)), torch.randint(0, 3, (4,)))
            opt.zero_grad(); loss.backward(); opt.step()
    """,
    # the same shapes, correct: the copy is a teacher that is not optimised (its grads stay None),
    # and a layer left out of the optimizer unfrozen gets gradients while the optimizer's get theirs
    "copy_teacher_and_unoptimised_layer_ok": """
        import copy
        import torch
        from torch import nn
        student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)); teacher = copy.deepcopy(student)
        opt = torch.optim.Adam(student[2].parameters(), lr=1e-3)
        for _ in range(3):
            x = torch.randn(6, 4)
            with torch.no_grad():
                soft = teacher(x).softmax(-1)
            loss = -(soft * student(x).log_softmax(-1)).sum(-1).mean()
            opt.zero_grad(); loss.backward(); opt.step()
    """,
    # a hook that keeps one clone of the input per call (a list cleared per step): nothing replaced
    "hook_input_per_call_ok": """
        import torch
        from torch import nn
        conv1, conv2, relu = nn.Linear(4, 4), nn.Linear(4, 4), nn.ReLU()
        stack = []
        relu.register_forward_hook(lambda m, inputs, output: stack.append(inputs[0].detach()))
        for _ in range(2):
            stack.clear()
            x = torch.randn(3, 4, requires_grad=True)
            relu(conv2(relu(conv1(x)))).sum().backward()
    """,
    # issue 24's disagreement at runtime: fill_ into a whole expanded tensor of a graph (every
    # broadcast position gets the value written), used detached: torch runs it, nothing is wrong
    "fill_expanded_ok": """
        import torch
        w = torch.randn(3, 4, requires_grad=True)
        scale = w.abs().amax(0, keepdim=True).expand_as(w)
        scale.fill_(1.0)
        (w / scale.detach()).sum().backward()
        t2 = w.sum(0, keepdim=True).expand(3, 4)
        t2.zero_()
        print(w.grad.sum().item())
    """,
    # GW724: BatchNorm trained in eval mode from the second epoch on (validation inside the loop,
    # `.train()` once before it); the gradients differ from train mode's
    "bn_eval_leaks_into_training": """
        import torch
        from torch import nn

        def evaluate(net, x):
            net.eval()
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.train()
        for epoch in range(3):
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            evaluate(model, torch.randn(4, 6))
    """,
    "bn_train_each_epoch_ok": """
        import torch
        from torch import nn

        def evaluate(net, x):
            net.eval()
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            model.train()
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            evaluate(model, torch.randn(4, 6))
    """,
    # a frozen backbone deliberately in eval: the optimizer steps the head only
    "bn_frozen_backbone_eval_ok": """
        import torch
        from torch import nn
        backbone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Dropout(0.2))
        head = nn.Linear(8, 1)
        backbone.eval()
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for epoch in range(3):
            loss = head(backbone(torch.randn(8, 6))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
    # GW724: a helper leaves Dropout off before the training loop
    "dropout_helper_eval": """
        import torch
        from torch import nn

        def evaluate(net, x):
            net.eval()
            with torch.no_grad():
                return net(x).mean().item()

        model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        evaluate(model, torch.randn(4, 6))
        for epoch in range(3):
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("training")), static=False)


def _one(result: DebugResult, code: str):
    assert result.status == "ok", result.message
    return only_finding(result, code)


@pytest.mark.parametrize("name", sorted(n for n in PROGRAMS if n.endswith("_ok")))
def test_correct_programs_have_no_finding(runs, name):
    result = runs[name]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], [(f.code, f.row, f.message) for f in result.runtime_findings]
    assert [p.code for p in result.premises] == []


def test_eval_switch_leaking_into_training_is_named_at_the_train_call(runs):
    result = runs["eval_leaks_into_training"]
    # the zero-derivative op is shown too (zerograd.py, at `round`); the mode switch is the fix
    assert sorted(f.row for f in result.runtime_findings if f.code == "GW718") == [8, 17]
    [f] = [f for f in result.runtime_findings if f.row == 17]
    assert f.code == "GW718" and "Quant" in f.message and "eval mode" in f.message
    assert site_rows(f, "eval") == [23] and site_rows(f, "step") == [22]


def test_helper_switching_the_model_off_is_named_at_its_switch(runs):
    f = _one(runs["eval_helper_switches_gate"], "GW719")
    assert f.row == 14 and "Gate" in f.message
    assert site_rows(f, "eval") == []


def test_optimizer_over_a_replaced_instance(runs):
    f = _one(runs["optimizer_over_replaced_instance"], "GW719")
    assert f.row == 11 and "Net" in f.message
    assert site_rows(f, "optimizer") == [10] and site_rows(f, "created") == [9]


def test_optimizer_over_a_deep_copy_is_named_at_the_optimizer(runs):
    f = _one(runs["optimizer_over_deepcopy"], "GW719")
    assert f.row == 5 and "no optimizer holds" in f.message
    assert site_rows(f, "step") == [11]


def test_parameter_list_taken_before_a_module_swap_is_named_at_the_optimizer(runs):
    f = _one(runs["param_list_before_head_swap"], "GW719")
    assert f.row == 7 and "no optimizer holds" in f.message, (f.row, f.message)


def test_hook_slot_of_an_input_alias_is_a_premise(runs):
    result = runs["hook_input_slot"]
    assert result.runtime_findings == []
    [p] = [p for p in result.premises if p.code == "GW721"]
    assert p.row == 6 and sorted(site_rows(p, "call")) == [9, 10]


def test_optimizer_rebuilt_from_an_emptied_iterator(runs):
    f = _one(runs["optimizer_rebuilt_from_emptied_iterator"], "GW719")
    assert f.row == 4 and "one-shot iterator" in f.message
    assert sorted(site_rows(f, "optimizer")) == [6, 6] and site_rows(f, "step") == [11]


def test_batchnorm_left_in_eval_by_validation_is_named_at_the_train_call(runs):
    f = _one(runs["bn_eval_leaks_into_training"], "GW724")
    assert f.row == 11 and "BatchNorm1d" in f.message and "running statistics" in f.message
    assert site_rows(f, "step") == [16]


def test_dropout_left_off_by_a_helper_is_named_at_its_eval(runs):
    f = _one(runs["dropout_helper_eval"], "GW724")
    assert f.row == 5 and "Dropout" in f.message
    assert site_rows(f, "step") == [16]
