# source: inverse-distance interpolation (PointNet++ feature propagation) with the squared distance floored before the division, so coincident points get a large finite weight
# family: G
# expect: ok
# line: 26
# fix: none needed: the division never sees an exact zero
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeaturePropagation(nn.Module):
    def __init__(self, n_fine=12, d=4):
        super().__init__()
        self.coords = nn.Parameter(torch.randn(n_fine, 3))
        self.mix = nn.Linear(d, d)

    def forward(self, coarse_idx, coarse_feats):
        d2 = torch.cdist(self.coords, self.coords[coarse_idx]).pow(2)
        w = d2.clamp(min=1e-8).reciprocal()
        w = w / w.sum(dim=1, keepdim=True)
        return self.mix(w @ coarse_feats)


if __name__ == "__main__":
    net = FeaturePropagation()
    out = net(torch.tensor([1, 4, 6, 10]), torch.randn(4, 4))
    loss = out.pow(2).mean()
    loss.backward()
    print("loss %.4f" % loss.item())
    print("MISMATCH: non-finite gradient on the coordinates" if not torch.isfinite(net.coords.grad).all() else "MATCH")
