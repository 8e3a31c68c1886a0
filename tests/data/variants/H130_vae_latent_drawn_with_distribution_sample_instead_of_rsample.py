# source: VAE and world-model code that builds q(z|x) as torch.distributions.Normal and draws z with .sample() (forum threads "encoder only learns the KL term", "sample vs rsample"): sample() runs under no_grad, so the reconstruction term never reaches the encoder
# family: H
# expect: silent
# verify: the reconstruction term's gradient on the encoder is asked for with allow_unused
# line: 26
# fix: draw a reparameterised sample: z = q.rsample()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence

torch.manual_seed(0)


class TinyVAE(nn.Module):
    def __init__(self, d=12, k=3):
        super().__init__()
        self.enc = nn.Linear(d, 2 * k)
        self.dec = nn.Linear(k, d)

    def forward(self, x):
        mu, log_std = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, log_std.exp())
        p = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl = kl_divergence(q, p).sum(-1).mean()
        z = q.sample()
        recon = F.mse_loss(self.dec(z), x)
        return recon, kl


if __name__ == "__main__":
    vae = TinyVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    recon, kl = vae(torch.randn(16, 12))
    g = torch.autograd.grad(recon, vae.enc.weight, retain_graph=True, allow_unused=True)[0]
    (recon + kl).backward()
    opt.step()
    print("MISMATCH: the reconstruction never reaches the encoder" if g is None else "MATCH")
