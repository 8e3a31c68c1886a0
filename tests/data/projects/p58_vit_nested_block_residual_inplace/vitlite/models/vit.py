import torch
import torch.nn as nn

from .layers.block import Block


class VisionTransformer(nn.Module):
    def __init__(self, patch_dim=12, num_patches=4, embed_dim=16, depth=2, num_classes=5, drop_path_rate=0.1):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches, embed_dim) * 0.02)
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.Sequential(*[Block(embed_dim, drop_path=dpr[i]) for i in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x).mean(dim=1))
