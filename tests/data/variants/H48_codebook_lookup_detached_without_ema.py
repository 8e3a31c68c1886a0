# source: https://github.com/lucidrains/vector-quantize-pytorch/issues/84 ("How to use vq loss to update codebook?": with EMA off the codebook is only trained when learnable_codebook=True; otherwise the lookup uses a detached codebook) and issue #40 of the same repository
# family: H
# expect: silent
# verify: the codebook's gradient is compared with autograd's gradient of the codebook loss on a lookup that keeps its graph
# line: 45  (backward: 62)
# fix: with ema_update=False the codebook must be learnable: VectorQuantize(dim, codebook_size, ema_update=False, learnable_codebook=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.8, ema_update=True, learnable_codebook=False):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(codebook_size, dim))
        self.decay = decay
        self.ema_update = ema_update
        self.learnable_codebook = learnable_codebook

    @torch.no_grad()
    def update_ema(self, x, ind):
        onehot = F.one_hot(ind, self.embed.size(0)).type(x.dtype)
        counts = onehot.sum(0)[:, None].clamp(min=1.0)
        means = onehot.t() @ x / counts
        self.embed.lerp_(means, 1.0 - self.decay)

    def forward(self, x):
        embed = self.embed if self.learnable_codebook else self.embed.detach()
        ind = torch.cdist(x, embed).argmin(dim=-1)
        quantize = embed[ind]
        if self.training and self.ema_update:
            self.update_ema(x.detach(), ind)
        commit_loss = F.mse_loss(quantize.detach(), x)
        codebook_loss = F.mse_loss(quantize, x.detach())
        quantize = x + (quantize - x).detach()
        return quantize, ind, commit_loss * 0.25 + codebook_loss


class Tokenizer(nn.Module):
    def __init__(self, din=10, dim=4, codebook_size=16):
        super().__init__()
        self.enc = nn.Linear(din, dim)
        self.vq = VectorQuantize(dim, codebook_size, ema_update=False)
        self.dec = nn.Linear(dim, din)

    def forward(self, x):
        q, ind, vq_loss = self.vq(self.enc(x))
        return self.dec(q), vq_loss


if __name__ == "__main__":
    model = Tokenizer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    start = model.vq.embed.detach().clone()
    for step in range(3):
        x = torch.randn(32, 10)
        recon, vq_loss = model(x)
        loss = F.mse_loss(recon, x) + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4), "codebook moved", (model.vq.embed - start).abs().max().item())

    x = torch.randn(32, 10)
    model.zero_grad()
    recon, vq_loss = model(x)
    (F.mse_loss(recon, x) + vq_loss).backward()
    got = model.vq.embed.grad
    z = model.enc(x).detach()
    ind = torch.cdist(z, model.vq.embed.detach()).argmin(dim=-1)
    (ref,) = torch.autograd.grad(F.mse_loss(model.vq.embed[ind], z), model.vq.embed)
    if got is not None and torch.allclose(got, ref, atol=1e-6):
        print("MATCH")
    else:
        print("MISMATCH: the codebook got", "no gradient" if got is None else "another gradient", "and no EMA update either")
