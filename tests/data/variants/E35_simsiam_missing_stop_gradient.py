# source: SimSiam / BYOL reimplementations that forget the stop-gradient on the target branch (D(p, z) must use z.detach())
# family: E
# expect: silent
# verify: the negative-cosine loss differentiates through z (the projector output of the other view); the encoder gradient is compared with the stop-gradient version and MISMATCH is printed
# line: 15  (backward: 40)
# fix: stop the gradient on the target: -F.cosine_similarity(p, z.detach(), dim=-1).mean()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def D(p, z):
    return -F.cosine_similarity(p, z, dim=-1).mean()


def D_ref(p, z):
    return -F.cosine_similarity(p, z.detach(), dim=-1).mean()


class SimSiam(nn.Module):
    def __init__(self, d_in=16, dim=8, pred_dim=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, dim))
        self.predictor = nn.Sequential(nn.Linear(dim, pred_dim), nn.ReLU(), nn.Linear(pred_dim, dim))

    def forward(self, x1, x2, criterion):
        z1, z2 = self.encoder(x1), self.encoder(x2)
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return criterion(p1, z2) / 2 + criterion(p2, z1) / 2


if __name__ == "__main__":
    model = SimSiam()
    x = torch.randn(8, 16)
    x1, x2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    loss = model(x1, x2, D)
    model.zero_grad()
    loss.backward()
    got = [p.grad.clone() for p in model.encoder.parameters()]
    ref = torch.autograd.grad(model(x1, x2, D_ref), list(model.encoder.parameters()))
    ok = all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: encoder gradient includes the target branch")
