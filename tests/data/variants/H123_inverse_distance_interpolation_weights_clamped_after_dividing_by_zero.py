# source: point-cloud feature propagation (PointNet++ three_interpolate by inverse squared distance) where the fine points include the coarse points themselves (issues "NaN gradients in feature propagation"): 1 / d2 is inf on those pairs and .clamp(max=...) hides it in the forward, but the gradient of 1 / d2 at 0 times the clamp's zero is NaN
# family: H
# expect: silent
# verify: the coordinates' gradient is tested for non-finite values
# line: 23  (backward: 33)
# fix: clamp the distance before dividing: w = 1.0 / d2.clamp(min=1e-4)
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
        anchors = self.coords[coarse_idx]
        d2 = (self.coords.unsqueeze(1) - anchors.unsqueeze(0)).pow(2).sum(-1)
        w = (1.0 / d2).clamp(max=1e4)
        w = w / w.sum(dim=1, keepdim=True)
        return self.mix(w @ coarse_feats)


if __name__ == "__main__":
    net = FeaturePropagation()
    coarse_idx = torch.tensor([0, 3, 7, 9])
    out = net(coarse_idx, torch.randn(4, 4))
    loss = out.pow(2).mean()
    loss.backward()
    print("loss %.4f" % loss.item())
    print("MISMATCH: non-finite gradient on the coordinates" if not torch.isfinite(net.coords.grad).all() else "MATCH")
