# fix-kind: freeze_first
# why: the fine-tuning idiom done right: the backbone is frozen, then the new head attached (it
#      trains); a freeze moved around would change which parameters train.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
for param in model.parameters():
    param.requires_grad = False
model[2] = nn.Linear(8, 2)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
opt.step()
print(f"{loss.item():.6f} {model[0].weight.grad is None} {model[2].weight.grad.abs().sum().item():.6f}")
