# source: the fix suggested for https://github.com/pytorch/pytorch/issues/4132 (never form x / 0 in a branch that is masked afterwards): F.normalize divides by max(norm, eps), so padded all-zero vectors stay zero with a zero gradient, and the mask is applied afterwards
# family: G
# expect: ok
# line: 30
# fix: none needed - F.normalize clamps the norm, no branch is non-finite
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NormalHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(18, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, neigh, valid):
        return self.mlp(neigh.flatten(-2)) * valid.unsqueeze(-1)


if __name__ == "__main__":
    head = NormalHead()
    opt = torch.optim.Adam(head.parameters(), lr=1e-3)
    for step in range(3):
        neigh, valid = torch.randn(2, 10, 6, 3), torch.ones(2, 10)
        valid[1, 6:] = 0
        target = F.normalize(torch.randn(2, 10, 3), dim=-1)
        unit = F.normalize(head(neigh * valid[..., None, None], valid), dim=-1)
        unit = torch.where(valid.unsqueeze(-1) > 0, unit, torch.zeros_like(unit))
        loss = ((1 - (unit * target).sum(-1).abs()) * valid).sum() / valid.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        finite = all(torch.isfinite(p.grad).all() for p in head.parameters())
        print("step", step, "loss", round(loss.item(), 4), "finite grads", finite)
        if not finite:
            print("MISMATCH: non-finite gradient")
