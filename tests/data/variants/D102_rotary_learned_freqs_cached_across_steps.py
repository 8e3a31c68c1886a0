# source: https://github.com/lucidrains/rotary-embedding-torch/issues/18 (caching the rotary frequencies while learned_freq=True: the second loss.backward() reads the cached tensor whose graph the first backward freed)
# family: D
# expect: error
# line: 22, 27  (backward: 63)
# fix: only cache the frequency table when the frequencies are not learned (or recompute it on every call)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, learned_freq=False, theta=10000.0):
        super().__init__()
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
        self.learned_freq = learned_freq
        self.freqs = nn.Parameter(freqs, requires_grad=learned_freq)
        self.cached_freqs = None

    def forward(self, seq_len):
        if self.cached_freqs is not None and seq_len <= self.cached_freqs.shape[0]:
            return self.cached_freqs[:seq_len]
        t = torch.arange(seq_len, dtype=self.freqs.dtype)
        freqs = torch.einsum("i,j->ij", t, self.freqs)
        freqs = torch.repeat_interleave(freqs, 2, dim=-1)
        self.cached_freqs = freqs
        return freqs


def rotate_half(x):
    x = x.unflatten(-1, (-1, 2))
    x1, x2 = x.unbind(dim=-1)
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rotary_emb(freqs, t):
    return t * freqs.cos() + rotate_half(t) * freqs.sin()


class Attention(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.rotary = RotaryEmbedding(dim, learned_freq=True)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        freqs = self.rotary(x.shape[1])
        q, k = apply_rotary_emb(freqs, q), apply_rotary_emb(freqs, k)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.out(attn @ v)


if __name__ == "__main__":
    model = Attention()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(4, 10, 16)
        loss = F.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
