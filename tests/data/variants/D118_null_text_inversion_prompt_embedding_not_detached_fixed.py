# source: https://github.com/tejank10/null-text-inversion/issues/1 ("I got RuntimeError: Trying to backward through the graph a second time" in null_text_inversion(); maintainer: "It could happen if some variable that's used during training (like text_embedding) is not detached before the training starts")
# family: D
# expect: ok
# line: 36  (backward: 49)
# fix: (fixed version of D118_null_text_inversion_prompt_embedding_not_detached.py) encode the prompt once without a graph: cond_embedding = text_encoder(prompt_ids).detach() (or under torch.no_grad())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextEncoder(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        return self.proj(self.tok(ids)).mean(dim=1)


class TinyUNet(nn.Module):
    def __init__(self, latent=12, cond=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent + cond + 1, 32), nn.SiLU(), nn.Linear(32, latent))

    def forward(self, z, t, emb):
        return self.net(torch.cat([z, emb.expand(z.shape[0], -1), t.expand(z.shape[0], 1)], dim=1))


if __name__ == "__main__":
    text_encoder, unet = TextEncoder(), TinyUNet()
    unet.requires_grad_(False)
    prompt_ids, null_ids = torch.tensor([[3, 7, 9, 1]]), torch.zeros(1, 4, dtype=torch.long)
    cond_embedding = text_encoder(prompt_ids).detach()
    uncond_embedding = text_encoder(null_ids).detach().clone().requires_grad_(True)
    optimizer = torch.optim.Adam([uncond_embedding], lr=1e-2)
    latent, target_prev = torch.randn(2, 12), torch.randn(2, 12)
    guidance = 7.5
    for i in range(3):
        t = torch.tensor([[1.0 - i / 3]])
        noise_cond = unet(latent, t, cond_embedding)
        noise_uncond = unet(latent, t, uncond_embedding)
        noise_pred = noise_uncond + guidance * (noise_cond - noise_uncond)
        latents_prev = latent - 0.1 * noise_pred
        loss = F.mse_loss(latents_prev, target_prev)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("inner step", i, "loss", loss.item())
