# fix-kind: requires_grad_method
# why: freezing a backbone through its parameters' flags is right.
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 2)
for p in backbone.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(head.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
loss = nn.functional.cross_entropy(head(backbone(x)), y)
loss.backward()
opt.step()
print(f"{loss.item():.6f} {backbone.weight.grad is None} {head.weight.grad.abs().sum().item():.6f}")
