# source: issue 24 of this project (a random program with t2 = w.sum(0, keepdim=True).expand(3, 3); t2.fill_(0.5) is flagged GW301 "raises", and torch runs it: fill_ only writes, it never reads the aliased elements); shaped as a weight-normalised layer whose per-column scale is an expanded statistic, reset to 1 during warm-up with fill_ and used detached
# family: G
# expect: ok
# line: 24
# fix: none needed - fill_ into an expanded tensor is allowed (every aliased element gets the same value) and no backward goes through the filled tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ColumnNormLinear(nn.Module):
    def __init__(self, din=6, dout=4, warmup_steps=2):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dout, din) * 0.5)
        self.bias = nn.Parameter(torch.zeros(dout))
        self.warmup_steps = warmup_steps
        self.steps = 0

    def column_scale(self):
        scale = self.weight.abs().amax(dim=0, keepdim=True).expand_as(self.weight)
        if self.steps < self.warmup_steps:
            scale.fill_(1.0)
        return scale.detach()

    def forward(self, x):
        w = self.weight / self.column_scale().clamp_min(1e-6)
        return F.linear(x, w, self.bias)


if __name__ == "__main__":
    layer = ColumnNormLinear()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for step in range(4):
        x, y = torch.randn(8, 6), torch.randn(8, 4)
        loss = F.mse_loss(layer(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        layer.steps += 1
        print("step", step, "loss", round(loss.item(), 4))
