# source: FiLM / adapter layers written with the learnable scale created in forward, self.gamma = nn.Parameter(torch.ones(x.shape[-1])), "so that it gets the right size" (forum threads "nn.Parameter created in forward not updating", "parameter resets every iteration"): every call replaces the Parameter with a fresh one of ones, which no optimizer holds
# family: H
# expect: ok
# verify: the scale is compared with its initial value of ones after the steps
# line: 23
# fix: (fixed version of H164_film_layer_creates_its_scale_parameter_inside_forward.py) create self.gamma = nn.Parameter(torch.ones(d)) once in __init__ (or use nn.LazyLinear-style lazy init once)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FiLMHead(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gamma = nn.Parameter(torch.ones(d))
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        h = self.fc(x)
        return self.out(h * self.gamma)


if __name__ == "__main__":
    model = FiLMHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the scale never moves" if torch.equal(model.gamma, torch.ones(6)) else "MATCH")
