# source: lazily initialised layers (nn.LazyLinear-style) that create their scale Parameter at the first forward, if self.gamma is None, and are run once on a dummy batch before the optimizer is built: the Parameter is created once and the optimizer holds it
# family: G
# expect: ok
# verify: the scale is compared with its initial value of ones after the steps
# line: 24
# fix: none needed: the Parameter is made once, before the optimizer
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LazyFiLM(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gamma = None
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        h = self.fc(x)
        if self.gamma is None:
            self.gamma = nn.Parameter(torch.ones(h.shape[-1]))
        return self.out(h * self.gamma)


if __name__ == "__main__":
    model = LazyFiLM()
    model(torch.zeros(1, 6))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the scale never moves" if torch.equal(model.gamma, torch.ones(6)) else "MATCH")
