# fix-kind: recompute
# why: two losses over one forward, the first backward keeps the graph: correct; recomputing
#      the forward would draw new dropout masks.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
x = torch.randn(6, 4)
out = model(x)
loss_a = out[:, 0].pow(2).mean()
loss_b = out[:, 1].abs().mean()
loss_a.backward(retain_graph=True)
g_a = model[0].weight.grad.clone()
loss_b.backward()
print(f"{loss_a.item():.6f} {loss_b.item():.6f} {g_a.abs().sum().item():.6f} "
      f"{model[0].weight.grad.abs().sum().item():.6f}")
