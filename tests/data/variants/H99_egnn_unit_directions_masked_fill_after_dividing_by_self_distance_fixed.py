# source: E(n)-equivariant GNN / point-cloud layers that build unit directions between all pairs of points (issues "NaN gradients although I masked the diagonal"): rel / dist is taken over every pair, the self-pairs (dist exactly 0) are then blanked with masked_fill, but the division's backward at those entries is 0/0, so the coordinates and the layer before them get nan gradients
# family: H
# expect: ok
# verify: the coordinate encoder's weight gradient after the backward is checked for non-finite values
# line: 24  (backward: 34)
# fix: (fixed version of H99_egnn_unit_directions_masked_fill_after_dividing_by_self_distance.py) divide by a distance that cannot be zero: rel / dist.clamp_min(1e-6).unsqueeze(-1)
import torch
import torch.nn as nn

torch.manual_seed(0)


class DirectionMessage(nn.Module):
    def __init__(self, n_feat=8, hidden=16):
        super().__init__()
        self.coords = nn.Linear(n_feat, 3)
        self.edge_mlp = nn.Sequential(nn.Linear(3, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, h):
        pos = self.coords(h)
        rel = pos.unsqueeze(1) - pos.unsqueeze(0)
        dist = torch.linalg.vector_norm(rel, dim=-1, keepdim=True)
        self_pair = torch.eye(h.shape[0], dtype=torch.bool).unsqueeze(-1)
        unit = (rel / dist.clamp_min(1e-6)).masked_fill(self_pair, 0.0)
        weights = self.edge_mlp(unit)
        return (weights * unit).sum(dim=1)


if __name__ == "__main__":
    layer = DirectionMessage()
    h = torch.randn(6, 8)
    target = torch.randn(6, 3)
    loss = (layer(h) - target).pow(2).mean()
    loss.backward()
    finite = bool(torch.isfinite(layer.coords.weight.grad).all())
    print("loss %.4f" % loss.item())
    print("MATCH" if finite else "MISMATCH: nan gradient reaches the coordinate encoder")
