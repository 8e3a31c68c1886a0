"""The runtime bridge on the kinds of batch 9 (issue 24) it missed at first contact, each written
as other programs of the kind with a correct twin on which the run finds nothing: a parameter
used only through its own ``.detach()`` (GW719 at the detach; one the program moves by a running
mean is not untrained), a probe leaf made with ``feats.detach().requires_grad_()`` beside the live
loss (no write: ``requires_grad_`` moves no version). The comments say what torch does (ground
truth: run the file plainly)."""
from __future__ import annotations

from typing import Dict

import pytest

pytest.importorskip("torch")

from gradwarden.runtime import DebugResult  # noqa: E402
from runtime_runs import debug_runs, site_rows, write_programs  # noqa: E402

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
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, DebugResult]:
    return debug_runs(write_programs(PROGRAMS, tmp_path_factory.mktemp("batch9")), static=False)


def _one(result: DebugResult, code: str):
    found = [f for f in result.runtime_findings if f.code == code]
    assert len(found) == 1, [(f.code, f.row, f.message) for f in result.runtime_findings]
    return found[0]


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
