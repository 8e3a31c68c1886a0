import torch.nn as nn

from .attention import Attention


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, dim=16, depth=2, num_heads=2, num_classes=4):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim, num_heads) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.blocks(x).mean(1))
