# fix-kind: unwrap_number
# why: a loss value re-wrapped as a tensor only for logging, while the real loss is backpropagated.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for step in range(3):
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    logged = torch.tensor(loss.item())
    history.append(logged)
print(" ".join(f"{v.item():.6f}" for v in history))
