# source: https://github.com/showlab/Olaf-World/issues/8 ("VQLAM: codebook never receives gradients (codebook loss uses the straight-through output)": codebook_loss = F.mse_loss(z_q, z_e.detach()) where z_q = x + (z - x).detach()); same bug in https://github.com/andylolu2/jax-vqvae-gpt/issues/2
# family: H
# expect: ok
# verify: the codebook's gradient is compared with autograd's gradient of the paper's codebook loss ||sg[z_e] - e||^2 computed on the lookup itself
# line: 42  (backward: 51)
# fix: (fixed version of H40_vq_codebook_loss_on_straight_through_output.py) compute the codebook loss on the codebook lookup, not on the straight-through output: F.mse_loss(z, z_e.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes=16, dim=4):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, dim)
        self.codebook.weight.data.uniform_(-1.0 / num_codes, 1.0 / num_codes)

    def forward(self, x):
        dist = torch.cdist(x, self.codebook.weight)
        indices = dist.argmin(dim=1)
        z = self.codebook(indices)
        z_q = x + (z - x).detach()  # straight-through: the decoder's gradient goes to the encoder
        return z_q, z, indices


class LatentActionModel(nn.Module):
    def __init__(self, obs_dim=8, dim=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, dim))
        self.vq = VectorQuantizer(dim=dim)
        self.decoder = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, obs_dim))

    def forward(self, obs):
        z_e = self.encoder(obs)
        z_q, z, indices = self.vq(z_e)
        return self.decoder(z_q), z_e, z, z_q


def vq_loss(z_e, z, z_q, beta=0.25):
    codebook_loss = F.mse_loss(z, z_e.detach())
    commitment_loss = F.mse_loss(z_e, z.detach())
    return codebook_loss + beta * commitment_loss


def train_step(model, opt, obs):
    recon, z_e, z, z_q = model(obs)
    loss = F.mse_loss(recon, obs) + vq_loss(z_e, z, z_q)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


if __name__ == "__main__":
    model = LatentActionModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        print("step", step, "loss", round(train_step(model, opt, torch.randn(32, 8)), 4))

    obs = torch.randn(32, 8)
    recon, z_e, z, z_q = model(obs)
    model.zero_grad()
    (F.mse_loss(recon, obs) + vq_loss(z_e, z, z_q)).backward(retain_graph=True)
    got = model.vq.codebook.weight.grad
    (ref,) = torch.autograd.grad(F.mse_loss(z, z_e.detach()), model.vq.codebook.weight)
    if got is not None and torch.allclose(got, ref, atol=1e-6):
        print("MATCH")
    else:
        print("MISMATCH: the codebook got", "no gradient" if got is None else "another gradient",
              "; the codebook loss should pull the codes towards the encoder outputs")
