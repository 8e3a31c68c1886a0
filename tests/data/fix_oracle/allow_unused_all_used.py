# fix-kind: allow_unused
# why: every differentiated tensor is used: the gradients are tensors, code may rely on it.
import torch

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = (x * w).sum()
gx, gw = torch.autograd.grad(y, [x, w])
print(f"{gx.sum().item():.6f} {gw.sum().item():.6f}")
