# fix-kind: retain_grad
# why: an input moved with `.to()` (a no-op on its own device) and then marked with
#      `requires_grad_()` is a leaf whose gradient is kept; `retain_grad()` on it before the
#      flag is set raises ("can't retain_grad on Tensor that has requires_grad=False").
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
x = torch.randn(3, 4)
x = x.to("cpu")
x.requires_grad_()
saliency_loss = model(x).max(1).values.sum()
saliency_loss.backward()
print(f"{saliency_loss.item():.6f} {x.grad.abs().sum().item():.6f}")
