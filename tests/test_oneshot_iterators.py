"""One-shot iterators handed to optimizers (engine/domain/builtins.py, optimizers.py; reported by
engine/checks/reach.py as GW719) and torch's transformer blocks followed as reaching their input
(engine/checks/flowtorch.py). Each flagged program was run under torch 2.13 while it was written:
the rebuilt optimizer's first group is empty, and the position embedding's ``.grad`` stays None."""
from __future__ import annotations

import textwrap
from typing import List, Tuple

from gradwarden.engine.analyze import analyze_source


def _found(src: str) -> List[Tuple[str, int]]:
    return [(d.code, d.span.row) for d in analyze_source(textwrap.dedent(src).lstrip("\n"), "prog.py")
            if d.severity.label in ("error", "warning")]


REBUILT = """
    import torch
    from torch import nn
    backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
    head_params = {make}
    def make_opt(lr):
        return torch.optim.SGD([{{"params": head_params, "lr": lr * 10}}, {{"params": backbone.parameters()}}], lr=lr)
    opt = make_opt(0.1)
    for epoch in range(3):
        for _ in range(2):
            loss = head(backbone(torch.randn(8, 4))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        opt = make_opt(0.1 / (epoch + 1))
"""


def test_filter_and_iter_are_consumed_by_the_first_optimizer():
    assert _found(REBUILT.format(make="filter(lambda p: p.requires_grad, head.parameters())")) == [("GW719", 4)]
    assert _found(REBUILT.format(make="iter(list(head.parameters()))")) == [("GW719", 4)]


def test_a_list_is_given_to_every_rebuild():
    assert _found(REBUILT.format(make="list(filter(lambda p: p.requires_grad, head.parameters()))")) == []
    assert _found(REBUILT.format(make="list(head.parameters())")) == []


def test_an_iterator_consumed_by_another_optimizer_is_not_said():
    # two optimizers from one iterator: the second gets nothing, but the first may step them; the
    # run-time fact the analysis does not follow (which one the program keeps) decides
    src = """
        import torch
        from torch import nn
        head = nn.Linear(4, 1)
        params = filter(lambda p: p.requires_grad, head.parameters())
        first = torch.optim.SGD(params, lr=0.1)
        second = torch.optim.SGD([{"params": params}, {"params": [nn.Parameter(torch.zeros(1))]}], lr=0.1)
        for _ in range(2):
            loss = head(torch.randn(8, 4)).pow(2).mean()
            first.zero_grad()
            loss.backward()
            first.step()
            second.step()
    """
    assert _found(src) == []


ENCODER = """
    import torch
    from torch import nn
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(20, 8)
            self.pos = nn.Parameter(torch.zeros(1, 6, 8))
            layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
            self.head = nn.Linear(8, 2)
        def forward(self, tokens):
            h = {embed}
            return self.head(self.encoder(h).mean(1))
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        loss = model(torch.randint(0, 20, (3, 6))).logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(model.pos.norm())
"""


def test_transformer_encoder_reaches_its_input_only():
    assert _found(ENCODER.format(embed="self.tok(tokens)")) == [("GW719", 12)]
    assert _found(ENCODER.format(embed="self.tok(tokens) + self.pos")) == []


def test_transformer_encoder_on_raw_inputs_stays_open():
    # the block's own parameters (which the analysis does not list) may give its output a graph
    src = """
        import torch
        from torch import nn
        layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
        enc = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        head = nn.Linear(8, 2)
        opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=1e-3)
        for _ in range(2):
            loss = head(enc(torch.randn(3, 6, 8)).mean(1)).logsumexp(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    assert _found(src) == []
