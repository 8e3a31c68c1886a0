# source: https://github.com/pytorch/pytorch/issues/4132 ("x.grad should be 0 but get NaN after x/0": y = x / div, then the positions where div == 0 are masked out; "the backwards pass for indexing returns a tensor that has 0's in it for the masked-out indices. 0 * float('inf') gives nan"); here padded points of a point-cloud batch have all-zero predicted normals and the unit-normalisation guards them with torch.where
# family: H
# expect: ok
# verify: the normal head's gradient is compared with autograd's gradient of the same loss with the norm clamped before the division
# line: 26  (backward: 50)
# fix: (fixed version of H55_padded_point_normals_where_divides_by_zero_norm.py) divide by a norm that cannot be zero: unit = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-8) (or F.normalize), then mask
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NormalEstimator(nn.Module):
    def __init__(self, k=6):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3 * k, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, neighborhoods, valid):
        v = self.mlp(neighborhoods.flatten(-2))
        return v * valid.unsqueeze(-1)  # padded points predict a zero vector


def unit_normals(v):
    n = v.norm(dim=-1, keepdim=True)
    return torch.where(n > 0, v / n.clamp_min(1e-8), torch.zeros_like(v))


def normal_loss(model, neigh, valid, target):
    pred = unit_normals(model(neigh, valid))
    cos = (pred * target).sum(-1).abs()
    return ((1 - cos) * valid).sum() / valid.sum()


def make_batch(b=2, n=10, k=6):
    neigh = torch.randn(b, n, k, 3)
    valid = torch.ones(b, n)
    valid[1, 7:] = 0  # the second cloud has 7 points: the rest is padding
    target = F.normalize(torch.randn(b, n, 3), dim=-1)
    return neigh * valid[..., None, None], valid, target


if __name__ == "__main__":
    model = NormalEstimator()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        neigh, valid, target = make_batch()
        loss = normal_loss(model, neigh, valid, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    neigh, valid, target = make_batch()
    watched = list(model.parameters())
    got = torch.autograd.grad(normal_loss(model, neigh, valid, target), watched)
    v = model(neigh, valid)
    safe = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    ref_loss = ((1 - (safe * target).sum(-1).abs()) * valid).sum() / valid.sum()
    ref = torch.autograd.grad(ref_loss, watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: nan gradients from the padded points that torch.where masked out:",
              sum(int(torch.isnan(g).sum()) for g in got))
