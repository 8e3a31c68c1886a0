# source: https://github.com/pytorch/examples/blob/main/vae/main.py (older revision: std = logvar.mul(0.5).exp_(); eps = torch.randn_like(std); return eps.mul(std).add_(mu))
# family: G
# expect: ok
# line: 21, 23  (backward: 37)
# fix: none needed - exp_ runs on the fresh output of mul(0.5) and keeps std for its backward; std is only read afterwards (eps.mul(std) is out-of-place) and add_ rewrites the mul output, which no backward saved
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d=20, h=16, z=4):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc21, self.fc22 = nn.Linear(h, z), nn.Linear(h, z)
        self.fc3, self.fc4 = nn.Linear(z, h), nn.Linear(h, d)

    def reparameterize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = torch.randn_like(std)
        return eps.mul(std).add_(mu)

    def forward(self, x):
        h1 = F.relu(self.fc1(x))
        mu, logvar = self.fc21(h1), self.fc22(h1)
        z = self.reparameterize(mu, logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


if __name__ == "__main__":
    model = VAE()
    x = torch.rand(6, 20)
    recon, mu, logvar = model(x)
    loss = F.binary_cross_entropy(recon, x, reduction="sum") - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss.backward()
    print("loss", loss.item())
