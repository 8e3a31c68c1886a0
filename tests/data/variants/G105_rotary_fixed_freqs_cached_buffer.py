# source: https://github.com/lucidrains/rotary-embedding-torch/issues/18 (the frequency cache is only safe when the frequencies are not learned); here the frequencies are a buffer and the cached table is reused across steps
# family: G
# expect: ok
# line: 23
# fix: none needed - the cached table is computed from a buffer that does not require grad, so it carries no graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FixedRotary(nn.Module):
    def __init__(self, dim, theta=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim)))
        self._cache = {}

    def forward(self, seq_len):
        if seq_len not in self._cache:
            t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq).repeat_interleave(2, dim=-1)
            self._cache[seq_len] = (freqs.cos(), freqs.sin())
        return self._cache[seq_len]


def rotate_half(x):
    x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-1)
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class RotaryAttention(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.rotary = FixedRotary(dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        cos, sin = self.rotary(x.shape[1])
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        return self.out(torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1) @ v)


if __name__ == "__main__":
    model = RotaryAttention()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(4, 10, 16)
        loss = F.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
