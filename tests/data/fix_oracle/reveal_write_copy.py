# fix-kind: reveal_write
# why: statistics computed on a detached copy; the write goes to the copy, never to what the
#      graph uses.
import torch

torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
y = torch.tanh(x)
stats = y.detach().clone()
stats.sub_(stats.mean())
loss = (y * 2).sum()
loss.backward()
print(f"{loss.item():.6f} {stats.abs().sum().item():.6f} {x.grad.sum().item():.6f}")
