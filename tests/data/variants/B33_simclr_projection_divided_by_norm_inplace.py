# source: contrastive-learning repos normalising projections by hand: `z /= z.norm(dim=1, keepdim=True)` (NormBackward needs z)
# family: B
# expect: error
# line: 22  (backward: 39)
# fix: z = z / z.norm(dim=1, keepdim=True) (or F.normalize(z, dim=1))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SimCLR(nn.Module):
    def __init__(self, d_in=20, d=16, proj=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, d), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, proj))

    def forward(self, x):
        z = self.projector(self.backbone(x))
        norm = z.norm(dim=1, keepdim=True)
        z /= norm
        return z


def nt_xent(z1, z2, t=0.5):
    z = torch.cat([z1, z2], 0)
    sim = z @ z.t() / t
    n = z1.size(0)
    sim = sim - 1e9 * torch.eye(2 * n)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


if __name__ == "__main__":
    model = SimCLR()
    x = torch.randn(6, 20)
    loss = nt_xent(model(x + 0.1 * torch.randn_like(x)), model(x + 0.1 * torch.randn_like(x)))
    loss.backward()
    print("loss", loss.item())
