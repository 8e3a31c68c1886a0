# source: hand-written Mish activations, x * tanh(softplus(x)), written to save memory with an in-place multiply (forum threads "modified by an inplace operation: [TanhBackward0]"): tanh saves its output for the backward, and mul_ overwrites it
# family: B
# expect: error
# line: 22  (backward: 32)
# fix: multiply out of place: t = t * h
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MishMLP(nn.Module):
    def __init__(self, d=10, hidden=20, out=3):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, out)

    def forward(self, x):
        h = self.fc1(x)
        t = torch.tanh(F.softplus(h))
        t.mul_(h)
        return self.fc2(t)


if __name__ == "__main__":
    model = MishMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 10), torch.randint(0, 3, (12,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())
