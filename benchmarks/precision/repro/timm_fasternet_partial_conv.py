"""timm 1.0.31, timm/models/fasternet.py:55 (GW201 error): Partial_conv3.forward_slicing writes the
convolution's result into the channels of `x` it read: `x[:, :d] = conv(x[:, :d])`. The conv saved
that slice for its backward; the write changes it. timm marks the path "only for inference": a
backward through it raises."""
import sys

import torch
from torch import nn

conv = nn.Conv2d(2, 2, 3, 1, 1, bias=False)
x = torch.randn(1, 4, 5, 5, requires_grad=True)
y = x.clone()
y[:, :2] = conv(y[:, :2])
try:
    y.sum().backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
