# source: VQ-VAE re-implementations that look codes up with F.embedding over the codebook weight (issues "codebook never updates / all codes dead"): the table is passed as weight.detach(), so the codebook term mse(z_q, z.detach()) reaches no parameter and the codebook never trains
# family: H
# expect: silent
# verify: the codebook is compared before and after the SGD steps
# line: 21  (backward: 35)
# fix: look up in the live table: z_q = F.embedding(idx, self.codes.weight)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Quantizer(nn.Module):
    def __init__(self, k=16, d=4):
        super().__init__()
        self.codes = nn.Embedding(k, d)

    def forward(self, z):
        idx = torch.cdist(z, self.codes.weight).argmin(-1)
        z_q = F.embedding(idx, self.codes.weight.detach())
        vq_loss = F.mse_loss(z_q, z.detach()) + 0.25 * F.mse_loss(z, z_q.detach())
        return z + (z_q - z).detach(), vq_loss


if __name__ == "__main__":
    enc, dec, vq = nn.Linear(6, 4), nn.Linear(4, 6), Quantizer()
    opt = torch.optim.SGD([*enc.parameters(), *dec.parameters(), *vq.parameters()], lr=0.1)
    x = torch.randn(32, 6)
    start = vq.codes.weight.detach().clone()
    for _ in range(3):
        z_q, vq_loss = vq(enc(x))
        loss = F.mse_loss(dec(z_q), x) + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())
    print("MISMATCH: the codebook never moved" if torch.equal(start, vq.codes.weight.detach()) else "MATCH")
