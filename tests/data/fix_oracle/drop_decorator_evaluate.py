# fix-kind: drop_decorator
# why: `@torch.no_grad()` on an evaluation function is exactly right.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)


@torch.no_grad()
def evaluate(m, x, y):
    return nn.functional.cross_entropy(m(x), y)


x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
opt.step()
print(f"{loss.item():.6f} {evaluate(model, x, y).item():.6f}")
