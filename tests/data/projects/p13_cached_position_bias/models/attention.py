"""Window attention with a continuous position bias (an MLP over relative coordinates, as in
Swin Transformer V2), computed once and cached on the module."""
import torch
import torch.nn as nn


def relative_coords(n):
    pos = torch.arange(n, dtype=torch.float32)
    rel = pos[:, None] - pos[None, :]
    return torch.stack([rel, rel.abs()], dim=-1) / n


class WindowAttention(nn.Module):
    def __init__(self, dim, heads, tokens):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, heads))
        self.register_buffer("coords", relative_coords(tokens))
        self._bias = None

    def relative_bias(self):
        if self._bias is None:
            self._bias = self.cpb_mlp(self.coords).permute(2, 0, 1)
        return self._bias

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * self.scale + self.relative_bias().unsqueeze(0)
        out = attn.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(B, N, C))
