# source: self-supervised code that wraps a trainable projection in a plain Python class whose __call__ runs it under torch.no_grad() (copied from an EMA-teacher wrapper; forum threads "projector not updating", "grad is None for projection head"): the projection's output carries no graph, so the projection never trains
# family: H
# expect: silent
# verify: the projection's weight is compared before and after the steps
# line: 19, 20
# fix: drop the no_grad block in __call__ (keep it only in the EMA teacher's wrapper)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Projector:
    def __init__(self, layer):
        self.layer = layer

    def __call__(self, h):
        with torch.no_grad():
            return F.normalize(self.layer(h), dim=1)


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    proj_layer = nn.Linear(16, 4)
    projector = Projector(proj_layer)
    opt = torch.optim.SGD(list(encoder.parameters()) + list(proj_layer.parameters()), lr=0.1)
    x, target = torch.randn(12, 8), F.normalize(torch.randn(12, 4), dim=1)
    before = proj_layer.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        z = projector(encoder(x))
        loss = (z - target).pow(2).sum(1).mean() + 0.01 * encoder(x).pow(2).mean()
        loss.backward()
        opt.step()
    print("MISMATCH: the projection never moves" if torch.equal(before, proj_layer.weight) else "MATCH")
