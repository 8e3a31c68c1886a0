# source: metric-learning code that turns cosine similarities into geodesic angles with torch.where(cos < 1, torch.acos(cos), 0) to "protect" identical pairs (issues "NaN loss with arccos", forum threads on acos at 1): the diagonal of u @ u.T is 1, the branch not taken has an infinite derivative there, and the gradient is NaN
# family: H
# expect: ok
# verify: the embedding's gradient is tested for non-finite values
# line: 25  (backward: 33)
# fix: (fixed version of H129_angular_pair_distances_take_acos_under_where_on_the_unit_diagonal.py) clamp inside the acos: torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AngularEmbedder(nn.Module):
    def __init__(self, d_in=10, d=6):
        super().__init__()
        self.proj = nn.Linear(d_in, d)

    def forward(self, x):
        return F.normalize(self.proj(x), dim=-1)


def angular_spread_loss(u, labels):
    cos = u @ u.T
    theta = torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))
    same = (labels[:, None] == labels[None, :]).float()
    return (same * theta).mean() - ((1 - same) * theta).mean()


if __name__ == "__main__":
    net = AngularEmbedder()
    x, labels = torch.randn(8, 10), torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    angular_spread_loss(net(x), labels).backward()
    bad = not torch.isfinite(net.proj.weight.grad).all()
    print("MISMATCH: non-finite gradient on the projection" if bad else "MATCH")
