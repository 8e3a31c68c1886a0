# source: torch.nn.utils.spectral_norm's own scheme re-implemented in a GAN discriminator: u and v buffers are refreshed in place under torch.no_grad() every forward and cloned before they enter sigma, so D can be called on real and fake batches before a single backward
# family: G
# expect: ok
# line: 25, 26
# fix: none needed - the in-place buffer updates happen under no_grad on tensors that no saved graph holds (sigma uses clones), and the buffers never carry history into the next step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SNLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) / d_in ** 0.5)
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.register_buffer("u", F.normalize(torch.randn(d_out), dim=0))
        self.register_buffer("v", F.normalize(torch.randn(d_in), dim=0))

    def forward(self, x):
        W = self.weight
        if self.training:
            with torch.no_grad():
                self.v.copy_(F.normalize(W.t() @ self.u, dim=0))
                self.u.copy_(F.normalize(W @ self.v, dim=0))
        u, v = self.u.clone(), self.v.clone()
        sigma = torch.dot(u, W @ v)
        return F.linear(x, W / sigma, self.bias)


if __name__ == "__main__":
    D = nn.Sequential(SNLinear(10, 32), nn.LeakyReLU(0.1), SNLinear(32, 1))
    opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.9))
    for step in range(3):
        real, fake = torch.randn(16, 10) + 1.0, torch.randn(16, 10)
        loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("hinge loss", loss.item())
