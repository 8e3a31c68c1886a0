# fix-kind: no_grad
# why: the manual SGD update is already under `torch.no_grad()`.
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x, y = torch.randn(5, 3), torch.randn(5)
for step in range(3):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    print(f"{step} {loss.item():.6f}")
