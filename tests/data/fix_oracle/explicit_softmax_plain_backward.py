# fix-kind: explicit_softmax
# why: softmax under plain (reverse-mode) autograd is right; no rewrite is needed or wanted.
import torch
import torch.nn as nn

torch.manual_seed(0)
q, k = nn.Linear(4, 4), nn.Linear(4, 4)
x = torch.randn(2, 3, 4, requires_grad=True)
scores = q(x) @ k(x).transpose(-1, -2) / 2.0
attn = scores.softmax(dim=-1)
loss = (attn @ x).pow(2).sum()
loss.backward()
print(f"{loss.item():.6f} {x.grad.abs().sum().item():.6f}")
