# source: the VQ-VAE quantizer as fixed in https://github.com/andylolu2/jax-vqvae-gpt/issues/2 (codebook and commitment losses computed on the lookup before the straight-through estimator is applied) and in https://github.com/ritheshkumar95/pytorch-vqvae/issues/7
# family: G
# expect: ok
# line: 24
# fix: none needed - the codebook loss uses the lookup z, the straight-through output only feeds the decoder
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Quantize(nn.Module):
    def __init__(self, num_codes=16, dim=4, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, dim)
        self.beta = beta

    def forward(self, z_e):
        idx = torch.cdist(z_e, self.codebook.weight).argmin(dim=1)
        z = self.codebook(idx)
        codebook_loss = F.mse_loss(z, z_e.detach())
        commitment_loss = F.mse_loss(z_e, z.detach())
        z_q = z_e + (z - z_e).detach()
        return z_q, codebook_loss + self.beta * commitment_loss


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        self.quant = Quantize()
        self.dec = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        z_q, vq_loss = self.quant(self.enc(x))
        return self.dec(z_q), vq_loss


if __name__ == "__main__":
    model = VQVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(32, 8)
        recon, vq_loss = model(x)
        loss = F.mse_loss(recon, x) + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
    grads = {n: p.grad for n, p in model.named_parameters()}
    print("MATCH" if all(g is not None and g.abs().sum() > 0 for g in grads.values()) else "MISMATCH: a parameter got no gradient")
