# source: VQ-VAE training (van den Oord et al.: codebook loss ||sg[z_e] - e||^2 + beta ||z_e - sg[e]||^2), the shape behind 'codebook not updating / codebook collapse' reports on VQ-VAE re-implementations: the codebook term is written with the stop-gradient on the codes instead of the encoder output, so both terms detach the codebook and it never gets a gradient
# family: H
# expect: silent
# verify: the codebook's .grad after the backward: None means the codebook never trains
# line: 25
# fix: put the stop-gradient on the encoder output in the codebook term: codebook_loss = F.mse_loss(z_q, z_e.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes=16, dim=4, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, dim)
        self.codebook.weight.data.uniform_(-1.0 / num_codes, 1.0 / num_codes)
        self.beta = beta

    def forward(self, z_e):
        flat = z_e.permute(0, 2, 1).reshape(-1, z_e.shape[1])
        idx = torch.cdist(flat, self.codebook.weight).argmin(dim=1)
        z_q = self.codebook(idx).view(z_e.shape[0], z_e.shape[2], -1).permute(0, 2, 1)
        codebook_loss = F.mse_loss(z_q.detach(), z_e)
        commitment_loss = F.mse_loss(z_e, z_q.detach())
        z_st = z_e + (z_q - z_e).detach()
        return z_st, codebook_loss + self.beta * commitment_loss


if __name__ == "__main__":
    encoder, decoder = nn.Conv1d(2, 4, 3, padding=1), nn.Conv1d(4, 2, 3, padding=1)
    vq = VectorQuantizer()
    params = [*encoder.parameters(), *decoder.parameters(), *vq.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    x = torch.randn(8, 2, 12)
    for step in range(3):
        z_st, vq_loss = vq(encoder(x))
        loss = F.mse_loss(decoder(z_st), x) + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    g = vq.codebook.weight.grad
    print("MATCH" if g is not None and g.abs().sum() > 0 else "MISMATCH: the codebook got no gradient (%s)" % g)
