# source: https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html (a non-scalar tensor's backward takes gradient=; here per-sample VAE losses are weighted by importance weights passed as the gradient)
# family: G
# expect: ok
# line: 33
# fix: none needed - the per-sample loss vector is back-propagated with explicit weights
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d=20, z=4):
        super().__init__()
        self.enc, self.dec = nn.Linear(d, 2 * z), nn.Linear(z, d)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return torch.sigmoid(self.dec(z)), mu, logvar


if __name__ == "__main__":
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x, weights = torch.rand(16, 20), torch.rand(16)
        x_hat, mu, logvar = model(x)
        recon = F.binary_cross_entropy(x_hat, x, reduction="none").sum(dim=1)
        loss = recon - 0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
        opt.zero_grad()
        loss.backward(gradient=weights / weights.sum())
        opt.step()
    ok = all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    print("MATCH" if ok else "MISMATCH: a parameter got no finite gradient")
