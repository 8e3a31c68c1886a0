# fix-kind: leave_no_grad
# why: the evaluation pass under `torch.no_grad()` computes a metric, never a loss to train on.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(10, 4), torch.randint(0, 3, (10,))
for epoch in range(2):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        val_loss = nn.functional.cross_entropy(model(x), y)
    print(f"{epoch} {loss.item():.6f} {val_loss.item():.6f}")
