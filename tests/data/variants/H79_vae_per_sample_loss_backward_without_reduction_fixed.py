# source: the VAE loss of the PyTorch examples (examples/vae: BCE + KLD) rewritten per sample, the shape behind the common report "grad can be implicitly created only for scalar outputs": reconstruction summed over features with reduction='none' plus the KL term per sample is one value per sample, and loss.backward() raises
# family: H
# expect: ok
# line: 28  (backward: 39)
# fix: (fixed version of H79_vae_per_sample_loss_backward_without_reduction.py) reduce over the batch before the backward: return (recon + kld).mean()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d=20, z=4):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Linear(z, d)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return torch.sigmoid(self.dec(z)), mu, logvar


def vae_loss(x_hat, x, mu, logvar):
    recon = F.binary_cross_entropy(x_hat, x, reduction="none").sum(dim=1)
    kld = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
    return (recon + kld).mean()


if __name__ == "__main__":
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.rand(16, 20)
        x_hat, mu, logvar = model(x)
        loss = vae_loss(x_hat, x, mu, logvar)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.3f" % loss.item())
