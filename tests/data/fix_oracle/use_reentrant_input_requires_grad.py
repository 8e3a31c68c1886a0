# fix-kind: use_reentrant
# why: a reentrant checkpoint whose input requires grad gives every parameter its gradient.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
stem = nn.Linear(4, 4)
x = torch.randn(3, 4)
h = stem(x)
out = checkpoint(block, h, use_reentrant=True)
out.sum().backward()
print(f"{block[0].weight.grad.abs().sum().item():.6f} {stem.weight.grad.abs().sum().item():.6f}")
