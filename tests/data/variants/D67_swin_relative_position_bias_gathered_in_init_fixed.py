# source: Swin-style window attention re-implementations that gather the relative-position bias table once in __init__ (self.rel_bias = table[index]...) to "save time"; the cached bias holds the indexing graph, which the first training step's backward frees
# family: D
# expect: ok
# line: 28  (backward: 42)
# fix: (fixed version of D67_swin_relative_position_bias_gathered_in_init.py) gather the bias from the table inside forward (the parameter stays in __init__, the indexing moves to forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WindowAttention(nn.Module):
    def __init__(self, dim=16, window=3, heads=2):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.rel_table = nn.Parameter(torch.zeros((2 * window - 1) ** 2, heads))
        nn.init.trunc_normal_(self.rel_table, std=0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("rel_index", rel[..., 0] * (2 * window - 1) + rel[..., 1])

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).view(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        rel_bias = self.rel_table[self.rel_index.view(-1)].view(N, N, self.heads).permute(2, 0, 1)
        attn = (q @ k.transpose(-2, -1)) * self.scale + rel_bias.unsqueeze(0)
        out = (attn.softmax(-1) @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(out)


if __name__ == "__main__":
    block = WindowAttention()
    head = nn.Linear(16, 4)
    opt = torch.optim.AdamW(list(block.parameters()) + list(head.parameters()), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(5, 9, 16), torch.randint(0, 4, (5,))
        loss = F.cross_entropy(head(block(x).mean(1)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
