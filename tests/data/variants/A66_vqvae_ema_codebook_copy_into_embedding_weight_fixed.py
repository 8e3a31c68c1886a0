# source: VQ-VAE-2 / "VectorQuantizerEMA" ports (rosinality keeps the codebook in a buffer and writes embed.data) that keep the codebook in an nn.Embedding and copy the EMA estimate into embedding.weight after the no_grad block
# family: A
# expect: ok
# line: 34
# fix: (fixed version of A66_vqvae_ema_codebook_copy_into_embedding_weight.py) do the copy inside the `with torch.no_grad():` block (or register the codebook as a buffer / requires_grad_(False))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_embeddings=32, dim=8, decay=0.99, eps=1e-5):
        super().__init__()
        self.decay, self.eps = decay, eps
        self.embedding = nn.Embedding(num_embeddings, dim)
        self.register_buffer("cluster_size", torch.zeros(num_embeddings))
        self.register_buffer("embed_avg", self.embedding.weight.detach().clone())

    def forward(self, z):
        flat = z.reshape(-1, z.size(-1))
        codebook = self.embedding.weight
        dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ codebook.t() + codebook.pow(2).sum(1)
        idx = dist.argmin(1)
        onehot = F.one_hot(idx, codebook.size(0)).type(flat.dtype)
        if self.training:
            with torch.no_grad():
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                self.embed_avg.mul_(self.decay).add_(onehot.t() @ flat, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + self.eps) / (n + codebook.size(0) * self.eps) * n
                new_codebook = self.embed_avg / size.unsqueeze(1)
                self.embedding.weight.copy_(new_codebook)
        quant = self.embedding(idx).view_as(z)
        commit = F.mse_loss(z, quant.detach())
        quant = z + (quant - z).detach()
        return quant, commit


class TinyVQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8))
        self.vq = VectorQuantizerEMA()
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 20))

    def forward(self, x):
        q, commit = self.vq(self.enc(x))
        return self.dec(q), commit


if __name__ == "__main__":
    model = TinyVQVAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(16, 20)
        recon, commit = model(x)
        loss = F.mse_loss(recon, x) + 0.25 * commit
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
