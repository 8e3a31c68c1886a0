# fix-kind: straight_through
# why: `torch.round` for an accuracy metric (never in the loss) is right.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 3), torch.randint(0, 2, (8, 1)).float()
    prob = torch.sigmoid(model(x))
    loss = nn.functional.binary_cross_entropy(prob, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (torch.round(prob) == y).float().mean()
    print(f"{step} {loss.item():.6f} {acc.item():.3f}")
