# source: hand-written spectral-normalisation layers in GAN discriminators (SAGAN/SNGAN re-implementations) that store the power-iteration vector with `self.u = u` computed from the weight with grad enabled; the next forward's power iteration starts from a u that carries the previous step's freed graph
# family: D
# expect: ok
# line: 23, 27  (backward: 48)
# fix: (fixed version of D63_custom_spectral_norm_u_vector_keeps_graph.py) store the vector without history: self.u = u.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SNLinear(nn.Module):
    def __init__(self, d_in, d_out, n_power_iterations=1):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) / d_in ** 0.5)
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.n_power_iterations = n_power_iterations
        self.register_buffer("u", F.normalize(torch.randn(d_out), dim=0))

    def forward(self, x):
        W = self.weight
        u = self.u
        for _ in range(self.n_power_iterations):
            v = F.normalize(W.t() @ u, dim=0)
            u = F.normalize(W @ v, dim=0)
        self.u = u.detach()
        sigma = torch.dot(u, W @ v)
        return F.linear(x, W / sigma, self.bias)


class Discriminator(nn.Module):
    def __init__(self, d=10):
        super().__init__()
        self.net = nn.Sequential(SNLinear(d, 32), nn.LeakyReLU(0.1), SNLinear(32, 1))

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    D = Discriminator()
    opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    for step in range(3):
        real, fake = torch.randn(16, 10) + 1.0, torch.randn(16, 10)
        loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("hinge loss", loss.item())
