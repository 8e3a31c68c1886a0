# source: multi-scale detection heads over feature-pyramid levels written as a comprehension over zip(heads, levels) with f.detach() (forum threads "backbone weights not updating", "only the heads train"): every level reaches its head detached, so no loss term reaches the stem or the down-sampling layer
# family: H
# expect: silent
# verify: the stem's weight is compared before and after the steps
# line: 25
# fix: drop the detach: [head(f) for head, f in zip(self.heads, levels)]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PyramidDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 16)
        self.down = nn.Linear(16, 16)
        self.heads = nn.ModuleList([nn.Linear(16, 3), nn.Linear(16, 3)])

    def forward(self, x):
        c1 = torch.relu(self.stem(x))
        c2 = torch.relu(self.down(c1))
        levels = [c1, c2]
        return [head(f.detach()) for head, f in zip(self.heads, levels)]


if __name__ == "__main__":
    model = PyramidDetector()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 8), torch.randint(0, 3, (12,))
    before = model.stem.weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        loss = sum(F.cross_entropy(o, y) for o in model(x))
        loss.backward()
        opt.step()
    print("MISMATCH: the backbone never moves" if torch.equal(before, model.stem.weight) else "MATCH")
