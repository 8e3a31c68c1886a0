"""An optimizer that holds other tensors than the ones the model uses (engine/checks/reach.py
``_strays``, reported as GW719): the backward gives gradients to parameters no optimizer holds
while the optimizer's own get none. Built over a ``copy.deepcopy`` of the model or over a list
taken before a module was replaced, it is reported at its construction; a weight re-wrapped as a
new ``nn.Parameter`` after it was built is reported at the re-wrap. Each flagged program was run
under torch 2.13 while it was written: the optimizer's parameters keep ``.grad`` None (from the
re-wrap on) and the model's new or original parameters never move."""
from __future__ import annotations

import textwrap
from typing import List, Tuple

from gradwarden.engine.analyze import analyze_source


def _found(src: str) -> List[Tuple[str, int]]:
    return [(d.code, d.span.row) for d in analyze_source(textwrap.dedent(src).lstrip("\n"), "prog.py")
            if d.severity.label in ("error", "warning")]


def _messages(src: str) -> List[str]:
    return [d.message for d in analyze_source(textwrap.dedent(src).lstrip("\n"), "prog.py") if d.code == "GW719"]


COPY = """
    import copy
    import torch
    from torch import nn

    class Student(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(6, 6)
            self.out = nn.Linear(6, 3)

        def forward(self, x):
            return self.out(torch.relu(self.body(x)))

    def train(student):
        teacher = copy.deepcopy(student){freeze}
        opt = torch.optim.Adam({held}.parameters(), lr=1e-3)
        for _ in range(3):
            x = torch.randn(5, 6)
            with torch.no_grad():
                soft = teacher(x).softmax(-1)
            loss = -(soft * student(x).log_softmax(-1)).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

    train(Student())
"""


def test_an_optimizer_over_a_deep_copy_is_reported_at_its_construction():
    src = COPY.format(freeze="", held="teacher")
    assert _found(src) == [("GW719", 16)]
    msg = _messages(src)[0]
    assert "copies of" in msg and "copy made at line 15" in msg and "no optimizer holds" in msg


def test_a_frozen_or_unfrozen_teacher_beside_the_trained_student_is_silent():
    assert _found(COPY.format(freeze="", held="student")) == []
    assert _found(COPY.format(freeze=".requires_grad_(False)", held="student")) == []


REPLACED = """
    import torch
    from torch import nn

    def swap_head(model, n):
        model.head = nn.Linear(8, n)

    backbone = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
    model = nn.Module()
    model.backbone, model.head = backbone, nn.Linear(8, 10)
    for p in model.backbone.parameters():
        p.requires_grad_(False)
    {before}
    swap_head(model, 2)
    {after}
    opt = torch.optim.SGD(params, lr=0.1)
    for _ in range(3):
        x, y = torch.randn(4, 5), torch.randint(0, 2, (4,))
        loss = nn.functional.cross_entropy(model.head(model.backbone(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_parameter_list_taken_before_a_module_is_replaced_is_reported_at_the_optimizer():
    src = REPLACED.format(before="params = [p for p in model.parameters() if p.requires_grad]", after="pass")
    assert _found(src) == [("GW719", 15)]
    assert "parameters the model no longer uses" in _messages(src)[0]


def test_a_parameter_list_taken_after_the_replacement_is_silent():
    src = REPLACED.format(before="pass", after="params = [p for p in model.parameters() if p.requires_grad]")
    assert _found(src) == []


REWRAP = """
    import torch
    from torch import nn

    class Scaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.gain = nn.Parameter(torch.ones(4))

        def reset(self, value):
            {reset}

        def forward(self, x):
            return x * self.gain

    net = nn.Sequential(nn.Linear(4, 4), Scaler())
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(4):
        if step == 2:
            net[1].reset(torch.full((4,), 0.5))
            {rebuild}
        loss = net(torch.randn(3, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_weight_rewrapped_after_the_optimizer_was_built_is_reported_at_the_rewrap():
    src = REWRAP.format(reset="self.gain = nn.Parameter(value.clone())", rebuild="pass")
    assert _found(src) == [("GW719", 10)]
    assert "no optimizer holds" in _messages(src)[0]


def test_an_in_place_reset_or_a_rebuilt_optimizer_is_silent():
    in_place = "with torch.no_grad():\n                self.gain.copy_(value)"
    assert _found(REWRAP.format(reset=in_place, rebuild="pass")) == []
    rebuilt = "opt = torch.optim.SGD(net.parameters(), lr=0.1)"
    assert _found(REWRAP.format(reset="self.gain = nn.Parameter(value.clone())", rebuild=rebuilt)) == []


def test_two_optimizers_over_two_models_are_silent():
    src = """
        import torch
        from torch import nn
        gen, disc = nn.Linear(3, 4), nn.Linear(4, 1)
        opt_g = torch.optim.Adam(gen.parameters())
        opt_d = torch.optim.Adam(disc.parameters())
        for _ in range(3):
            z, real = torch.randn(8, 3), torch.randn(8, 4)
            loss_d = disc(gen(z).detach()).mean() - disc(real).mean()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            loss_g = -disc(gen(z)).mean()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
    """
    assert _found(src) == []
