import torch.nn as nn

from .attention import WindowAttention


class Block(nn.Module):
    def __init__(self, dim, heads, tokens):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, heads, tokens)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, dim=16, depth=1, heads=2, tokens=9, num_classes=4):
        super().__init__()
        self.embed = nn.Linear(4, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, tokens) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, patches):
        return self.head(self.blocks(self.embed(patches)).mean(dim=1))
