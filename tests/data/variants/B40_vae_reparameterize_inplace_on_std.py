# source: pytorch/examples VAE reparameterize (std = logvar.mul(0.5).exp_(); eps.mul(std).add_(mu)) "optimised" to reuse the std buffer: std.mul_(eps).add_(mu)
# family: B
# expect: error
# line: 27  (backward: 48)
# fix: keep the sample out-of-place: return eps.mul(std).add_(mu) (exp_ keeps std for its backward)
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

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = torch.randn_like(std)
        return std.mul_(eps).add_(mu)

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x)
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


if __name__ == "__main__":
    model = VAE()
    x = torch.rand(6, 20)
    recon, mu, logvar = model(x)
    loss = loss_function(recon, x, mu, logvar)
    loss.backward()
    print("loss", loss.item())
