# fix-kind: reduce_loss
# why: a per-sample loss backpropagated with an explicit gradient (ones_like: the sum) is right;
#      `.mean()` would scale every gradient.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 1)
x, y = torch.randn(4, 5), torch.randn(4)
losses = nn.functional.mse_loss(model(x).squeeze(-1), y, reduction="none")
losses.backward(torch.ones_like(losses))
print(f"{losses.sum().item():.6f} {model.weight.grad.abs().sum().item():.6f}")
