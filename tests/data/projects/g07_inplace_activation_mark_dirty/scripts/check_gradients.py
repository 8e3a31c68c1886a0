import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from modules import InPlaceActBlock  # noqa: E402


class Reference(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.conv, self.bn, self.slope = block.conv, block.bn, block.slope

    def forward(self, x):
        return F.leaky_relu(self.bn(self.conv(x)), self.slope)


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(InPlaceActBlock(2, 4), InPlaceActBlock(4, 4))
    ref = nn.Sequential(*[Reference(b) for b in copy.deepcopy(net)])
    x = torch.randn(3, 2, 5, 5)
    (net(x) ** 2).mean().backward()
    (ref(x) ** 2).mean().backward()
    ok = all(torch.allclose(a.grad, b.grad, atol=1e-5) for a, b in zip(net.parameters(), ref.parameters()))
    print("MATCH" if ok else "MISMATCH")
