# source: hand-written SimCLR NT-Xent losses that exponentiate the similarity matrix and drop the self-similarities with sim.fill_diagonal_(0) before the denominator sum (ExpBackward needs its output)
# family: B
# expect: ok
# line: 17  (backward: 42)
# fix: (fixed version of B60_ntxent_exp_similarity_fill_diagonal.py) mask out-of-place: sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), 0.0)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def nt_xent(z1, z2, temperature=0.5):
    n = z1.size(0)
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = torch.exp(z @ z.t() / temperature)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), 0.0)
    pos = torch.cat([torch.diagonal(sim, n), torch.diagonal(sim, -n)])
    return -torch.log(pos / sim.sum(dim=1)).mean()


class SimCLR(nn.Module):
    def __init__(self, d_in=32, feat=64, proj=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, feat), nn.ReLU(), nn.Linear(feat, feat))
        self.projector = nn.Sequential(nn.ReLU(), nn.Linear(feat, proj))

    def forward(self, x):
        return self.projector(self.encoder(x))


def augment(x):
    return x + 0.1 * torch.randn_like(x)


if __name__ == "__main__":
    model = SimCLR()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = torch.randn(8, 32)
    loss = nt_xent(model(augment(batch)), model(augment(batch)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("nt-xent", round(loss.item(), 4))
