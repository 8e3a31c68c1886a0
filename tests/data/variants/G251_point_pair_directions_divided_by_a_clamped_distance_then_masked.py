# source: E(n)-equivariant GNN layers (the egnn-pytorch layout) that normalise pair directions by a clamped distance before blanking self-pairs: the division never sees a zero, so masking the diagonal afterwards leaves every gradient finite
# family: G
# expect: ok
# line: 21
# fix: none needed: the distance is clamped before the division
import torch
import torch.nn as nn

torch.manual_seed(0)


class PairDirections(nn.Module):
    def __init__(self, n_feat=8):
        super().__init__()
        self.coords = nn.Linear(n_feat, 3)

    def forward(self, h):
        pos = self.coords(h)
        rel = pos.unsqueeze(1) - pos.unsqueeze(0)
        dist = rel.norm(dim=-1, keepdim=True)
        unit = rel / dist.clamp(min=1e-8)
        unit = unit.masked_fill(torch.eye(h.shape[0], dtype=torch.bool).unsqueeze(-1), 0.0)
        return unit.sum(dim=1)


if __name__ == "__main__":
    layer = PairDirections()
    h = torch.randn(5, 8)
    loss = layer(h).pow(2).mean()
    loss.backward()
    finite = bool(torch.isfinite(layer.coords.weight.grad).all())
    print("MATCH" if finite else "MISMATCH: non-finite gradient")
