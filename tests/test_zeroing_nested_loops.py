"""GW725 (a zeroing call that misses part of what an optimizer steps) on a loop with a loop nested in
it: one backward per head into a shared trunk, each head stepped after its own backward, the trunk
stepped once after the heads. When the trunk's own optimizer is zeroed at the top of every
iteration, the trunk's gradient is the sum of this iteration's heads, on purpose; when nothing
zeroes it, the sum runs over every iteration. Both run under torch to show which is which. A line
ending in ``# <-`` is where a finding must be reported; a twin must stay clean."""
import subprocess
import sys
import textwrap

import pytest

from marked_cases import findings as _findings, marked as _marked

PER_HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
heads = nn.ModuleList([nn.Linear(16, 3), nn.Linear(16, 4)])
trunk_opt = torch.optim.SGD(trunk.parameters(), lr=0.0)
head_opts = [torch.optim.SGD(h.parameters(), lr=0.0) for h in heads]
for it in range(3):
    x = torch.randn(5, 6)
    ys = [torch.randint(0, 3, (5,)), torch.randint(0, 4, (5,))]
    feats = trunk(x)
    TRUNK_ZERO
    for head, opt, y in zip(heads, head_opts, ys):
        opt.zero_grad()  HEAD_MARK
        loss = F.cross_entropy(head(feats), y)
        loss.backward(retain_graph=True)
        opt.step()
    PROBE
    trunk_opt.step()
"""

# the trunk's gradient at its step, against the sum of this iteration's two head losses' gradients
PROBE = """own = torch.autograd.grad(sum(F.cross_entropy(h(feats), y) for h, y in zip(heads, ys)), trunk[0].weight, retain_graph=True)[0]
    print("SAME" if torch.allclose(trunk[0].weight.grad, own, atol=1e-6) else "SUMMED")"""


def _program(zeroed: bool, probe: bool = False) -> str:
    src = PER_HEAD.replace("TRUNK_ZERO", "trunk_opt.zero_grad()" if zeroed else "pass")
    src = src.replace("HEAD_MARK", "" if zeroed else "# <-")
    return src.replace("PROBE", PROBE if probe else "pass")


@pytest.mark.parametrize("zeroed", [True, False])
def test_per_head_backwards_into_a_zeroed_trunk(zeroed):
    src = _program(zeroed)
    codes = [(row, code) for row, code, _ in _findings(src)]
    if zeroed:
        assert codes == []
    else:
        assert codes == [(n, "GW725") for n in _marked(src)]


@pytest.mark.parametrize("zeroed", [True, False])
def test_per_head_backwards_into_a_zeroed_trunk_under_torch(zeroed):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_program(zeroed, probe=True))],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = out.stdout.split()
    assert seen[0] == "SAME"  # the first iteration starts from no gradient either way
    assert set(seen[1:]) == ({"SAME"} if zeroed else {"SUMMED"})
