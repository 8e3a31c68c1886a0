# source: hard-routing mixture-of-experts and discrete selection layers that build the gate as F.one_hot(router(x).argmax(-1)) (forum threads "router / gating network weights not updating", "argmax is not differentiable", "use gumbel_softmax hard=True"): argmax returns integer indices with no graph, so the router never gets a gradient while the experts train
# family: H
# expect: silent
# verify: the router's weight is compared before and after the steps
# line: 21
# fix: select with a straight-through Gumbel-softmax: gate = F.gumbel_softmax(self.router(x), tau=1.0, hard=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HardRouter(nn.Module):
    def __init__(self, d=8, n=4):
        super().__init__()
        self.router = nn.Linear(d, n)
        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        gate = F.one_hot(self.router(x).argmax(-1), len(self.experts)).float()
        outs = torch.stack([e(x) for e in self.experts], dim=1)
        return (gate.unsqueeze(-1) * outs).sum(1)


if __name__ == "__main__":
    model = HardRouter()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(24, 8), torch.randn(24, 8)
    before = model.router.weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the router never moves" if torch.equal(before, model.router.weight) else "MATCH")
