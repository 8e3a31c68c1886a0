# fix-kind: leaf_last
# why: a leaf moved to the device it is already on stays the leaf: `w.grad` is filled; building
#      it in another order must keep the same values (the same random draws).
import torch

torch.manual_seed(0)
w = torch.randn(3, 2, requires_grad=True).to("cpu")
b = (torch.zeros(2) + 0.1).requires_grad_()
x = torch.randn(4, 3)
for step in range(3):
    loss = (x @ w + b).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    print(f"{step} {loss.item():.6f}")
