# fix-kind: zero_grad
# why: gradient accumulation: zero_grad after every second step is intended.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
opt.zero_grad()
for step in range(4):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x), y) / 2
    loss.backward()
    if step % 2 == 1:
        opt.step()
        opt.zero_grad()
    print(f"{step} {loss.item():.6f}")
